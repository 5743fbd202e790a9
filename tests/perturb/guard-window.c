// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * For tests/test-perturb-protect.sh: a 1 MiB posix_memalign() block with
 * a PROT_NONE page (a guard) in its middle, given to mlock(2) or
 * madvise(2), which the perturb shim makes anonymous memory first.  With
 * prot-spy.so preloaded after the shim, prints how many times the guard
 * was made readable meanwhile: under glibc a read of it faults at every
 * moment, so that must be 0.  Exits 2 if the spy is not there.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#define SIZE	(1UL << 20)

int main(int argc, char **argv)
{
	void (*arm)(void *, size_t) = (void (*)(void *, size_t))dlsym(RTLD_DEFAULT, "prot_spy_arm");
	unsigned long (*count)(void) = (unsigned long (*)(void))dlsym(RTLD_DEFAULT,
								      "prot_spy_count");
	size_t page = (size_t)getpagesize();
	unsigned char *p, *guard;
	void *mem;
	int ret;

	if (argc != 2 || !arm || !count || posix_memalign(&mem, page, SIZE)) {
		fprintf(stderr, "usage: guard-window mlock|dontfork, prot-spy.so preloaded\n");
		return 2;
	}
	p = mem;
	memset(p, 1, SIZE);
	guard = p + SIZE / 2;
	if (mprotect(guard, page, PROT_NONE))
		return 2;
	arm(guard, page);
	ret = !strcmp(argv[1], "mlock") ? mlock(p, SIZE) : madvise(p, SIZE, MADV_DONTFORK);
	arm(NULL, 0);
	printf("%s: %s; the guard page made readable %lu times\n", argv[1],
	       ret ? strerrorname_np(errno) : "0", count());
	return count() ? 1 : 0;
}
