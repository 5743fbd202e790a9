/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * The one option parser of the benchmarks: --NAME VALUE and --NAME=VALUE,
 * as getopt_long takes them, --help, and for a bad word a message naming
 * it and what is allowed ("--iterations '0': a number from 1 to 1000000"),
 * never just the usage.
 */
#ifndef MMKIT_BENCH_OPTIONS_H
#define MMKIT_BENCH_OPTIONS_H

/* A number #defined, as text for a usage string: BENCH_STR(MAX_ROUNDS) is "51". */
#define BENCH_STR_(x)	#x
#define BENCH_STR(x)	BENCH_STR_(x)

enum bench_option_kind {
	BENCH_FLAG,	/* no value: *flag = 1 */
	BENCH_NUMBER,	/* a decimal number from min to max into *number */
	BENCH_SIZE,	/* bytes from min to max (cli_parse_size()'s forms) into *size */
	BENCH_STRING,	/* any word into *string */
};

struct bench_option {
	const char *name;		/* "--rounds"; NULL ends a table */
	enum bench_option_kind kind;
	long long min, max;		/* a NUMBER's or SIZE's range */
	int *flag;
	long long *number;
	unsigned long long *size;
	const char **string;
};

/*
 * Parses argv[1..argc-1] of benchmark @bench ("refpage") against @opts;
 * @usage is printed for --help.  Returns -1 when the benchmark should run,
 * else the exit status main() returns: 0 after --help (the usage on
 * stdout), 2 after a bad word (a message on stderr naming it and what is
 * allowed, and where the usage is).  The words after an option that takes
 * a value are its value, whatever they look like.
 */
int bench_options(const char *bench, const char *usage, const struct bench_option *opts,
		  int argc, char **argv);

#endif /* MMKIT_BENCH_OPTIONS_H */
