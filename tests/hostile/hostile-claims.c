// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * hostile-claims [N]: N registries (100 if not given), each a sparse memfd
 * named like the library's whose header claims CLAIMED entries, all zero
 * (start == end: each dropped as invalid).  A reader that allocated what a
 * header claims, counted only the entries it kept and read each registry
 * before looking at its deadline spent 96 MiB and a read of as much on
 * each (11.9 s and 100 MiB for 100 of them).  The files cost this process
 * nothing: their pages are holes.  Prints "ready".
 */
#include "hostile.h"
#include "../names-registry.h"

/* Under the reader's bound of 2^20 entries in all: the first is read. */
#define CLAIMED		1000000u

int main(int argc, char **argv)
{
	struct mmkit__registry_header h = registry_forged_header(CLAIMED, 2);
	int n = argc > 1 ? atoi(argv[1]) : 100, i, fd = 2;

	for (i = 0; i < n; i++) {
		fd = registry_forge(&h, NULL, 0, fd);
		if (fd < 0)
			hostile_fail("writing a registry", -errno);
	}
	hostile_ready("registries=%d claimed=%u", n, CLAIMED);
}
