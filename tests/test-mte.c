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
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#define GRANULE		16
#define TAGGED		8	/* granules 0..7 get tags 1..8 */

static unsigned char *with_tag(const void *p, unsigned long tag)
{
	return (unsigned char *)(((unsigned long)p & ~(0xfUL << 56)) | tag << 56);
}

/*
 * STG and LDG as encoded words, with the address in x0 for both operands:
 * the program stays plain armv8-a (the assembler takes the mnemonics only
 * for armv8.5-a+memtag).  STG x0, [x0] sets the tag of the granule at x0
 * to x0's tag; LDG x0, [x0] replaces x0's tag bits with the granule's tag.
 */
static void set_tag(const void *tagged)
{
	register const void *x0 __asm__("x0") = tagged;

	__asm__ volatile(".inst 0xd9200800" : : "r"(x0) : "memory");
}

static unsigned long get_tag(const void *p)
{
	register const void *x0 __asm__("x0") = p;

	__asm__ volatile(".inst 0xd9600000" : "+r"(x0) : : "memory");
	return ((unsigned long)x0 >> 56) & 0xf;
}

static void on_segv(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	_exit(si->si_code == SEGV_MTESERR ? 0 : 10 + si->si_code);
}

/* In a child: a load through tag 0xf of a granule tagged 1 must fault. */
static void load_wrong_tag(void *granule)
{
	struct sigaction sa = { .sa_sigaction = on_segv, .sa_flags = SA_SIGINFO };

	if (sigaction(SIGSEGV, &sa, NULL))
		_exit(3);
	*(volatile unsigned char *)with_tag(granule, 0xf);
	_exit(4);
}

static void test_granules(void)
{
	unsigned char *page;
	int i, status;

	page = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE | PROT_MTE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		T_FAIL("mmap(PROT_MTE) with HWCAP2_MTE: %s", strerror(errno));

	T_CASE("tags 1..8 set on granules 0..7 read back granule by granule");
	for (i = 0; i < TAGGED; i++)
		set_tag(with_tag(page + i * GRANULE, i + 1));
	for (i = 0; i < TAGGED; i++)
		if (get_tag(page + i * GRANULE) != (unsigned long)i + 1)
			T_FAIL("granule %d has tag %lu, expected %d (tags kept per page, "
			       "not per granule: QEMU before 8.0?)",
			       i, get_tag(page + i * GRANULE), i + 1);
	T_EQ(get_tag(page + TAGGED * GRANULE), 0);

	T_CASE("stores and loads through the right tag work");
	for (i = 0; i < TAGGED; i++)
		*with_tag(page + i * GRANULE, i + 1) = 0xa0 + i;
	for (i = 0; i < TAGGED; i++)
		T_EQ(*with_tag(page + i * GRANULE, i + 1), 0xa0 + i);

	T_CASE("a load through a wrong tag faults with SEGV_MTESERR");
	status = t_in_child(load_wrong_tag, page);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		T_FAIL("wrong-tag load: %s %d (0: SEGV_MTESERR; 4: no fault; 10+: other si_code)",
		       WIFEXITED(status) ? "exit" : "signal",
		       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	munmap(page, getpagesize());
}

int main(void)
{
	if (!(getauxval(AT_HWCAP2) & HWCAP2_MTE))
		T_SKIP("no MTE: HWCAP2_MTE is not set (CPU, emulator without mte=on, "
		       "or kernel without CONFIG_ARM64_MTE)");
	/* Tagged addresses in system calls, and tag-check faults taken at once. */
	if (prctl(PR_SET_TAGGED_ADDR_CTRL, PR_TAGGED_ADDR_ENABLE | PR_MTE_TCF_SYNC |
		  (0xfffeUL << PR_MTE_TAG_SHIFT), 0, 0, 0))
		T_FAIL("PR_SET_TAGGED_ADDR_CTRL with HWCAP2_MTE: %s", strerror(errno));
	test_granules();
	return T_EXIT_PASS;
}
#else
int main(void)
{
	T_SKIP("memory tagging (MTE) is an arm64 feature; this is not arm64");
}
#endif
