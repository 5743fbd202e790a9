// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/* The benchmarks' option parser: see options.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "options.h"

/* A decimal number, digits only (no sign, no blank), into *@out; -EINVAL, -ERANGE. */
static int parse_number(const char *s, long long *out)
{
	char *end;
	long long v;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoll(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno)
		return -ERANGE;
	*out = v;
	return 0;
}

/* @bytes in the largest binary unit that holds it whole: 4096 is "4K", 1 << 40 "1T". */
static void print_size(unsigned long long bytes)
{
	static const char units[] = "KMGT";
	int i = -1;

	while (i < 3 && bytes && !(bytes & 1023)) {
		bytes >>= 10;
		i++;
	}
	fprintf(stderr, "%llu%.*s", bytes, i >= 0, i >= 0 ? &units[i] : "");
}

/* What @o takes, for a message: "a number from 1 to 51". */
static void print_allowed(const struct bench_option *o)
{
	if (o->kind == BENCH_NUMBER) {
		fprintf(stderr, "a number from %lld to %lld", o->min, o->max);
	} else if (o->kind == BENCH_SIZE) {
		fprintf(stderr, "a size from ");
		print_size((unsigned long long)o->min);
		fprintf(stderr, " to ");
		print_size((unsigned long long)o->max);
		fprintf(stderr, " (%s)", CLI_SIZE_FORMS);
	} else {
		fprintf(stderr, "a value");
	}
}

/* Takes @value for @o: 0, or 2 after a message. */
static int take_value(const char *bench, const struct bench_option *o, const char *value)
{
	unsigned long long size;
	long long number;

	switch (o->kind) {
	case BENCH_NUMBER:
		if (!parse_number(value, &number) && number >= o->min && number <= o->max) {
			*o->number = number;
			return 0;
		}
		break;
	case BENCH_SIZE:
		if (!cli_parse_size(value, &size) && size >= (unsigned long long)o->min &&
		    size <= (unsigned long long)o->max) {
			*o->size = size;
			return 0;
		}
		break;
	case BENCH_STRING:
		*o->string = value;
		return 0;
	case BENCH_FLAG:
		break;
	}
	fprintf(stderr, "mmkit: bench %s: %s '%s': ", bench, o->name, value);
	print_allowed(o);
	fprintf(stderr, "\n");
	return 2;
}

int bench_options(const char *bench, const char *usage, const struct bench_option *opts,
		  int argc, char **argv)
{
	const struct bench_option *o;
	const char *arg, *value;
	size_t len = 0;
	int i;

	for (i = 1; i < argc; i++) {
		arg = argv[i];
		if (!strcmp(arg, "--help")) {
			fputs(usage, stdout);
			return 0;
		}
		for (o = opts; o->name; o++) {
			len = strlen(o->name);
			if (!strncmp(arg, o->name, len) && (!arg[len] || arg[len] == '='))
				break;
		}
		if (!o->name) {
			fprintf(stderr, "mmkit: bench %s: unknown option '%s' (mmkit bench %s --help: "
				"its usage)\n", bench, arg, bench);
			return 2;
		}
		if (o->kind == BENCH_FLAG) {
			if (arg[len]) {
				fprintf(stderr, "mmkit: bench %s: %s takes no value: '%s'\n", bench,
					o->name, arg);
				return 2;
			}
			*o->flag = 1;
			continue;
		}
		if (arg[len] == '=') {
			value = arg + len + 1;
		} else if (i + 1 < argc) {
			value = argv[++i];
		} else {
			fprintf(stderr, "mmkit: bench %s: '%s' needs a value: ", bench, o->name);
			print_allowed(o);
			fprintf(stderr, "\n");
			return 2;
		}
		if (take_value(bench, o, value))
			return 2;
	}
	return -1;
}
