// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit memlock [SIZE]: the RLIMIT_MEMLOCK budget of this shell's children
 * and whether locking SIZE more bytes on fault would fit.
 */
#include <errno.h>
#include <limits.h>
#include <string.h>
#include <unistd.h>

#include "mmkit.h"
#include "cli.h"

static void print_kib(const char *what, unsigned long long bytes)
{
	if (bytes == MMKIT_MEMLOCK_UNLIMITED)
		printf("%-8s unlimited\n", what);
	else
		printf("%-8s %llu KiB\n", what, bytes / 1024);
}

int cmd_memlock(const struct cli_args *a)
{
	unsigned long long size = 0, page = (unsigned long long)sysconf(_SC_PAGESIZE);
	struct mmkit_memlock m;
	int ret;

	if (a->n) {
		ret = cli_parse_size(a->operand[0], &size);
		if (ret == -ERANGE || (!ret && size > ULLONG_MAX - (page - 1))) {
			cli_error("memlock: '%s' is more bytes than an address space holds",
				  a->operand[0]);
			return CLI_EXIT_USAGE;
		}
		if (ret) {
			cli_error("memlock: '%s' is not a SIZE: " CLI_SIZE_FORMS, a->operand[0]);
			return CLI_EXIT_USAGE;
		}
	}
	ret = mmkit_memlock_check(NULL, 0, &m);
	if (ret) {
		cli_error("memlock: %s", strerror(-ret));
		return CLI_EXIT_FAIL;
	}
	print_kib("limit", m.limit);
	print_kib("locked", m.locked);
	if (m.exempt)
		printf("exempt   yes (CAP_IPC_LOCK: the limit does not apply)\n");
	if (!size)
		return CLI_EXIT_OK;
	/*
	 * The kernel locks whole pages and compares whole pages with the
	 * limit (mm/mlock.c): SIZE is charged rounded up to pages, and a
	 * limit that is not a whole number of pages is one rounded down.
	 */
	m.needed = (size + page - 1) / page * page;
	if (m.exempt || m.limit == MMKIT_MEMLOCK_UNLIMITED ||
	    (m.locked <= m.limit && m.needed <= m.limit / page * page - m.locked)) {
		printf("%llu KiB more fits\n", m.needed / 1024);
		return CLI_EXIT_OK;
	}
	cli_error("locking %llu KiB (%llu pages) needs %llu KiB, limit is %llu KiB, "
		  "%llu KiB already locked", m.needed / 1024, m.needed / page,
		  m.needed / 1024 + m.locked / 1024, m.limit / 1024, m.locked / 1024);
	return CLI_EXIT_FAIL;
}
