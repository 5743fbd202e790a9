/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/* What the subcommands of the mmkit command share. */
#ifndef MMKIT_CLI_H
#define MMKIT_CLI_H

#include <stdio.h>
#include <sys/types.h>

/* Exit codes: success, a failure while working, bad usage or input. */
#define CLI_EXIT_OK	0
#define CLI_EXIT_FAIL	1
#define CLI_EXIT_USAGE	2

/* What a subcommand is given: its operands, the options taken out. */
struct cli_args {
	int n;			/* how many operands */
	char **operand;		/* operand[0] .. operand[n - 1], then NULL */
	int json;		/* --json was given */
};

/* The subcommands; each returns the exit code. */
int cmd_probe(const struct cli_args *a);
int cmd_maps(const struct cli_args *a);
int cmd_secrets(const struct cli_args *a);
int cmd_memlock(const struct cli_args *a);
int cmd_bench(const struct cli_args *a);

/* Prints "mmkit: " and the formatted message to stderr. */
void cli_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Writes @s as a JSON string literal, quotes included. */
void cli_json_string(FILE *f, const char *s);
/* Parses a size: a number with an optional K, M, G suffix (powers of 1024). */
int cli_parse_size(const char *s, unsigned long long *out);
/* Parses a PID: a positive decimal number. */
int cli_parse_pid(const char *s, pid_t *out);

#endif /* MMKIT_CLI_H */
