// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * hostile-sparse: an 8 TiB MAP_NORESERVE mapping named in two halves,
 * "sparse-low" and "sparse-high", with one page resident in each: a
 * reader whose cost follows address space instead of resident memory
 * takes minutes.  Prints "ready".
 */
#include <sys/mman.h>

#include "hostile.h"

#define SPAN	(8ULL << 40)

int main(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *p;

	p = mmap(NULL, SPAN, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		hostile_skip("no 8 TiB of address space: %s", strerror(errno));
	/* One page each, not a huge page, whatever the THP setting. */
	if (madvise(p, SPAN, MADV_NOHUGEPAGE))
		hostile_fail("madvise", -errno);
	p[0] = 1;
	p[SPAN - page] = 1;
	hostile_name(p, SPAN / 2, "sparse-low");
	hostile_name(p + SPAN / 2, SPAN / 2, "sparse-high");
	hostile_ready("page=%zu", page);
}
