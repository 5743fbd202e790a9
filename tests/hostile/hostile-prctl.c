// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * A flood of naming calls for mmkit run --names to answer: 16 threads
 * name the pages of one mapping, each its own name (hostile-flood-even and
 * -odd in turn, so that every page is an entry of its own), one page past
 * vm.max_map_count in all: the kernel would refuse the last with ENOMEM
 * (it cannot split the mapping further), and so must the supervisor, whose
 * memory is bounded that way.  Says how many calls got 0 and ENOMEM.
 */
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "hostile.h"

#define THREADS 16

static char *base;
static size_t page, pages;
static unsigned long named[THREADS], refused[THREADS], other[THREADS];

static void *flood(void *arg)
{
	size_t t = (size_t)(uintptr_t)arg, i;

	for (i = t; i < pages; i += THREADS) {
		long r = syscall(SYS_prctl, PR_SET_VMA, PR_SET_VMA_ANON_NAME, base + i * page, page,
				 i % 2 ? "hostile-flood-odd" : "hostile-flood-even");

		if (!r)
			named[t]++;
		else if (errno == ENOMEM)
			refused[t]++;
		else
			other[t]++;
	}
	return NULL;
}

int main(void)
{
	unsigned long max = 0, n = 0, e = 0, o = 0;
	pthread_t th[THREADS];
	FILE *f = fopen("/proc/sys/vm/max_map_count", "re");
	size_t t;

	if (!f || fscanf(f, "%lu", &max) != 1)
		hostile_skip("cannot read vm.max_map_count");
	fclose(f);
	page = (size_t)sysconf(_SC_PAGESIZE);
	pages = max + 1000;
	base = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS |
		    MAP_NORESERVE, -1, 0);
	if (base == MAP_FAILED)
		hostile_fail("mmap", -errno);
	for (t = 0; t < THREADS; t++)
		if (pthread_create(&th[t], NULL, flood, (void *)(uintptr_t)t))
			hostile_fail("pthread_create", -EAGAIN);
	for (t = 0; t < THREADS; t++) {
		pthread_join(th[t], NULL);
		n += named[t];
		e += refused[t];
		o += other[t];
	}
	hostile_ready("named=%lu enomem=%lu other=%lu max=%lu", n, e, o, max);
}
