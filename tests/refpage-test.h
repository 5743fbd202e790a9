/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * What test-refpage and test-refpage-select share: the pattern their
 * objects repeat, its check, and one way to create an object of it.
 */
#ifndef MMKIT_TEST_REFPAGE_TEST_H
#define MMKIT_TEST_REFPAGE_TEST_H

#include <stdint.h>
#include <sys/mman.h>

#include "mmkit.h"
#include "harness.h"
#include "refpage-map.h"

#define NPAGES		64

/* The page size: each program's main sets it before the first case. */
static size_t page;
static const unsigned char pattern[16] = {
	0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04,
	0xa5, 0x5a, 0x00, 0xff, 0x10, 0x20, 0x30, 0x40,
};

/* 1 if every byte of [p, p + len) is the pattern of size @psz, repeating from each page. */
static inline int is_pattern(const unsigned char *p, size_t len, size_t psz)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != pattern[((uintptr_t)p + i) % psz])
			return 0;
	return 1;
}

static inline struct mmkit_refpage *create(unsigned int flag, size_t psz)
{
	struct mmkit_refpage *rp;
	int ret = mmkit_refpage_create(&rp, pattern, psz, flag);

	if (ret)
		T_FAIL("mmkit_refpage_create: %s", strerror(-ret));
	return rp;
}

#endif /* MMKIT_TEST_REFPAGE_TEST_H */
