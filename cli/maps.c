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
#include "procfs.h"

enum { SIZE, RSS, PSS, PRIVATE_DIRTY, SWAP, LOCKED, NVALUES };

static const char *const value_keys[NVALUES] = {
	"size_kib", "rss_kib", "pss_kib", "private_dirty_kib", "swap_kib", "locked_kib",
};

struct group {
	char *name;
	enum mmkit_region_kind kind;
	unsigned long long mappings;
	unsigned long long v[NVALUES];	/* bytes */
};

/*
 * The groups, and an index of them by (kind, name): open addressing, each
 * slot a group's number + 1 (0: empty), at most half full, so that a
 * process with 60,000 names is grouped in linear time.
 */
struct report {
	struct group *g;
	size_t n, cap;
	size_t *index;
	size_t index_cap;	/* a power of two */
};

/* FNV-1a over the kind and the name. */
static size_t group_hash(enum mmkit_region_kind kind, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ (uint64_t)kind;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 0x100000001b3ULL;
	return (size_t)h;
}

/* The slot of (kind, name) in the index: its group's, or the empty one it would take. */
static size_t group_slot(const struct report *rep, enum mmkit_region_kind kind, const char *name)
{
	size_t mask = rep->index_cap - 1, i = group_hash(kind, name) & mask;
	const struct group *g;

	for (; rep->index[i]; i = (i + 1) & mask) {
		g = &rep->g[rep->index[i] - 1];
		if (g->kind == kind && !strcmp(g->name, name))
			break;
	}
	return i;
}

/* Makes room for one more group in the array and the index. */
static int report_grow(struct report *rep)
{
	size_t cap, i, *index;
	struct group *bigger;

	if (rep->n == rep->cap) {
		cap = rep->cap ? rep->cap * 2 : 64;
		bigger = reallocarray(rep->g, cap, sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		rep->g = bigger;
		rep->cap = cap;
	}
	if (2 * (rep->n + 1) <= rep->index_cap)
		return 0;
	cap = rep->index_cap ? rep->index_cap * 2 : 128;
	index = calloc(cap, sizeof(*index));
	if (!index)
		return -ENOMEM;
	free(rep->index);
	rep->index = index;
	rep->index_cap = cap;
	for (i = 0; i < rep->n; i++)
		rep->index[group_slot(rep, rep->g[i].kind, rep->g[i].name)] = i + 1;
	return 0;
}

/* The name a region is reported under. */
static char *display_name(const struct mmkit_region *r)
{
	const char *shm = r->perms[3] == 's' ? "anon_shmem" : "anon";
	size_t len;
	char *s;

	switch (r->kind) {
	case MMKIT_REGION_ANON:
		return strdup("[anon]");
	case MMKIT_REGION_ANON_NAMED:
	case MMKIT_REGION_REGISTRY:
		len = strlen(shm) + strlen(r->name) + 4;
		s = malloc(len);
		if (s)
			snprintf(s, len, "[%s:%s]", shm, r->name);
		return s;
	default:
		return strdup(r->name);
	}
}

static int add_region(const struct mmkit_region *r, void *arg)
{
	struct report *rep = arg;
	char *name = display_name(r);
	struct group *g;
	size_t slot;

	if (!name)
		return -ENOMEM;
	slot = rep->index_cap ? group_slot(rep, r->kind, name) : 0;
	if (rep->index_cap && rep->index[slot]) {
		g = &rep->g[rep->index[slot] - 1];
		free(name);
	} else {
		if (report_grow(rep)) {
			free(name);
			return -ENOMEM;
		}
		g = &rep->g[rep->n++];
		memset(g, 0, sizeof(*g));
		g->name = name;
		g->kind = r->kind;
		rep->index[group_slot(rep, r->kind, name)] = rep->n;
	}
	g->mappings++;
	g->v[SIZE] += r->size;
	g->v[RSS] += r->rss;
	g->v[PSS] += r->pss;
	g->v[PRIVATE_DIRTY] += r->private_dirty;
	g->v[SWAP] += r->swap;
	g->v[LOCKED] += r->locked;
	return 0;
}

static int by_rss(const void *a, const void *b)
{
	const struct group *x = a, *y = b;

	if (x->v[RSS] != y->v[RSS])
		return x->v[RSS] < y->v[RSS] ? 1 : -1;
	if (x->v[SIZE] != y->v[SIZE])
		return x->v[SIZE] < y->v[SIZE] ? 1 : -1;
	return strcmp(x->name, y->name);
}

static const char *source(enum mmkit_region_kind kind)
{
	return kind == MMKIT_REGION_REGISTRY ? "registry" : "kernel";
}

static void print_text(const struct report *rep, const struct group *total)
{
	size_t i;
	int j;

	printf("%10s %10s %10s %10s %10s %10s %6s %-8s %s\n", "SIZE_KiB", "RSS_KiB",
	       "PSS_KiB", "PDIRTY_KiB", "SWAP_KiB", "LOCKED_KiB", "MAPS", "SOURCE", "NAME");
	for (i = 0; i <= rep->n; i++) {
		const struct group *g = i < rep->n ? &rep->g[i] : total;
		int named = g->kind == MMKIT_REGION_ANON_NAMED || g->kind == MMKIT_REGION_REGISTRY;

		for (j = 0; j < NVALUES; j++)
			printf("%10llu ", g->v[j] / 1024);
		printf("%6llu %-8s ", g->mappings, g == total ? "" : named ? source(g->kind) : "-");
		cli_text_string(stdout, g->name);
		putchar('\n');
	}
}

static void print_values(const struct group *g)
{
	int j;

	printf("\"mappings\": %llu", g->mappings);
	for (j = 0; j < NVALUES; j++)
		printf(", \"%s\": %llu", value_keys[j], g->v[j] / 1024);
}

static void print_json(pid_t pid, const struct report *rep, const struct group *total)
{
	size_t i;

	printf("{\"pid\": %d,\n \"names\": [", (int)pid);
	for (i = 0; i < rep->n; i++) {
		printf("%s\n  {\"name\": ", i ? "," : "");
		cli_json_string(stdout, rep->g[i].name);
		printf(", \"kind\": \"%s\", \"source\": \"%s\", ",
		       mmkit_region_kind_name(rep->g[i].kind), source(rep->g[i].kind));
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
	struct report rep = { 0 };
	struct group total;
	pid_t pid;
	size_t i;
	int j, ret;

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
		for (i = 0; i < rep.n; i++)
			free(rep.g[i].name);
		free(rep.g);
		free(rep.index);
		return CLI_EXIT_FAIL;
	}
	qsort(rep.g, rep.n, sizeof(*rep.g), by_rss);
	memset(&total, 0, sizeof(total));
	total.name = "TOTAL";
	for (i = 0; i < rep.n; i++) {
		total.mappings += rep.g[i].mappings;
		for (j = 0; j < NVALUES; j++)
			total.v[j] += rep.g[i].v[j];
	}
	if (a->json)
		print_json(pid, &rep, &total);
	else
		print_text(&rep, &total);
	for (i = 0; i < rep.n; i++)
		free(rep.g[i].name);
	free(rep.g);
	free(rep.index);
	return CLI_EXIT_OK;
}
