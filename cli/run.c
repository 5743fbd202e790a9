// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
		if ((value = cli_option_value("--secret-heap", argc, argv, &i, &missing))) {
			if (parse_heaps(value, o)) {
				cli_error("run: --secret-heap: '%s' is not sodium, openssl (or "
					  "openssl-or-malloc) or both (sodium,openssl), each once",
					  value);
 * puts the shims into LD_PRELOAD, sets what they read (MALLOC_PERTURB_,
 * MMKIT_OPENSSL_FALLBACK, MMKIT_STATS) and executes PROGRAM in this process, so that the exit
 * status, signals and the PID are the program's own.  The shims are found
 * beside this binary (a build tree) or in the installed PRELOADDIR.
 */
#include <errno.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

/* Like env(1): the program could not be found, or not be run. */
#define RUN_EXIT_NOT_FOUND	127
#define RUN_EXIT_CANNOT_RUN	126

/* The shims --secret-heap chooses from, in the order they are preloaded. */
static const char *const heaps[] = { "sodium", "openssl" };
#define NHEAPS	(sizeof(heaps) / sizeof(heaps[0]))
/* The openssl shim, falling back to OpenSSL's plain heap (MMKIT_OPENSSL_FALLBACK=malloc). */
#define OPENSSL_OR_MALLOC	"openssl-or-malloc"

struct run_opts {
	int heap[NHEAPS];	/* 1: preload libmmkit-HEAP.so */
	int openssl_or_malloc;
	int perturb;		/* MALLOC_PERTURB_ byte, 0: none */
	int stats;
	int names;		/* --names */
	int no_glibc_names;	/* --no-glibc-names */
};

/* "sodium", "openssl" (or "openssl-or-malloc") or both, comma-separated, each once. */
static int parse_heaps(const char *list, struct run_opts *o)
{
	const char *s = list;
	size_t len, i;

	do {
		len = strcspn(s, ",");
		for (i = 0; i < NHEAPS; i++)
			if (strlen(heaps[i]) == len && !strncmp(s, heaps[i], len))
				break;
		if (len == strlen(OPENSSL_OR_MALLOC) && !strncmp(s, OPENSSL_OR_MALLOC, len)) {
			i = 1;
			o->openssl_or_malloc = 1;
		}
		if (i == NHEAPS || o->heap[i])
			return -EINVAL;
		o->heap[i] = 1;
		s += len;
	} while (*s++ == ',');
	return 0;
}

/* A byte from 1 to 255, decimal or 0x hexadecimal; 0 would turn glibc's fill off. */
static int parse_byte(const char *s, int *out)
{
	unsigned long v;
	char *end;

	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoul(s, &end, 0);
	if (errno || *end || v < 1 || v > 255)
		return -EINVAL;
	*out = (int)v;
	return 0;
}

/* Takes the options; returns the index of PROGRAM in @argv, or -1 after a message. */
static int parse_opts(int argc, char **argv, struct run_opts *o)
{
	const char *value;
	int i, missing = 0;

	for (i = 0; i < argc; i++) {
		const char *arg = argv[i];

		if (!strcmp(arg, "--"))
			return i + 1 < argc ? i + 1 : (cli_error("run: PROGRAM missing"), -1);
		if (arg[0] != '-')
			return i;
		if ((value = cli_option_value("--secret-heap", argc, argv, &i, &missing))) {
			if (parse_heaps(value, o)) {
				cli_error("run: --secret-heap: '%s' is not sodium, openssl (or "
					  "openssl-or-malloc) or both (sodium,openssl), each once",
					  value);
				return -1;
			}
		} else if ((value = cli_option_value("--perturb", argc, argv, &i, &missing))) {
			if (parse_byte(value, &o->perturb)) {
				cli_error("run: --perturb: '%s' is not a byte from 1 to 255 "
					  "(decimal, or hexadecimal with 0x)", value);
				return -1;
			}
		} else if (missing) {
			cli_error("run: '%s' needs a value (mmkit run --help: its usage)", arg);
			return -1;
		} else if (!strcmp(arg, "--stats")) {
			o->stats = 1;
		} else if (!strcmp(arg, "--names")) {
			o->names = 1;
		} else if (!strcmp(arg, "--no-glibc-names")) {
			o->no_glibc_names = 1;
		} else {
			cli_error("run: unknown option '%s' (mmkit run --help: its usage)", arg);
			return -1;
		}
	}
	cli_error("run: PROGRAM missing (usage: mmkit run [OPTIONS] [--] PROGRAM [ARGS...])");
	return -1;
}

/* Finds libmmkit-@name.so beside this binary or in PRELOADDIR, into @path. */
static int find_shim(const char *name, char *path, size_t len)
{
	char self[PATH_MAX];

	if (!cli_self_dir(self, sizeof(self)) &&
	    snprintf(path, len, "%s/libmmkit-%s.so", self, name) < (int)len && !access(path, R_OK))
		return 0;
	if (snprintf(path, len, "%s/libmmkit-%s.so", MMKIT_PRELOADDIR, name) < (int)len &&
	    !access(path, R_OK))
		return 0;
	cli_error("run: libmmkit-%s.so is neither beside mmkit nor in %s (make install?)", name,
		  MMKIT_PRELOADDIR);
	return -ENOENT;
}

static int set_var(const char *name, const char *value)
{
	if (!setenv(name, value, 1))
		return 0;
	cli_error("run: setenv %s: %s", name, strerror(errno));
	return -1;
}

/* Appends @item to the LD_PRELOAD being built in @buf, which holds @used bytes. */
static int add_preload(char *buf, size_t len, size_t *used, const char *item)
{
	int n = snprintf(buf + *used, len - *used, "%s%s", *used ? ":" : "", item);

	if (n < 0 || (size_t)n >= len - *used) {
		cli_error("run: LD_PRELOAD would be too long");
		return -ENAMETOOLONG;
	}
	*used += (size_t)n;
	return 0;
}

/* Finds the shim @name and appends it to the LD_PRELOAD in @buf. */
static int add_shim(char *buf, size_t len, size_t *used, const char *name)
{
	char path[PATH_MAX];

	if (find_shim(name, path, sizeof(path)))
		return -ENOENT;
	/* The dynamic loader splits LD_PRELOAD on blanks and colons. */
	if (strpbrk(path, " \t:")) {
		cli_error("run: %s: a path with a blank or a colon cannot go into LD_PRELOAD", path);
		return -EINVAL;
	}
	return add_preload(buf, len, used, path);
}

/* glibc 2.39 and later name their memory when the tunable glibc.mem.decorate_maps is 1. */
static int glibc_names_itself(void)
{
	int major = 0, minor = 0;

	return sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) == 2 &&
	       (major > 2 || (major == 2 && minor >= 39));
}

/* GLIBC_TUNABLES with glibc.mem.decorate_maps=1 added to what the caller set. */
static int set_decorate_maps(void)
{
	const char *old = getenv("GLIBC_TUNABLES");
	char buf[4096];
	int n;

	n = snprintf(buf, sizeof(buf), "%s%sglibc.mem.decorate_maps=1", old ? old : "",
		     old && *old ? ":" : "");
	if (n < 0 || (size_t)n >= sizeof(buf)) {
		cli_error("run: GLIBC_TUNABLES would be too long");
		return -1;
	}
	return set_var("GLIBC_TUNABLES", buf);
}

/* LD_PRELOAD: the shims first, then what the caller had preloaded. */
static int set_preload(const struct run_opts *o)
{
	const char *old = getenv("LD_PRELOAD");
	char preload[4 * PATH_MAX];
	size_t used = 0, i;

	for (i = 0; i < NHEAPS; i++)
		if (o->heap[i] && add_shim(preload, sizeof(preload), &used, heaps[i]))
			return -1;
	if (o->perturb && add_shim(preload, sizeof(preload), &used, "perturb"))
		return -1;
	/* After perturb: its malloc comes first, and the names shim leaves its blocks alone. */
	if (o->names && !o->no_glibc_names && !glibc_names_itself() &&
	    add_shim(preload, sizeof(preload), &used, "names"))
		return -1;
	if (old && *old && add_preload(preload, sizeof(preload), &used, old))
		return -1;
	return set_var("LD_PRELOAD", preload);
}

int cmd_run(const struct cli_args *a)
{
	struct run_opts o = { { 0 }, 0, 0, 0, 0, 0 };
	char byte[4];
	int prog, i, err, any = 0;

	prog = parse_opts(a->n, a->operand, &o);
	if (prog < 0)
		return CLI_EXIT_USAGE;
	for (i = 0; i < (int)NHEAPS; i++)
		any |= o.heap[i];
	if (o.no_glibc_names && !o.names) {
		cli_error("run: --no-glibc-names goes with --names");
		return CLI_EXIT_USAGE;
	}
	if (!any && !o.perturb && !o.names) {
		cli_error("run: nothing to run on: give --secret-heap=sodium|openssl, --perturb=BYTE "
			  "or --names");
		return CLI_EXIT_USAGE;
	}
	snprintf(byte, sizeof(byte), "%d", o.perturb);
	if (set_preload(&o) || (o.perturb && set_var("MALLOC_PERTURB_", byte)) ||
	    (o.openssl_or_malloc && set_var("MMKIT_OPENSSL_FALLBACK", "malloc")) ||
	    (o.stats && set_var("MMKIT_STATS", "1")) ||
	    (o.names && !o.no_glibc_names && glibc_names_itself() && set_decorate_maps()))
		return CLI_EXIT_FAIL;
	if (o.names && (err = cli_names_run(a->operand + prog)) >= 0)
		return err;
	execvp(a->operand[prog], a->operand + prog);
	err = errno;
	cli_error("run: %s: %s", a->operand[prog], strerror(err));
	return err == ENOENT ? RUN_EXIT_NOT_FOUND : RUN_EXIT_CANNOT_RUN;
}
