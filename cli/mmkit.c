// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/* The mmkit command: one subcommand per file of cli/. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

struct command {
	const char *name;
	const char *args;
	const char *what;
	int (*run)(int argc, char **argv);
};

static const struct command commands[] = {
	{ "probe", "[--json]", "what this kernel supports, which backend each feature uses, and why", cmd_probe },
	{ "maps", "PID [--json]", "memory of a process by name, like showmap: Size, Rss, Pss, Private_Dirty, Swap, Locked", cmd_maps },
	{ "secrets", "[--json]", "processes holding memfd_secret memory: fds, mappings, bytes", cmd_secrets },
	{ "memlock", "[SIZE]", "RLIMIT_MEMLOCK budget, and whether SIZE more fits", cmd_memlock },
	{ "bench", "NAME [ARGS...]", "run a benchmark: refpage, secret, names (NAME --help: its options)", cmd_bench },
};

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: mmkit COMMAND [ARGS...]\n\ncommands:\n");
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-8s %-15s %s\n", commands[i].name, commands[i].args, commands[i].what);
}

int main(int argc, char **argv)
{
	size_t i;

	if (argc < 2) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return CLI_EXIT_OK;
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	cli_error("unknown command '%s'", argv[1]);
	usage(stderr);
	return CLI_EXIT_USAGE;
}
