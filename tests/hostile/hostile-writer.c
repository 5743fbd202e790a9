// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * hostile-writer: a thread names 4 pages "busy-a", then the first 2 of them
 * "busy-b", and again, without pause, for as long as the process lives,
 * while 4 other pages keep the name "busy-steady": a reader must get a
 * consistent registry anyway (busy-a on 4 pages, or busy-b and busy-a on
 * 2 each).  Behind them, 20,000 pages named "busy-even" and "busy-odd" in
 * turn (one VMA) make the registry large: the busy pages come first in
 * it, so each rename, adding or removing an entry, moves all the others
 * (seq odd the while) and each read takes long enough for renames to land
 * in it.  Prints "ready" once the
 * renaming runs.
 */
#include <pthread.h>
#include <sys/mman.h>

#include "hostile.h"

#define BACKGROUND	20000

static size_t len;
static char *busy;

static void *rename_forever(void *arg)
{
	unsigned long i;

	(void)arg;
	for (i = 0;; i++)
		hostile_name(busy, i % 2 ? len / 2 : len, i % 2 ? "busy-b" : "busy-a");
	return NULL;
}

int main(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), i;
	char *p, *steady, *bg;
	pthread_t t;
	int ret;

	len = 4 * page;
	/* busy, guard, steady, guard, background: guards keep the VMAs apart. */
	p = mmap(NULL, 4 * len + BACKGROUND * page, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED || mprotect(p + len, len, PROT_NONE) ||
	    mprotect(p + 3 * len, len, PROT_NONE))
		hostile_fail("mmap", -errno);
	busy = p;
	steady = p + 2 * len;
	bg = p + 4 * len;
	memset(busy, 1, len);
	memset(steady, 1, len);
	hostile_name(steady, len, "busy-steady");
	for (i = 0; i < BACKGROUND; i++)
		hostile_name(bg + i * page, page, i % 2 ? "busy-odd" : "busy-even");
	ret = pthread_create(&t, NULL, rename_forever, NULL);
	if (ret)
		hostile_fail("pthread_create", -ret);
	hostile_ready("len=%zu", len);
}
