// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit bench NAME [ARGS...]: runs the benchmark program bench-NAME with ARGS.  The
 * benchmarks link the peers they compare against (libsodium, OpenSSL), so
 * they are separate programs: next to this binary in a build tree
 * (bench/), else in MMKIT_BENCH_DIR or the installed libexec directory.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static char help_option[] = "--help";

static int name_ok(const char *name)
{
	return *name && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(name);
}

/* Runs @dir/bench-@name with @argv (argv[0] is replaced); returns -errno if it cannot. */
static int try_exec(const char *dir, const char *name, char **argv)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/bench-%s", dir, name) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	if (access(path, X_OK))
		return -errno;
	argv[0] = path;
	execv(path, argv);
	return -errno;
}

int cmd_bench(const struct cli_args *a)
{
	const char *env = getenv("MMKIT_BENCH_DIR"), *name = a->operand[0];
	char self[PATH_MAX];
	int i;

	if (!name_ok(name)) {
		cli_error("bench: '%s' is not a benchmark name (lock, names, pac, refpage, secret, sodium)", name);
		return CLI_EXIT_USAGE;
	}
	/* Every mmkit command takes -h for --help; the benchmarks know --help. */
	for (i = 1; i < a->n; i++)
		if (!strcmp(a->operand[i], "-h"))
			a->operand[i] = help_option;
	if (env && *env)
		try_exec(env, name, a->operand);
	if (!cli_self_dir(self, sizeof(self) - 16)) {
		strcat(self, "/bench");
		try_exec(self, name, a->operand);
	}
	try_exec(MMKIT_LIBEXECDIR, name, a->operand);
	cli_error("bench: no benchmark '%s' (looked for bench-%s in MMKIT_BENCH_DIR, "
		  "beside mmkit in bench/, and in %s)", name, name, MMKIT_LIBEXECDIR);
	return CLI_EXIT_USAGE;
}
