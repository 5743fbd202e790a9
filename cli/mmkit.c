// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The mmkit command: one subcommand per file of cli/.  Options are parsed
 * here, from the table, so that every command answers --help, -h and
 * unknown options the same way.
 */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "mmkit.h"
#include "cli.h"
#include "fleet.h"

/*
 * The Makefile passes -DMMKIT_VERSION (its VERSION); a build without it
 * reports the version of the header it was compiled against.
 */
#ifndef MMKIT_VERSION
#define CLI_STRING(x)	#x
#define CLI_NUMBER(x)	CLI_STRING(x)
#define MMKIT_VERSION	CLI_NUMBER(MMKIT_VERSION_MAJOR) "." CLI_NUMBER(MMKIT_VERSION_MINOR) \
			"." CLI_NUMBER(MMKIT_VERSION_PATCH)
#endif

/* Command flags. */
#define TAKES_JSON	1	/* --json */
#define PASSES_REST	2	/* what follows the first operand is passed on untouched */
#define OWN_OPTIONS	4	/* all but a first --help or -h goes to the command untouched */

struct command {
	const char *name;
	const char *synopsis;	/* what follows the name */
	const char *what;	/* one line */
	const char *operands;	/* one "  NAME  meaning" line per operand */
	int min_operands, max_operands;
	unsigned int flags;
	int (*run)(const struct cli_args *a);
};

static const struct command commands[] = {
	{ "probe", "[--json]", "what this kernel supports, which backend each feature uses, and why",
	  "", 0, 0, TAKES_JSON, cmd_probe },
	{ "maps", "PID [--json]",
	  "memory of a process by name, like showmap: Size, Rss, Pss, Private_Dirty, Swap, Locked",
	  "  PID           the process, a positive number\n", 1, 1, TAKES_JSON, cmd_maps },
	{ "top", "[--by name|process] [--sort KEY] [--name GLOB] [--user USER] [--pid PID,...] [--json]",
	  "memory of every process that can be read, summed per name like smem -m (or per process)",
	  "  --by name|process\n"
	  "                one row per name (the default: [anon:NAME], file paths, [heap],\n"
	  "                [stack], [anon]...) with the processes mapping it, or one per\n"
	  "                process\n"
	  "  --sort KEY    pss (the default), size, rss, uss, swap, locked, mappings, and\n"
	  "                processes or name (per name), pid or command (per process)\n"
	  FLEET_OPTIONS_HELP,
	  0, INT_MAX, OWN_OPTIONS | TAKES_JSON, cmd_top },
	{ "export", "[--listen ADDR:PORT | --textfile PATH | --openmetrics] [--max-series N] "
	  "[--top-processes K] [--name GLOB] [--user USER] [--pid PID,...]",
	  "the figures of top as Prometheus/OpenMetrics metrics: stdout, a file, or HTTP /metrics",
	  "  --listen ADDR:PORT\n"
	  "                serve GET /metrics over HTTP (a numeric address:\n"
	  "                127.0.0.1:9977, [::1]:9977, :9977 for every address, port 0\n"
	  "                for a free one; systemd: the socket systemd passes);\n"
	  "                OpenMetrics 1.0 when the scraper's Accept asks for\n"
	  "                application/openmetrics-text\n"
	  "  --textfile PATH\n"
	  "                write PATH for node_exporter's textfile collector (a\n"
	  "                temporary file renamed over it) and exit\n"
	  "  --openmetrics OpenMetrics 1.0 on standard output (else the text format 0.0.4)\n"
	  "  --max-series N\n"
	  "                at most N series per per-name metric (500): the largest PSS\n"
	  "                first, the rest summed in name=\"[other]\"\n"
	  "  --top-processes K\n"
	  "                series per process for the K largest PSS (0)\n"
	  FLEET_OPTIONS_HELP,
	  0, INT_MAX, OWN_OPTIONS, cmd_export },
	{ "secrets", "[PID] [--json]",
	  "processes holding memfd_secret memory (all, or PID): fds, mappings, bytes",
	  "  PID           only this process, a positive number\n", 0, 1, TAKES_JSON, cmd_secrets },
	{ "memlock", "[SIZE]", "RLIMIT_MEMLOCK budget, and whether SIZE more fits",
	  "  SIZE          bytes, with an optional K, M, G or T (powers of 1024; KiB,\n"
	  "                MiB... too) and a fraction: 4096, 64K, 64MiB, 1.5G; counted\n"
	  "                in whole pages, as the kernel locks them\n",
	  0, 1, 0, cmd_memlock },
	{ "bench", "NAME [ARGS...]", "run a benchmark: lock, names, pac, refpage, secret, sodium",
	  "  NAME          lock, names, pac, refpage, secret or sodium\n"
	  "  ARGS          the benchmark's own options: mmkit bench NAME --help\n",
	  1, INT_MAX, PASSES_REST, cmd_bench },
	{ "run", "[OPTIONS] [--] PROGRAM [ARGS...]",
	  "run an unmodified program with its secret heap, its malloc or its names on mmkit",
	  "  --secret-heap=HEAPS\n"
	  "                sodium (libsodium's sodium_malloc), openssl (OpenSSL's secure\n"
	  "                heap) or sodium,openssl: on secret memory (memfd_secret, or\n"
	  "                the announced fallback); openssl-or-malloc: openssl, but what\n"
	  "                it cannot serve (RLIMIT_MEMLOCK) comes from OpenSSL's plain\n"
	  "                heap, counted (openssl alone says why and returns NULL)\n"
	  "  --perturb=BYTE\n"
	  "                MALLOC_PERTURB_=BYTE (1 to 255, or 0xNN): fresh memory reads\n"
	  "                as BYTE^0xff, freed memory as BYTE; large blocks are\n"
	  "                reference pages, paid for only when touched\n"
	  "  --stats       each shim prints one line of statistics on stderr at exit\n"
	  "  --names       keeps the names PROGRAM gives its memory (prctl\n"
	  "                PR_SET_VMA_ANON_NAME: Go 1.25+, glibc 2.39+) where the kernel\n"
	  "                drops them, for mmkit maps; PROGRAM runs as a child of mmkit\n"
	  "                under a seccomp filter; on glibc < 2.39 also names what glibc\n"
	  "                2.39 names (libmmkit-names.so)\n"
	  "  --no-glibc-names\n"
	  "                with --names: not glibc's names, only the program's own\n"
	  "  PROGRAM       runs in place of mmkit (found in PATH): the exit status is\n"
	  "                its own, or 127 if not found, 126 if it cannot be run\n"
	  "  An option's value follows it after = or as the next word: --perturb 85.\n",
	  0, INT_MAX, OWN_OPTIONS, cmd_run },
};

#define NCOMMANDS	(sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *f)
{
	size_t i;

	fprintf(f, "usage: mmkit COMMAND [ARGS...]\n"
		"       mmkit help [COMMAND]    the usage of COMMAND, like mmkit COMMAND --help\n"
		"       mmkit --version\n\ncommands:\n");
	for (i = 0; i < NCOMMANDS; i++)
		fprintf(f, "  %s %s\n      %s\n", commands[i].name, commands[i].synopsis,
			commands[i].what);
	fprintf(f, "\nexit status:\n"
		"  0  success\n"
		"  1  the work failed: a process gone or unreadable, memlock SIZE not fitting\n"
		"  2  bad usage or input\n");
}

static void command_usage(FILE *f, const struct command *cmd)
{
	fprintf(f, "usage: mmkit %s %s\n%s\n\n%s", cmd->name, cmd->synopsis, cmd->what,
		cmd->operands);
	if (cmd->flags & TAKES_JSON)
		fprintf(f, "  --json        JSON with stable keys instead of a table\n");
	fprintf(f, "  -h, --help    this help\n");
}

static int is_help(const char *arg)
{
	return !strcmp(arg, "--help") || !strcmp(arg, "-h");
}

/* "-5" is a (bad) operand, not an option: its message should say why it is bad. */
static int is_option(const char *arg)
{
	return arg[0] == '-' && arg[1] && !isdigit((unsigned char)arg[1]);
}

/* Takes the options out of argv[1..argc-1], checks the operands, runs @cmd. */
static int run(const struct command *cmd, int argc, char **argv)
{
	struct cli_args a = { 0, argv + 1, 0 };
	int i;

	/* The operands are argv[1..] already: none is looked at here. */
	if ((cmd->flags & OWN_OPTIONS) && argc > 1 && !is_help(argv[1])) {
		a.n = argc - 1;
		argc = 1;
	}
	for (i = 1; i < argc; i++) {
		if ((cmd->flags & PASSES_REST) && a.n) {
			a.operand[a.n++] = argv[i];
		} else if (is_help(argv[i])) {
			command_usage(stdout, cmd);
			return CLI_EXIT_OK;
		} else if ((cmd->flags & TAKES_JSON) && !strcmp(argv[i], "--json")) {
			a.json = 1;
		} else if (is_option(argv[i])) {
			cli_error("%s: unknown option '%s' (mmkit %s --help: its usage)", cmd->name,
				  argv[i], cmd->name);
			return CLI_EXIT_USAGE;
		} else {
			a.operand[a.n++] = argv[i];
		}
	}
	a.operand[a.n] = NULL;
	if (a.n > cmd->max_operands) {
		cli_error("%s: unexpected argument '%s' (usage: mmkit %s %s)", cmd->name,
			  a.operand[cmd->max_operands], cmd->name, cmd->synopsis);
		return CLI_EXIT_USAGE;
	}
	/* The synopsis of a command with operands it needs starts with the first. */
	if (a.n < cmd->min_operands) {
		cli_error("%s: %.*s missing (usage: mmkit %s %s)", cmd->name,
			  (int)strcspn(cmd->synopsis, " "), cmd->synopsis, cmd->name, cmd->synopsis);
		return CLI_EXIT_USAGE;
	}
	return cmd->run(&a);
}

static const struct command *find_command(const char *name)
{
	size_t i;

	for (i = 0; i < NCOMMANDS; i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

/*
 * mmkit help COMMAND [NAME]: the usage of COMMAND (of its NAME where the
 * command runs others: mmkit help bench lock), and never anything else:
 * what follows is not handed to the command, which could run it.
 */
static int help(int argc, char **argv)
{
	static char help_option[] = "--help";
	const struct command *cmd = find_command(argv[0]);
	char *words[4];	/* COMMAND [NAME] --help, and the NULL run() ends them with */
	int n = 0;

	if (!cmd) {
		cli_error("unknown %s '%s'", is_option(argv[0]) ? "option" : "command", argv[0]);
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	words[n++] = argv[0];
	if ((cmd->flags & PASSES_REST) && argc > 1 && !is_option(argv[1]))
		words[n++] = argv[1];
	words[n++] = help_option;
	return run(cmd, n, words);
}

int main(int argc, char **argv)
{
	const struct command *cmd;

	if (argc < 2) {
		usage(stderr);
		return CLI_EXIT_USAGE;
	}
	if (is_help(argv[1]) || (!strcmp(argv[1], "help") && argc == 2)) {
		usage(stdout);
		return CLI_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "-V")) {
		printf("mmkit %s\n", MMKIT_VERSION);
		return CLI_EXIT_OK;
	}
	if (!strcmp(argv[1], "help"))
		return help(argc - 2, argv + 2);
	cmd = find_command(argv[1]);
	if (cmd)
		return run(cmd, argc - 1, argv + 1);
	cli_error("unknown %s '%s'", is_option(argv[1]) ? "option" : "command", argv[1]);
	usage(stderr);
	return CLI_EXIT_USAGE;
}
