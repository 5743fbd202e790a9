// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * hostile-registry [distinct]: a registry of 60,000 entries, one per
 * one-page VMA, named "hostile-even" and "hostile-odd" in turn (with
 * "distinct": each its own name, "hostile-00000" on), reached through 10
 * descriptors (the registry's and 9 dups).  The pages are named while
 * they are one VMA (naming reads /proc/self/maps, which would be slow
 * with 60,000 VMAs), then split by making every other page read-only.
 * Needs vm.max_map_count above 60,000 and the VMAs this process has.
 * Prints "ready".
 */
#include <sys/mman.h>

#include "hostile.h"
#include "../names-registry.h"

#define PAGES	60000
#define FDS	10

int main(int argc, char **argv)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), i;
	int distinct = argc > 1 && !strcmp(argv[1], "distinct");
	char *p, name[32];
	int fd;

	p = mmap(NULL, PAGES * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		hostile_fail("mmap", -errno);
	for (i = 0; i < PAGES; i++) {
		if (distinct)
			snprintf(name, sizeof(name), "hostile-%05zu", i);
		else
			snprintf(name, sizeof(name), "%s", i % 2 ? "hostile-odd" : "hostile-even");
		hostile_name(p + i * page, page, name);
	}
	for (i = 1; i < PAGES; i += 2)
		if (mprotect(p + i * page, page, PROT_READ))
			hostile_fail("mprotect (is vm.max_map_count above 60,000?)", -errno);
	fd = registry_fd();
	if (fd < 0)
		hostile_fail("finding the registry", -ENOENT);
	for (i = 1; i < FDS; i++)
		if (dup(fd) < 0)
			hostile_fail("dup", -errno);
	hostile_ready("pages=%d", PAGES);
}
