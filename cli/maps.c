// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit maps PID [--json]: the memory of a process by name, like Android's
 * showmap.  For each name, the sums over its mappings of Size, Rss, Pss,
 * Private_Dirty, Swap and Locked from /proc/PID/smaps (see mmkit_regions()),
 * in KiB, sorted by Rss, largest first; then a TOTAL line.
 *
 * Names: [anon:NAME] for named anonymous memory ([anon_shmem:NAME] when
 * shared), the same whether the kernel named it (CONFIG_ANON_VMA_NAME) or
 * the mmkit registry did, so reports read alike on both kinds of kernel;
 * the SOURCE column tells which: "kernel" or "registry" ("-" for the
 * rest).  Then file paths, [heap], [stack], the kernel's other [...] names,
 * and [anon] for anonymous memory without a name.
 *
 * JSON, stable keys:
 *   {"pid": PID,
 *    "names": [{"name": "[anon:NAME]", "kind": KIND, "source": SOURCE,
 *               "mappings": N, "size_kib": N, "rss_kib": N, "pss_kib": N,
 *               "private_dirty_kib": N, "swap_kib": N, "locked_kib": N}, ...],
 *    "total": {"mappings": N, "size_kib": N, "rss_kib": N, "pss_kib": N,
 *              "private_dirty_kib": N, "swap_kib": N, "locked_kib": N}}
 * KIND: "anon", "anon_named" (named by the kernel), "registry" (named by the
 * mmkit registry), "file", "heap", "stack", "special".  SOURCE: "registry"
 * for registry names, "kernel" for everything else.  "names" is sorted as
 * the table is.
 *
 * A file path may hold any byte but '/' and NUL (the kernel writes a
 * newline in it as \012): names are escaped, in the table like ls -b
 * (\x1b, \\), in JSON as valid UTF-8 (see cli_text_string() and
 * cli_json_string() in cli.h).
 *
 * Exit codes: 0; 1 if the process cannot be read (gone, another user's) or
 * has no user memory (a kernel thread, a zombie);
 * 2 for bad usage or a PID that is not a positive number.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mmkit.h"
#include "cli.h"
#include "fleet.h"
#include "procfs.h"

/* The columns, in order. */
static const struct {
	int v;
	const char *key;
} columns[] = {
	{ V_SIZE, "size_kib" }, { V_RSS, "rss_kib" }, { V_PSS, "pss_kib" },
	{ V_PRIVATE_DIRTY, "private_dirty_kib" }, { V_SWAP, "swap_kib" }, { V_LOCKED, "locked_kib" },
};

#define NCOLUMNS	(sizeof(columns) / sizeof(columns[0]))

static int add_region(const struct mmkit_region *r, void *arg)
{
	char *name = group_name(r);
	struct group *g = name ? groups_get(arg, r->kind, name) : NULL;

	free(name);
	if (!g)
		return -ENOMEM;
	group_add(g, r);
	return 0;
}

static int by_rss(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->v[V_RSS] != y->v[V_RSS])
		return x->v[V_RSS] < y->v[V_RSS] ? 1 : -1;
	if (x->v[V_SIZE] != y->v[V_SIZE])
		return x->v[V_SIZE] < y->v[V_SIZE] ? 1 : -1;
	return strcmp(x->name, y->name);
}

static void print_text(const struct groups *rep, const struct group *total)
{
	size_t i, j;

	printf("%10s %10s %10s %10s %10s %10s %6s %-8s %s\n", "SIZE_KiB", "RSS_KiB",
	       "PSS_KiB", "PDIRTY_KiB", "SWAP_KiB", "LOCKED_KiB", "MAPS", "SOURCE", "NAME");
	for (i = 0; i <= rep->n; i++) {
		const struct group *g = i < rep->n ? &rep->g[i] : total;
		int named = g->kind == MMKIT_REGION_ANON_NAMED || g->kind == MMKIT_REGION_REGISTRY;

		for (j = 0; j < NCOLUMNS; j++)
			printf("%10llu ", g->v[columns[j].v] / 1024);
		printf("%6llu %-8s ", g->mappings, g == total ? "" : named ? group_source(g->kind) : "-");
		cli_text_string(stdout, g->name);
		putchar('\n');
	}
}

static void print_values(const struct group *g)
{
	size_t j;

	printf("\"mappings\": %llu", g->mappings);
	for (j = 0; j < NCOLUMNS; j++)
		printf(", \"%s\": %llu", columns[j].key, g->v[columns[j].v] / 1024);
}

static void print_json(pid_t pid, const struct groups *rep, const struct group *total)
{
	size_t i;

	printf("{\"pid\": %d,\n \"names\": [", (int)pid);
	for (i = 0; i < rep->n; i++) {
		printf("%s\n  {\"name\": ", i ? "," : "");
		cli_json_string(stdout, rep->g[i].name);
		printf(", \"kind\": \"%s\", \"source\": \"%s\", ",
		       mmkit_region_kind_name(rep->g[i].kind), group_source(rep->g[i].kind));
		print_values(&rep->g[i]);
		printf("}");
	}
	printf("],\n \"total\": {");
	print_values(total);
	printf("}}\n");
}

/*
 * A process without a single mapping has no user memory to show: a kernel
 * thread, or a zombie whose memory went when it exited.  Says which and
 * returns -ESRCH; 0 for a process that is neither.
 */
static int no_user_memory(pid_t pid)
{
	enum mmkit__proc_kind kind;
	char path[32];

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if (mmkit__proc_kind(AT_FDCWD, path, &kind) || kind == MMKIT__PROC_USER)
		return 0;
	if (kind == MMKIT__PROC_KTHREAD)
		cli_error("maps: PID %d is a kernel thread: no user memory", (int)pid);
	else
		cli_error("maps: PID %d is a zombie: it has exited and its memory is gone "
			  "(its parent has not waited for it yet)", (int)pid);
	return -ESRCH;
}

int cmd_maps(const struct cli_args *a)
{
	struct groups rep = { 0 };
	struct group total;
	pid_t pid;
	size_t i;
	int ret;

	if (cli_parse_pid(a->operand[0], &pid)) {
		cli_error("maps: '%s' is not a PID (a positive number)", a->operand[0]);
		return CLI_EXIT_USAGE;
	}
	ret = mmkit_regions(pid, add_region, &rep);
	if (ret == -ESRCH)
		cli_error("maps: no process with PID %d", (int)pid);
	else if (ret == -EACCES || ret == -EPERM)
		cli_error("maps: may not read the memory of PID %d: %s (it takes the same user, or root)",
			  (int)pid, strerror(-ret));
	else if (ret)
		cli_error("maps: reading the memory of PID %d: %s", (int)pid, strerror(-ret));
	else if (!rep.n)
		ret = no_user_memory(pid);
	if (ret) {
		groups_free(&rep);
		return CLI_EXIT_FAIL;
	}
	qsort(rep.g, rep.n, sizeof(*rep.g), by_rss);
	memset(&total, 0, sizeof(total));
	total.name = "TOTAL";
	for (i = 0; i < rep.n; i++)
		group_sum(&total, &rep.g[i]);
	if (a->json)
		print_json(pid, &rep, &total);
	else
		print_text(&rep, &total);
	groups_free(&rep);
	return CLI_EXIT_OK;
}
