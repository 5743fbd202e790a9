/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * Memory tagging (arm64 MTE) for the tagged reference pages: whether this
 * process can use it, and the tag of one 16-byte granule, read and set.
 * Not installed; the tests use it too.
 */
#ifndef MMKIT_MTE_H
#define MMKIT_MTE_H

#include <stddef.h>

/* Memory tags cover granules of 16 bytes. */
#define MMKIT_MTE_GRANULE	16

/* PROT_MTE of arm64's uapi: 0 elsewhere, where nothing maps tagged memory. */
#if defined(__aarch64__)
#define MMKIT_PROT_MTE		0x20
#else
#define MMKIT_PROT_MTE		0
#endif

/* 0 if the CPU and kernel tag memory (HWCAP2_MTE), else -EOPNOTSUPP and why. */
int mmkit__mte_available(char *why, size_t len);
/* @p with tag @tag (0-15) in its top byte. */
void *mmkit__mte_with_tag(const void *p, unsigned int tag);
/* The allocation tag of the granule at @p (PROT_MTE memory only). */
unsigned int mmkit__mte_get_tag(const void *p);
/* Sets the allocation tag of the granule at @p to the tag @p carries. */
void mmkit__mte_set_tag(const void *p);

#endif /* MMKIT_MTE_H */
