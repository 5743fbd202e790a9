// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Memory tagging (arm64 MTE).  STG and LDG are emitted as encoded words
 * with the address in x0: the library stays plain armv8-a, and the
 * assembler takes the mnemonics only for armv8.5-a+memtag.  They run only
 * after mmkit__mte_available() said yes; elsewhere they are never called
 * (a tagged reference page cannot be created), and they do nothing.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/auxv.h>

#include "internal.h"
#include "mte.h"

#define TAG_SHIFT	56

void *mmkit__mte_with_tag(const void *p, unsigned int tag)
{
	return (void *)(((uintptr_t)p & ~((uintptr_t)0xf << TAG_SHIFT)) |
			(uintptr_t)(tag & 0xf) << TAG_SHIFT);
}

#if defined(__aarch64__)
#include <asm/hwcap.h>

int mmkit__mte_available(char *why, size_t len)
{
	if (sys_getauxval(AT_HWCAP2) & HWCAP2_MTE)
		return 0;
	snprintf(why, len, "no MTE: AT_HWCAP2 has no HWCAP2_MTE (CPU, emulator or kernel "
		 "without memory tagging)");
	return -EOPNOTSUPP;
}

/* LDG x0, [x0]: x0's tag bits become the granule's tag. */
unsigned int mmkit__mte_get_tag(const void *p)
{
	register const void *x0 __asm__("x0") = p;

	__asm__ volatile(".inst 0xd9600000" : "+r"(x0) : : "memory");
	return ((uintptr_t)x0 >> TAG_SHIFT) & 0xf;
}

/* STG x0, [x0]: the granule at x0 gets x0's tag. */
void mmkit__mte_set_tag(const void *p)
{
	register const void *x0 __asm__("x0") = p;

	__asm__ volatile(".inst 0xd9200800" : : "r"(x0) : "memory");
}
#else
int mmkit__mte_available(char *why, size_t len)
{
	snprintf(why, len, "memory tagging (MTE) is an arm64 feature; this is not arm64");
	return -EOPNOTSUPP;
}

unsigned int mmkit__mte_get_tag(const void *p)
{
	(void)p;
	return 0;
}

void mmkit__mte_set_tag(const void *p)
{
	(void)p;
}
#endif
