// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Memory tagging works per 16-byte granule.  The tagged reference pages
 * rest on it, and an emulator can get it wrong: QEMU before 8.0 stores one
 * tag per page (tags 1..8 written to granules 0..7 read back 7 8 7 8 ...),
 * so a tier on such an emulator would "pass" tagged tests meaninglessly.
 * With MTE (arm64, HWCAP2_MTE, run under QEMU by the kernel tier): tags
 * 1..8 set with STG on granules 0..7 of a PROT_MTE page read back with LDG
 * one by one, the granule after them keeps tag 0, a load through the right
 * tag works and one through a wrong tag faults with SEGV_MTESERR.
 * Elsewhere it skips with the reason.
 */
#include "harness.h"

#if defined(__aarch64__)
#include "mte-check.h"

#define TAGGED		8	/* granules 0..7 get tags 1..8 */

/* Granule @i of @page, through a pointer with tag @tag. */
static unsigned char *granule(unsigned char *page, int i, unsigned int tag)
{
	return mmkit__mte_with_tag(page + i * MMKIT_MTE_GRANULE, tag);
}

static void test_granules(void)
{
	unsigned char *page;
	int i;

	page = t_mte_page();

	T_CASE("tags 1..8 set on granules 0..7 read back granule by granule");
	for (i = 0; i < TAGGED; i++)
		mmkit__mte_set_tag(granule(page, i, i + 1));
	for (i = 0; i < TAGGED; i++)
		if (mmkit__mte_get_tag(granule(page, i, 0)) != (unsigned int)i + 1)
			T_FAIL("granule %d has tag %u, expected %d (tags kept per page, "
			       "not per granule: QEMU before 8.0?)",
			       i, mmkit__mte_get_tag(granule(page, i, 0)), i + 1);
	T_EQ(mmkit__mte_get_tag(granule(page, TAGGED, 0)), 0);

	T_CASE("stores and loads through the right tag work");
	for (i = 0; i < TAGGED; i++)
		*granule(page, i, i + 1) = 0xa0 + i;
	for (i = 0; i < TAGGED; i++)
		T_EQ(*granule(page, i, i + 1), 0xa0 + i);

	T_CASE("a load through a wrong tag faults with SEGV_MTESERR");
	T_MTE_FAULTS(granule(page, 0, 0xf));
	munmap(page, getpagesize());
}

int main(void)
{
	t_mte_enable();
	test_granules();
	return T_EXIT_PASS;
}
#else
int main(void)
{
	T_MISSING("mte", "memory tagging (MTE) is an arm64 feature; this is not arm64");
}
#endif
