/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * What the memory-tagging tests share (arm64 only): switching tag checks
 * on, and expecting a load through a wrong tag to fault.
 */
#ifndef MMKIT_TEST_MTE_CHECK_H
#define MMKIT_TEST_MTE_CHECK_H

#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "harness.h"
#include "mte.h"

/*
 * Skips without MTE; else turns on tagged addresses in system calls and
 * synchronous tag-check faults (SEGV_MTESERR at the faulting load).
 */
static inline void t_mte_enable(void)
{
	if (!(getauxval(AT_HWCAP2) & HWCAP2_MTE))
		T_MISSING("mte", "no MTE: HWCAP2_MTE is not set (CPU, emulator without mte=on, "
		       "or kernel without CONFIG_ARM64_MTE)");
	if (prctl(PR_SET_TAGGED_ADDR_CTRL, PR_TAGGED_ADDR_ENABLE | PR_MTE_TCF_SYNC |
		  (0xfffeUL << PR_MTE_TAG_SHIFT), 0, 0, 0))
		T_FAIL("PR_SET_TAGGED_ADDR_CTRL with HWCAP2_MTE: %s", strerror(errno));
}

/* A fresh anonymous PROT_MTE page, its tags all 0. */
static inline unsigned char *t_mte_page(void)
{
	unsigned char *page = mmap(NULL, getpagesize(), PROT_READ | PROT_WRITE | PROT_MTE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (page == MAP_FAILED)
		T_FAIL("mmap(PROT_MTE) with HWCAP2_MTE: %s", strerror(errno));
	return page;
}

static inline void t_mte_on_segv(int sig, siginfo_t *si, void *ctx)
{
	(void)sig;
	(void)ctx;
	_exit(si->si_code == SEGV_MTESERR ? 0 : 10 + si->si_code);
}

/* In a child: loads through @p, whose tag must be wrong. */
static inline void t_mte_load_in_child(void *p)
{
	struct sigaction sa = { .sa_sigaction = t_mte_on_segv, .sa_flags = SA_SIGINFO };

	if (sigaction(SIGSEGV, &sa, NULL))
		_exit(3);
	*(volatile unsigned char *)p;
	_exit(4);
}

/* A load through @p (a wrong tag) faults with SEGV_MTESERR. */
#define T_MTE_FAULTS(p) do {						\
	int st_ = t_in_child(t_mte_load_in_child, (p));			\
	if (!WIFEXITED(st_) || WEXITSTATUS(st_))			\
		T_FAIL("load through a wrong tag: %s %d (0: SEGV_MTESERR; " \
		       "4: no fault; 10+: other si_code)",		\
		       WIFEXITED(st_) ? "exit" : "signal",		\
		       WIFEXITED(st_) ? WEXITSTATUS(st_) : WTERMSIG(st_)); \
} while (0)

#endif /* MMKIT_TEST_MTE_CHECK_H */
