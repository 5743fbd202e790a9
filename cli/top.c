// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit top [--by name|process] [--sort KEY] [--name GLOB] [--user USER]
 * [--pid PID,...] [--json]: the memory of every process the caller may
 * read, summed per name (as mmkit maps names it: [anon:NAME], file paths,
 * [heap], [stack], [anon]...) like Android's librank and smem -m, or per
 * process (--by process) like procrank; in KiB, largest PSS first.
 * Processes that cannot be read (gone, another user's) are skipped and
 * counted on the last line, never a failure of the run.
 *
 * JSON, stable keys:
 *   {"by": "name",
 *    "names": [{"name": "...", "kind": KIND, "source": SOURCE, "processes": N,
 *               "mappings": N, "size_kib": N, "rss_kib": N, "pss_kib": N,
 *               "uss_kib": N, "swap_kib": N, "locked_kib": N}, ...],
 *    "total": {"processes": N, "mappings": N, "size_kib": N, ...},
 *    "read": N, "gone": N, "denied": N, "failed": N}
 * with --by process, "processes" in place of "names":
 *   [{"pid": N, "uid": N, "user": "...", "command": "...", "mappings": N,
 *     "size_kib": N, ...}, ...].  "read": the processes read whole (kernel
 * threads too, which have no memory to show); "gone": exited before or
 * while they were read; "denied": another user's (without root) or not
 * dumpable; "failed": unreadable for another reason.
 * KIND and SOURCE as in mmkit maps.
 *
 * Exit codes: 0; 1 if no process could be read at all; 2 for bad usage.
 */
#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "fleet.h"

/* The columns, in order. */
static const struct {
	int v;
	const char *key, *title, *sort;
} columns[] = {
	{ V_SIZE, "size_kib", "SIZE_KiB", "size" },
	{ V_RSS, "rss_kib", "RSS_KiB", "rss" },
	{ V_PSS, "pss_kib", "PSS_KiB", "pss" },
	{ V_USS, "uss_kib", "USS_KiB", "uss" },
	{ V_SWAP, "swap_kib", "SWAP_KiB", "swap" },
	{ V_LOCKED, "locked_kib", "LOCKED_KiB", "locked" },
};

#define NCOLUMNS	(sizeof(columns) / sizeof(columns[0]))

/* Sort keys besides the columns. */
enum { SORT_PROCESSES = -1, SORT_MAPPINGS = -2, SORT_NAME = -3, SORT_PID = -4 };

struct top_opts {
	struct fleet_filter flt;
	int by_process;
	int sort;		/* a V_ value or a SORT_ one */
	int json;
};

/* The order of a row: the sort key largest first (names and PIDs smallest first). */
static int sort_key;

static int cmp_ull(unsigned long long x, unsigned long long y)
{
	return x == y ? 0 : x < y ? 1 : -1;
}

static int by_name(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	int c = 0;

	if (sort_key >= 0)
		c = cmp_ull(x->v[sort_key], y->v[sort_key]);
	else if (sort_key == SORT_PROCESSES)
		c = cmp_ull(x->processes, y->processes);
	else if (sort_key == SORT_MAPPINGS)
		c = cmp_ull(x->mappings, y->mappings);
	if (!c)
		c = strcmp(x->name, y->name);
	return c ? c : (int)x->kind - (int)y->kind;
}

static int by_process(const void *a, const void *b)
{
	const struct fleet_proc *x = a, *y = b;
	int c = 0;

	if (sort_key >= 0)
		c = cmp_ull(x->v[sort_key], y->v[sort_key]);
	else if (sort_key == SORT_MAPPINGS)
		c = cmp_ull(x->mappings, y->mappings);
	else if (sort_key == SORT_NAME)
		c = strcmp(x->command, y->command);
	return c ? c : (x->pid > y->pid) - (x->pid < y->pid);
}

static int parse_sort(const char *s, struct top_opts *o)
{
	size_t i;

	for (i = 0; i < NCOLUMNS; i++)
		if (!strcmp(s, columns[i].sort)) {
			o->sort = columns[i].v;
			return 0;
		}
	if (!strcmp(s, "processes") && !o->by_process)
		o->sort = SORT_PROCESSES;
	else if (!strcmp(s, "mappings"))
		o->sort = SORT_MAPPINGS;
	else if (!strcmp(s, "name") || (!strcmp(s, "command") && o->by_process))
		o->sort = SORT_NAME;
	else if (!strcmp(s, "pid") && o->by_process)
		o->sort = SORT_PID;
	else
		return -EINVAL;
	return 0;
}

static int parse_opts(int argc, char **argv, struct top_opts *o)
{
	const char *value, *sort = NULL;
	int i, missing = 0;

	o->sort = V_PSS;
	for (i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			o->json = 1;
		} else if ((value = cli_option_value("--by", argc, argv, &i, &missing))) {
			if (strcmp(value, "name") && strcmp(value, "process")) {
				cli_error("top: --by: '%s' is not name or process", value);
				return -1;
			}
			o->by_process = !strcmp(value, "process");
		} else if ((value = cli_option_value("--sort", argc, argv, &i, &missing))) {
			sort = value;
		} else if (fleet_option("top", argc, argv, &i, &o->flt, missing)) {
			return -1;
		}
	}
	/* After --by, which decides what may be sorted on. */
	if (sort && parse_sort(sort, o)) {
		cli_error("top: --sort: '%s' is not one of size, rss, pss, uss, swap, locked, mappings, %s",
			  sort, o->by_process ? "pid, command" : "processes, name");
		return -1;
	}
	return 0;
}

static void print_kib(const unsigned long long *v, int json)
{
	size_t j;

	for (j = 0; j < NCOLUMNS; j++)
		if (json)
			printf(", \"%s\": %llu", columns[j].key, v[columns[j].v] / 1024);
		else
			printf(" %10llu", v[columns[j].v] / 1024);
}

static void print_titles(const char *first)
{
	size_t j;

	printf("%s", first);
	for (j = 0; j < NCOLUMNS; j++)
		printf(" %10s", columns[j].title);
}

static void print_names(const struct fleet *f, const struct group *total, int json)
{
	size_t i;

	if (!json)
		print_titles("  PROCS   MAPS");
	if (!json)
		printf(" %-8s NAME\n", "SOURCE");
	else
		printf("{\"by\": \"name\",\n \"names\": [");
	for (i = 0; i < f->names.n; i++) {
		const struct group *g = &f->names.g[i];

		if (json) {
			printf("%s\n  {\"name\": ", i ? "," : "");
			cli_json_string(stdout, g->name);
			printf(", \"kind\": \"%s\", \"source\": \"%s\", \"processes\": %llu, "
			       "\"mappings\": %llu", mmkit_region_kind_name(g->kind),
			       group_source(g->kind), g->processes, g->mappings);
			print_kib(g->v, 1);
			printf("}");
			continue;
		}
		printf("%7llu %6llu", g->processes, g->mappings);
		print_kib(g->v, 0);
		printf(" %-8s ", g->kind == MMKIT_REGION_ANON_NAMED ||
		       g->kind == MMKIT_REGION_REGISTRY ? group_source(g->kind) : "-");
		cli_text_string(stdout, g->name);
		putchar('\n');
	}
	if (json)
		return;
	printf("%7llu %6llu", total->processes, total->mappings);
	print_kib(total->v, 0);
	printf(" %-8s TOTAL\n", "");
}

static void user_name(uid_t uid, char *buf, size_t len)
{
	struct passwd *pw = getpwuid(uid);

	if (pw)
		snprintf(buf, len, "%s", pw->pw_name);
	else
		snprintf(buf, len, "%u", (unsigned int)uid);
}

static void print_processes(const struct fleet *f, const struct group *total, int json)
{
	char user[64];
	size_t i;
	int width;

	if (!json) {
		print_titles("    PID USER       MAPS");
		printf(" COMMAND\n");
	} else {
		printf("{\"by\": \"process\",\n \"processes\": [");
	}
	for (i = 0; i < f->nprocs; i++) {
		const struct fleet_proc *p = &f->procs[i];

		user_name(p->uid, user, sizeof(user));
		if (json) {
			printf("%s\n  {\"pid\": %d, \"uid\": %u, \"user\": ", i ? "," : "", (int)p->pid,
			       (unsigned int)p->uid);
			cli_json_string(stdout, user);
			printf(", \"command\": ");
			cli_json_string(stdout, p->command);
			printf(", \"mappings\": %llu", p->mappings);
			print_kib(p->v, 1);
			printf("}");
			continue;
		}
		printf("%7d ", (int)p->pid);
		width = cli_text_string(stdout, user);
		printf("%*s %6llu", width < 8 ? 8 - width : 0, "", p->mappings);
		print_kib(p->v, 0);
		putchar(' ');
		cli_text_string(stdout, p->command);
		putchar('\n');
	}
	if (json)
		return;
	printf("%7s %-8s %6llu", "", "", total->mappings);
	print_kib(total->v, 0);
	printf(" TOTAL\n");
}

int cmd_top(const struct cli_args *a)
{
	struct top_opts o = { 0 };
	struct group total = { 0 };
	struct fleet f;
	size_t i;

	if (parse_opts(a->n, a->operand, &o))
		return CLI_EXIT_USAGE;
	if (fleet_scan(&f, &o.flt))
		return CLI_EXIT_FAIL;
	if (!f.read) {
		cli_error("top: no process could be read (%llu gone, %llu denied, %llu failed)",
			  f.gone, f.denied, f.failed);
		fleet_free(&f);
		return CLI_EXIT_FAIL;
	}
	sort_key = o.sort;
	/* Nothing may be left to sort (a glob no name matches): no NULL to qsort. */
	if (o.by_process && f.nprocs)
		qsort(f.procs, f.nprocs, sizeof(*f.procs), by_process);
	else if (f.names.n)
		qsort(f.names.g, f.names.n, sizeof(*f.names.g), by_name);
	total.processes = f.nprocs;
	for (i = 0; i < f.names.n; i++)
		group_sum(&total, &f.names.g[i]);
	if (o.by_process)
		print_processes(&f, &total, o.json);
	else
		print_names(&f, &total, o.json);
	if (o.json) {
		printf("],\n \"total\": {\"processes\": %llu, \"mappings\": %llu", total.processes,
		       total.mappings);
		print_kib(total.v, 1);
		printf("},\n \"read\": %llu, \"gone\": %llu, \"denied\": %llu, \"failed\": %llu}\n",
		       f.read, f.gone, f.denied, f.failed);
	} else {
		printf("%llu processes read; skipped: %llu gone, %llu denied%s, %llu failed\n",
		       f.read, f.gone, f.denied, !f.denied ? "" : geteuid() ?
		       " (another user's: run as root)" :
		       " (another user's: root without CAP_SYS_PTRACE and CAP_DAC_READ_SEARCH)",
		       f.failed);
	}
	fleet_free(&f);
	return CLI_EXIT_OK;
}
