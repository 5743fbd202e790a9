// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * lock-on-fault: locks a buffer page by page as it is touched, after
 * checking that RLIMIT_MEMLOCK allows it.
 *
 *   lock-on-fault [MIB]                      default 16
 *
 * Asks whether MIB more fit the limit and, if so, locks a MIB buffer on
 * fault; if not, prints by how much it would exceed the limit, as the
 * kernel would only have said ENOMEM.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>

#include "mmkit.h"

int main(int argc, char **argv)
{
	unsigned long mib = argc > 1 ? strtoul(argv[1], NULL, 10) : 16;
	size_t len = mib << 20;
	struct mmkit_memlock m;
	void *buf;
	int ret;

	if (argc > 2 || !mib || mib > 1 << 20) {
		fprintf(stderr, "usage: lock-on-fault [MIB]  (1 to 1048576)\n");
		return 2;
	}
	buf = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (buf == MAP_FAILED) {
		perror("lock-on-fault: mmap");
		return 1;
	}
	ret = mmkit_lock(buf, len, MMKIT_LOCK_ONFAULT);
	if (ret) {
		fprintf(stderr, "lock-on-fault: %s\n", mmkit_last_error());
		return 1;
	}
	mmkit_memlock_check(NULL, 0, &m);
	printf("%lu MiB locked on fault: %llu KiB charged to RLIMIT_MEMLOCK%s\n", mib,
	       m.locked >> 10, m.exempt ? " (exempt: CAP_IPC_LOCK)" : "");
	return mmkit_unlock(buf, len) ? 1 : 0;
}
