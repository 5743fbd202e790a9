// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Memory by name: the table of names mmkit maps, top and export sum
 * regions into, and the scan of every process (see fleet.h).  Each
 * process is read by mmkit_regions() -- the library's one smaps reader,
 * with its bounds on hostile input -- into a table of its own, which is
 * added to the machine's only once the process has been read whole: a
 * process that exits or fails halfway leaves nothing behind but its count.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <pwd.h>
#include <stdatomic.h>
#include <unistd.h>
#include <sys/stat.h>

#include "cli.h"
#include "fleet.h"
#include "procfs.h"

/* FNV-1a over the kind and the name. */
static size_t group_hash(enum mmkit_region_kind kind, const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ (uint64_t)kind;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 0x100000001b3ULL;
	return (size_t)h;
}

/* The slot of (kind, name) in the index: its group's, or the empty one it would take. */
static size_t group_slot(const struct groups *gs, enum mmkit_region_kind kind, const char *name)
{
	size_t mask = gs->index_cap - 1, i = group_hash(kind, name) & mask;
	const struct group *g;

	for (; gs->index[i]; i = (i + 1) & mask) {
		g = &gs->g[gs->index[i] - 1];
		if (g->kind == kind && !strcmp(g->name, name))
			break;
	}
	return i;
}

/* Makes room for one more group in the array and the index. */
static int groups_grow(struct groups *gs)
{
	size_t cap, i, *index;
	struct group *bigger;

	if (gs->n == gs->cap) {
		cap = gs->cap ? gs->cap * 2 : 64;
		bigger = reallocarray(gs->g, cap, sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		gs->g = bigger;
		gs->cap = cap;
	}
	if (2 * (gs->n + 1) <= gs->index_cap)
		return 0;
	cap = gs->index_cap ? gs->index_cap * 2 : 128;
	index = calloc(cap, sizeof(*index));
	if (!index)
		return -ENOMEM;
	free(gs->index);
	gs->index = index;
	gs->index_cap = cap;
	for (i = 0; i < gs->n; i++)
		gs->index[group_slot(gs, gs->g[i].kind, gs->g[i].name)] = i + 1;
	return 0;
}

char *group_name(const struct mmkit_region *r)
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

struct group *groups_get(struct groups *gs, enum mmkit_region_kind kind, const char *name)
{
	struct group *g;
	size_t slot;

	slot = gs->index_cap ? group_slot(gs, kind, name) : 0;
	if (gs->index_cap && gs->index[slot])
		return &gs->g[gs->index[slot] - 1];
	if (groups_grow(gs))
		return NULL;
	g = &gs->g[gs->n];
	memset(g, 0, sizeof(*g));
	g->name = strdup(name);
	if (!g->name)
		return NULL;
	g->kind = kind;
	gs->n++;
	gs->index[group_slot(gs, kind, name)] = gs->n;
	return g;
}

void group_add(struct group *g, const struct mmkit_region *r)
{
	g->mappings++;
	g->v[V_SIZE] += r->size;
	g->v[V_RSS] += r->rss;
	g->v[V_PSS] += r->pss;
	g->v[V_PRIVATE_DIRTY] += r->private_dirty;
	g->v[V_USS] += r->private_clean + r->private_dirty;
	g->v[V_SWAP] += r->swap;
	g->v[V_LOCKED] += r->locked;
}

void group_sum(struct group *to, const struct group *from)
{
	int j;

	to->mappings += from->mappings;
	for (j = 0; j < V_NVALUES; j++)
		to->v[j] += from->v[j];
}

void groups_free(struct groups *gs)
{
	size_t i;

	for (i = 0; i < gs->n; i++)
		free(gs->g[i].name);
	free(gs->g);
	free(gs->index);
	memset(gs, 0, sizeof(*gs));
}

const char *group_source(enum mmkit_region_kind kind)
{
	return kind == MMKIT_REGION_REGISTRY ? "registry" : "kernel";
}

/* One process being read: its own names, and what the filter lets through. */
struct reading {
	struct groups names;
	struct fleet_proc *p;
	const char *glob;
};

static int add_region(const struct mmkit_region *r, void *arg)
{
	struct reading *rd = arg;
	char *name = group_name(r);
	struct group *g = NULL;

	if (name && (!rd->glob || !fnmatch(rd->glob, name, 0)))
		g = groups_get(&rd->names, r->kind, name);
	else if (name) {
		free(name);
		return 0;
	}
	free(name);
	if (!g)
		return -ENOMEM;
	group_add(g, r);
	/* Its copies written are anonymous, mapped once: the rest of its PSS is page cache. */
	if (r->flags & MMKIT_REGION_REFPAGE && r->pss > r->anonymous)
		rd->p->refpage_cache += r->pss - r->anonymous;
	if (r->kind == MMKIT_REGION_FILE && !strcmp(r->name, CLI_SECRETMEM_NAME))
		rd->p->secret_mapped += r->size;
	return 0;
}

/* Adds the process just read to the machine's table; -ENOMEM. */
static int merge(struct fleet *f, struct reading *rd)
{
	struct group *to;
	size_t i;
	int j;

	f->read++;
	for (i = 0; i < rd->names.n; i++) {
		const struct group *g = &rd->names.g[i];

		to = groups_get(&f->names, g->kind, g->name);
		if (!to)
			return -ENOMEM;
		group_sum(to, g);
		to->processes++;
		rd->p->mappings += g->mappings;
		for (j = 0; j < V_NVALUES; j++)
			rd->p->v[j] += g->v[j];
	}
	/* A kernel thread, or a process none of whose names the filter takes. */
	if (rd->names.n)
		f->nprocs++;
	return 0;
}

/* Reads process @pid; 0 also when it is skipped (and counted), -ENOMEM. */
static int scan_pid(struct fleet *f, const struct fleet_filter *flt, int proc, pid_t pid)
{
	struct reading rd = { .glob = flt->name_glob };
	enum mmkit__proc_kind kind;
	struct fleet_proc *p;
	char name[16];
	struct stat st;
	int procfd, ret;

	snprintf(name, sizeof(name), "%d", (int)pid);
	procfd = openat(proc, name, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (procfd < 0 || fstat(procfd, &st) || (flt->by_user && st.st_uid != flt->uid)) {
		if (procfd < 0)
			f->gone++;
		else
			close(procfd);
		return 0;
	}
	if (f->nprocs == f->procs_cap) {
		size_t cap = f->procs_cap ? 2 * f->procs_cap : 256;
		struct fleet_proc *bigger = reallocarray(f->procs, cap, sizeof(*bigger));

		if (!bigger) {
			close(procfd);
			return -ENOMEM;
		}
		f->procs = bigger;
		f->procs_cap = cap;
	}
	p = rd.p = &f->procs[f->nprocs];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	p->uid = st.st_uid;
	cli_read_command(procfd, p->command, sizeof(p->command));
	if (flt->secrets)
		cli_secret_fds(procfd, &p->secret_fds, &p->secret_fd_bytes);
	ret = mmkit_regions(pid, add_region, &rd);
	/*
	 * A process that exited while it was read gave its memory back halfway
	 * (smaps ends early): a zombie now, or gone, it is not counted.
	 */
	if (!ret) {
		/* (A stat line that does not parse, a comm with a newline, says nothing.) */
		int k = mmkit__proc_kind(procfd, "stat", &kind);

		if (k == -ESRCH || k == -ENOENT || (!k && kind == MMKIT__PROC_ZOMBIE))
			ret = -ESRCH;
	}
	close(procfd);
	if (!ret)
		ret = merge(f, &rd);
	else if (ret == -ESRCH || ret == -ENOENT)
		f->gone++;
	else if (ret == -EACCES || ret == -EPERM)
		f->denied++;
	else if (ret != -ENOMEM)
		f->failed++;
	groups_free(&rd.names);
	return ret == -ENOMEM ? ret : 0;
}

/* "PID[,PID...]" into @flt's list; -EINVAL. */
static int parse_pids(const char *list, struct fleet_filter *flt)
{
	char word[16];
	size_t len;

	do {
		len = strcspn(list, ",");
		if (!len || len >= sizeof(word) || flt->npids == FLEET_MAX_PIDS)
			return -EINVAL;
		memcpy(word, list, len);
		word[len] = '\0';
		if (cli_parse_pid(word, &flt->pids[flt->npids]))
			return -EINVAL;
		flt->npids++;
		list += len;
	} while (*list++ == ',');
	return 0;
}

static int parse_user(const char *user, struct fleet_filter *flt)
{
	struct passwd *pw = getpwnam(user);
	unsigned long uid;
	char *end;

	flt->by_user = 1;
	if (pw) {
		flt->uid = pw->pw_uid;
		return 0;
	}
	errno = 0;
	uid = strtoul(user, &end, 10);
	if (!isdigit((unsigned char)*user) || *end || errno || uid > UINT32_MAX - 1)
		return -EINVAL;
	flt->uid = (uid_t)uid;
	return 0;
}

int fleet_option(const char *cmd, int argc, char **argv, int *i, struct fleet_filter *flt,
		 int missing)
{
	const char *value = NULL;

	/* @missing: the command's own option came without its value. */
	if (!missing && (value = cli_option_value("--name", argc, argv, i, &missing))) {
		flt->name_glob = value;
		return 0;
	} else if (!missing && (value = cli_option_value("--user", argc, argv, i, &missing))) {
		if (!parse_user(value, flt))
			return 0;
		cli_error("%s: --user: no user '%s' (a name or a number)", cmd, value);
		return -1;
	} else if (!missing && (value = cli_option_value("--pid", argc, argv, i, &missing))) {
		if (!parse_pids(value, flt))
			return 0;
		cli_error("%s: --pid: '%s' is not a list of PIDs (positive numbers, "
			  "comma-separated, up to %d)", cmd, value, FLEET_MAX_PIDS);
		return -1;
	}
	if (missing)
		cli_error("%s: %s needs a value (mmkit %s --help: its usage)", cmd, argv[*i], cmd);
	else if (argv[*i][0] == '-')
		cli_error("%s: unknown option '%s' (mmkit %s --help: its usage)", cmd, argv[*i], cmd);
	else
		cli_error("%s: unexpected argument '%s' (processes are chosen with --pid)", cmd,
			  argv[*i]);
	return -1;
}

/* The PIDs of /proc, or those of the filter, into *@pids; -errno. */
static int list_pids(DIR *proc, const struct fleet_filter *flt, pid_t **pids, size_t *n)
{
	size_t cap = flt->npids ? flt->npids : 1024;
	struct dirent *de;
	pid_t *bigger;
	char *end;
	long pid;

	*n = 0;
	*pids = reallocarray(NULL, cap, sizeof(**pids));
	if (!*pids)
		return -ENOMEM;
	if (flt->npids) {
		memcpy(*pids, flt->pids, flt->npids * sizeof(**pids));
		*n = flt->npids;
		return 0;
	}
	while ((de = readdir(proc))) {
		if (!isdigit((unsigned char)de->d_name[0]))
			continue;
		pid = strtol(de->d_name, &end, 10);
		if (*end || pid <= 0 || pid > INT32_MAX)
			continue;
		if (*n == cap) {
			bigger = reallocarray(*pids, cap * 2, sizeof(**pids));
			if (!bigger)
				return -ENOMEM;
			*pids = bigger;
			cap *= 2;
		}
		(*pids)[(*n)++] = (pid_t)pid;
	}
	return 0;
}

/* One scanning thread: its own table, the PIDs taken from a shared counter. */
struct worker {
	struct fleet f;
	const struct fleet_filter *flt;
	int proc;
	const pid_t *pids;
	size_t npids;
	atomic_size_t *next;
	int ret;
	pthread_t thread;
};

static void *work(void *arg)
{
	struct worker *w = arg;
	size_t i;

	while (!w->ret && (i = atomic_fetch_add(w->next, 1)) < w->npids)
		w->ret = scan_pid(&w->f, w->flt, w->proc, w->pids[i]);
	return NULL;
}

/* Adds @from's names, processes and counts to @to; -ENOMEM. */
static int fleet_merge(struct fleet *to, const struct fleet *from)
{
	struct fleet_proc *bigger;
	struct group *g;
	size_t i;

	for (i = 0; i < from->names.n; i++) {
		g = groups_get(&to->names, from->names.g[i].kind, from->names.g[i].name);
		if (!g)
			return -ENOMEM;
		group_sum(g, &from->names.g[i]);
		g->processes += from->names.g[i].processes;
	}
	if (to->nprocs + from->nprocs > to->procs_cap) {
		bigger = reallocarray(to->procs, to->nprocs + from->nprocs, sizeof(*bigger));
		if (!bigger)
			return -ENOMEM;
		to->procs = bigger;
		to->procs_cap = to->nprocs + from->nprocs;
	}
	if (from->nprocs)
		memcpy(to->procs + to->nprocs, from->procs, from->nprocs * sizeof(*to->procs));
	to->nprocs += from->nprocs;
	to->read += from->read;
	to->gone += from->gone;
	to->denied += from->denied;
	to->failed += from->failed;
	return 0;
}

/*
 * The processes are read by as many threads as there are CPUs (up to
 * FLEET_THREADS, one per 32 processes): the kernel's work of writing each
 * smaps is most of the cost, and it is the reading thread's.
 */
int fleet_scan(struct fleet *f, const struct fleet_filter *flt)
{
	struct worker w[FLEET_THREADS] = { 0 };
	atomic_size_t next = 0;
	size_t npids = 0, i, n;
	pid_t *pids = NULL;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	DIR *proc;
	int ret;

	memset(f, 0, sizeof(*f));
	proc = opendir("/proc");
	if (!proc) {
		ret = -errno;
		cli_error("/proc: %s", strerror(-ret));
		return ret;
	}
	ret = list_pids(proc, flt, &pids, &npids);
	n = cpus > 1 ? (size_t)cpus : 1;
	if (n > FLEET_THREADS)
		n = FLEET_THREADS;
	if (n > npids / 32 + 1)
		n = npids / 32 + 1;
	for (i = 0; !ret && i < n; i++) {
		w[i].flt = flt;
		w[i].proc = dirfd(proc);
		w[i].pids = pids;
		w[i].npids = npids;
		w[i].next = &next;
		/* The first in this thread; one that cannot start leaves its share to the others. */
		if (i && pthread_create(&w[i].thread, NULL, work, &w[i]))
			n = i;
	}
	if (!ret)
		work(&w[0]);
	for (i = 1; !ret && i < n; i++)
		pthread_join(w[i].thread, NULL);
	/* (ret is list_pids()'s: no thread was started if it failed.) */
	for (i = 0; !ret && i < n; i++)
		ret = w[i].ret;
	for (i = 0; !ret && i < n; i++)
		ret = fleet_merge(f, &w[i].f);
	for (i = 0; i < n; i++)
		fleet_free(&w[i].f);
	free(pids);
	closedir(proc);
	if (ret) {
		fleet_free(f);
		cli_error("reading the processes: %s", strerror(-ret));
	}
	return ret;
}

void fleet_free(struct fleet *f)
{
	groups_free(&f->names);
	free(f->procs);
	memset(f, 0, sizeof(*f));
}
