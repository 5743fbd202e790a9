// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * For tests/test-perturb-protect.sh, preloaded after the perturb shim: an
 * mprotect(2) that counts the calls giving read access to any page of the
 * range armed with prot_spy_arm(), so that guard-window.c can tell, at
 * once and every run, whether its unreadable page was ever made readable
 * (where another thread's read would not have faulted).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>

static uintptr_t armed_start, armed_end;
static unsigned long made_readable;

void prot_spy_arm(void *addr, size_t len);
unsigned long prot_spy_count(void);
int mprotect(void *addr, size_t len, int prot);

void prot_spy_arm(void *addr, size_t len)
{
	armed_start = (uintptr_t)addr;
	armed_end = armed_start + len;
}

unsigned long prot_spy_count(void)
{
	return made_readable;
}

int mprotect(void *addr, size_t len, int prot)
{
	static int (*next)(void *, size_t, int);
	uintptr_t start = (uintptr_t)addr;

	if (!next)
		next = (int (*)(void *, size_t, int))dlsym(RTLD_NEXT, "mprotect");
	if (!next)
		abort();
	if ((prot & PROT_READ) && start < armed_end && start + len > armed_start)
		made_readable++;
	return next(addr, len, prot);
}
