// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit memlock [SIZE]: the RLIMIT_MEMLOCK budget of this shell's children
 * and whether locking SIZE more bytes on fault would fit.
 */
#include <errno.h>
#include <string.h>

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
	unsigned long long size = 0;
	struct mmkit_memlock m;
	int ret;

	if (a->n && cli_parse_size(a->operand[0], &size)) {
		cli_error("memlock: '%s' is not a SIZE (a number of bytes with an optional K, M "
			  "or G: 4096, 64K, 1G)", a->operand[0]);
		return CLI_EXIT_USAGE;
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
	if (m.exempt || m.limit == MMKIT_MEMLOCK_UNLIMITED || m.locked + size <= m.limit) {
		printf("%llu KiB more fits\n", (size + 1023) / 1024);
		return CLI_EXIT_OK;
	}
	cli_error("locking %llu KiB needs %llu KiB, limit is %llu KiB, %llu KiB already locked",
		  (size + 1023) / 1024, (m.locked + size + 1023) / 1024, m.limit / 1024,
		  m.locked / 1024);
	return CLI_EXIT_FAIL;
}
