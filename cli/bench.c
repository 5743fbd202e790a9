// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit bench NAME [ARGS...]: runs the benchmark program bench-NAME.  The
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

static int name_ok(const char *name)
{
	return *name && strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == strlen(name);
}

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

int cmd_bench(int argc, char **argv)
{
	const char *env = getenv("MMKIT_BENCH_DIR");
	char self[PATH_MAX], *slash;
	ssize_t n;

	if (argc < 2 || !name_ok(argv[1])) {
		cli_error("bench: usage: mmkit bench NAME [ARGS...]  (NAME: refpage, secret, ...)");
		return CLI_EXIT_USAGE;
	}
	if (env && *env)
		try_exec(env, argv[1], argv + 1);
	n = readlink("/proc/self/exe", self, sizeof(self) - 16);
	if (n > 0) {
		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			strcpy(slash, "/bench");
			try_exec(self, argv[1], argv + 1);
		}
	}
	try_exec(MMKIT_LIBEXECDIR, argv[1], argv + 1);
	cli_error("bench: no benchmark '%s' (looked for bench-%s in MMKIT_BENCH_DIR, "
		  "beside mmkit in bench/, and in %s)", argv[1], argv[1], MMKIT_LIBEXECDIR);
	return CLI_EXIT_USAGE;
}
