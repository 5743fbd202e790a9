// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The registry: where mmkit_name() keeps names when the kernel cannot
 * (names.c), so that other processes can read them (names-read.c).  This
 * file holds the names themselves and what naming a range does to them;
 * names-memfd.c shows them to other processes, in a sealed memfd it only
 * writes.  Apart because they change for different reasons: that file is
 * the protocol its readers follow (seals, seq, snapshots), this one what
 * this process believes:
 *  - the names are in process-private memory (struct mmkit__registry's t), which
 *    mmkit_regions(0) copies; the memfd is never read back: nothing a peer
 *    does to the file can change them;
 *  - a mutex (its lock) serialises the writers (threads of this process),
 *    here and in names-memfd.c; the pthread_atfork() handlers here hold it
 *    across fork() and give the child a memfd of its own.
 *
 * Naming walks the VMAs like the kernel's madvise_walk_vmas(): holes are
 * skipped and -ENOMEM returned at the end, the mapped parts being named; a
 * VMA with a file stops the walk with -EBADF, the VMAs before it staying
 * named.  MAP_SHARED | MAP_ANONYMOUS memory can be named, as since Linux
 * 6.2 (6.1 refused it with EBADF too).  The VMAs come from PROCMAP_QUERY
 * (Linux 6.11+: a few ioctls, whatever the number of VMAs) or else from
 * /proc/self/maps, read only up to the end of the range.  Naming a range
 * replaces what the registry had for it, trimming and splitting older
 * entries as the kernel splits VMAs: a binary search and one memmove() of
 * the entries after it.
 *
 * Names follow the range through munmap: readers apply a registry name
 * only to addresses that are anonymous memory now, so the name of an
 * unmapped range disappears from every report at once.  The entry itself
 * goes when a later mmkit_name() covers the hole, or when the registry has
 * doubled and the whole of /proc/self/maps is read to drop every entry of
 * unmapped memory (registry_prune()).  The gap: a range unmapped with plain
 * munmap() (or replaced by mmap(MAP_FIXED)) and mapped again at the same
 * address (which the kernel readily reuses) keeps its old name until it is
 * renamed or cleared.  Nothing cheap and sound tells the new mapping from
 * the old one: /proc shows no identity for anonymous VMAs, and marking
 * them with a madvise() flag would change how they behave.  Likewise
 * mremap() moves memory without its name.  So: clear a name (name NULL)
 * before munmap().  The library's own unmaps and moves close the gap for
 * what they unmap (mmkit__registry_moved()).  The prctl path has none of
 * these gaps: there the name belongs to the VMA.
 *
 * The same code keeps the registries of other processes in a supervisor
 * (mmkit run --names: cli/names-supervise.c), one struct mmkit__registry
 * each, walking their VMAs in /proc/TID/maps while the naming thread waits
 * for the answer.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "names.h"
#include "procfs.h"

/* This process's registry, for mmkit_name(). */
static struct mmkit__registry self = MMKIT__REGISTRY_INIT;
static int atfork_state;		/* mmkit__atfork_register()'s */

/*
 * Names [start, end) @name (NULL: no name) in the sorted array @e of *@n
 * entries, which has room for 2 more: trims or splits the entries it
 * overlaps, as the kernel splits VMAs, and joins equal neighbours.  A
 * binary search and one memmove() of the entries after the range.
 * Returns the first entry changed; *@last (if not NULL) gets the end of
 * the entries changed.
 */
size_t mmkit__ranges_set(struct mmkit__name_range *e, size_t *n, uint64_t start, uint64_t end,
			 const char *name, size_t *last)
{
	struct mmkit__name_range rep[3];
	size_t i = 0, j, k = 0, lo, hi, cnt = *n, p, first;
	int moved;

	/* i: the first entry ending after start; j: the first starting at or after end. */
	for (hi = cnt; i < hi;) {
		p = i + (hi - i) / 2;
		if (e[p].end > start)
			hi = p;
		else
			i = p + 1;
	}
	for (j = i, hi = cnt; j < hi;) {
		p = j + (hi - j) / 2;
		if (e[p].start >= end)
			hi = p;
		else
			j = p + 1;
	}
	if (i < j && e[i].start < start) {
		rep[k] = e[i];
		rep[k++].end = start;
	}
	if (name) {
		rep[k].start = start;
		rep[k].end = end;
		snprintf(rep[k++].name, MMKIT_NAME_MAX, "%s", name);
	}
	if (i < j && e[j - 1].end > end) {
		rep[k] = e[j - 1];
		rep[k++].start = end;
	}
	moved = j != i + k;
	memmove(&e[i + k], &e[j], (cnt - j) * sizeof(*e));
	memcpy(&e[i], rep, k * sizeof(*e));
	cnt = cnt - (j - i) + k;
	first = i;
	/* Only pairs around the change, (i - 1, i) to (i + k - 1, i + k), can be equal neighbours. */
	lo = i ? i : 1;
	hi = i + k < cnt ? i + k : cnt - 1;
	for (p = hi; cnt && p >= lo; p--) {
		if (e[p - 1].end != e[p].start || strcmp(e[p - 1].name, e[p].name))
			continue;
		e[p - 1].end = e[p].end;
		memmove(&e[p], &e[p + 1], (cnt - p - 1) * sizeof(*e));
		cnt--;
		moved = 1;
		first = p - 1 < first ? p - 1 : first;
	}
	*n = cnt;
	if (last)
		*last = moved ? cnt : i + k;
	return first;
}

/* Joins neighbours with the same name; returns the new count. */
static size_t table_merge(struct mmkit__name_range *e, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (k && e[k - 1].end == e[i].start && !strcmp(e[k - 1].name, e[i].name))
			e[k - 1].end = e[i].end;
		else
			e[k++] = e[i];
	}
	return k;
}

/* Keeps of @t only what lies in nameable VMAs of @v: names of unmapped ranges go. */
static int table_clip(struct mmkit__name_table *t, const struct mmkit__span *v, size_t nv)
{
	struct mmkit__name_range *e;
	size_t i = 0, j = 0, k = 0;

	e = mmkit__calloc(t->n + nv + 1, sizeof(*e));
	if (!e)
		return -ENOMEM;
	while (i < t->n && j < nv) {
		if (!v[j].nameable || v[j].end <= t->e[i].start) {
			j++;
			continue;
		}
		if (t->e[i].end <= v[j].start) {
			i++;
			continue;
		}
		e[k] = t->e[i];
		if (e[k].start < v[j].start)
			e[k].start = v[j].start;
		if (e[k].end > v[j].end)
			e[k].end = v[j].end;
		k++;
		if (t->e[i].end <= v[j].end)
			i++;
		else
			j++;
	}
	free(t->e);
	t->e = e;
	t->n = table_merge(e, k);
	return 0;
}

static int vsyscall(const struct mmkit__vma *v)
{
	return mmkit__vma_path_is(v, "[vsyscall]");
}

/*
 * 1 if the kernel would name @v: madvise_vma_anon_name() refuses a VMA with
 * a file (EBADF) unless it is anonymous shared memory.  Files show a path;
 * anonymous and special mappings none or [...].  Reference pages of a file
 * too: the registry names them where the kernel cannot.  @after_kernel:
 * the kernel refused the range (EBADF), and the registry takes only the
 * reference pages it cannot name: anonymous shared memory, which the
 * kernel refuses before 6.2, stays refused as the kernel answered.
 */
static int vma_nameable(const struct mmkit__vma *v, int after_kernel)
{
	return !v->path_len || v->path[0] == '[' ||
	       ((mmkit__vma_anon_shmem(v) || mmkit__vma_memfd(v)) && !after_kernel) ||
	       mmkit__vma_refpage(v);
}

/*
 * The VMAs of this process, in address order, one at a time: by
 * PROCMAP_QUERY where the kernel has it (6.11+), so that naming a range
 * costs a few ioctls whatever the number of VMAs; else from the text of
 * /proc/self/maps, read only as far as the range.
 */
struct vma_iter {
	struct mmkit__lines maps;
	int text;		/* no PROCMAP_QUERY: parsing the text */
	int after_kernel;	/* see vma_nameable() */
	char name[PATH_MAX + 16];	/* PROCMAP_QUERY's name of the VMA */
};

/* The maps file of process @tid (0: this one) into @buf of @len bytes. */
static void maps_path(pid_t tid, char *buf, size_t len)
{
	if (tid)
		snprintf(buf, len, "/proc/%d/maps", (int)tid);
	else
		snprintf(buf, len, "/proc/self/maps");
}

static int vma_open(struct vma_iter *it, pid_t tid, int after_kernel)
{
	char path[64];

	maps_path(tid, path, sizeof(path));
	it->text = 0;
	it->after_kernel = after_kernel;
	return mmkit__lines_open(&it->maps, AT_FDCWD, path);
}

/* The first VMA ending after @addr into @s: 1, or 0 if there is none.  @addr only rises. */
static int vma_next(struct vma_iter *it, uint64_t addr, struct mmkit__span *s)
{
	const char *line, *eol;
	struct procmap_query q;
	struct mmkit__vma v;
	int ret, named;

	for (named = 1; !it->text; named = 0) {
		memset(&q, 0, sizeof(q));
		q.size = sizeof(q);
		q.query_flags = PROCMAP_QUERY_COVERING_OR_NEXT_VMA;
		q.query_addr = addr;
		if (named) {
			q.vma_name_addr = (uintptr_t)it->name;
			q.vma_name_size = sizeof(it->name);
		}
		ret = sys_ioctl(it->maps.fd, PROCMAP_QUERY, &q);
		/* A path too long for the buffer is a file's: ask again without it. */
		if (ret == -ENAMETOOLONG && named)
			continue;
		if (ret == -ENOENT)
			return 0;
		if (!ret) {
			s->start = q.vma_start;
			s->end = q.vma_end;
			v.path = it->name;
			v.path_len = q.vma_name_size ? q.vma_name_size - 1 : 0;
			v.perms[3] = q.vma_flags & PROCMAP_QUERY_VMA_SHARED ? 's' : 'p';
			v.dev_major = q.dev_major;
			v.dev_minor = q.dev_minor;
			s->nameable = !q.inode || mmkit__vma_refpage(&v) ||
				      ((mmkit__vma_anon_shmem(&v) || mmkit__vma_memfd(&v)) &&
				       !it->after_kernel);
			return 1;
		}
		if (ret != -ENOTTY)
			return ret;
		it->text = 1;
	}
	while ((ret = mmkit__lines_next(&it->maps, &line, &eol)) == 1) {
		if (mmkit__vma_parse(line, eol, &v) || v.end <= addr || vsyscall(&v))
			continue;
		s->start = v.start;
		s->end = v.end;
		s->nameable = vma_nameable(&v, it->after_kernel);
		return 1;
	}
	return ret;
}

/* All the VMAs of process @tid (0: this one), for pruning the registry. */
ssize_t mmkit__vma_spans(pid_t tid, struct mmkit__span **out)
{
	struct mmkit__lines maps;
	const char *line, *eol;
	struct mmkit__span *s = NULL, *bigger;
	size_t n = 0, cap = 0;
	struct mmkit__vma v;
	char path[64];
	int ret;

	maps_path(tid, path, sizeof(path));
	ret = mmkit__lines_open(&maps, AT_FDCWD, path);
	if (ret)
		return ret;
	while ((ret = mmkit__lines_next(&maps, &line, &eol)) == 1) {
		if (mmkit__vma_parse(line, eol, &v) || vsyscall(&v))
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			bigger = mmkit__reallocarray(s, cap, sizeof(*s));
			if (!bigger) {
				ret = -ENOMEM;
				break;
			}
			s = bigger;
		}
		s[n].start = v.start;
		s[n].end = v.end;
		s[n++].nameable = vma_nameable(&v, 0);
	}
	mmkit__lines_close(&maps);
	if (ret < 0) {
		free(s);
		return ret;
	}
	*out = s;
	return (ssize_t)n;
}

static void atfork_prepare(void)
{
	pthread_mutex_lock(&self.lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&self.lock);
}

/* The child's writes must not reach the parent's registry: it gets its own copy. */
static void atfork_child(void)
{
	mmkit__names_memfd_fork(&self.memfd, &self.t);
	pthread_mutex_unlock(&self.lock);
}

MMKIT__ATFORK_HANDLERS(reg_fork, atfork_prepare, atfork_parent, atfork_child)

/* Makes sure r->t has room for @need entries.  Lock held. */
static int table_room(struct mmkit__registry *r, size_t need)
{
	struct mmkit__name_range *e;
	size_t room = r->room ? r->room : 64;

	if (need <= r->room)
		return 0;
	while (room < need)
		room *= 2;
	e = mmkit__reallocarray(r->t.e, room, sizeof(*e));
	if (!e)
		return -ENOMEM;
	r->t.e = e;
	r->room = room;
	return 0;
}

/* Names [start, end) @name (NULL: no name) in the registry.  Lock held. */
static int registry_set(struct mmkit__registry *r, uint64_t start, uint64_t end,
			const char *name)
{
	size_t first, last;
	int ret;

	if (!r->t.n && !name)
		return 0;
	ret = table_room(r, r->t.n + 2);
	if (!ret)
		ret = mmkit__names_memfd_ready(&r->memfd, &r->t, r->t.n + 2);
	if (ret)
		return ret;
	first = mmkit__ranges_set(r->t.e, &r->t.n, start, end, name, &last);
	mmkit__names_memfd_publish(&r->memfd, &r->t, first, last);
	if (name)
		__atomic_store_n(&r->used, 1, __ATOMIC_RELEASE);
	return 0;
}

/*
 * Drops the names of ranges no longer mapped, once the registry has doubled
 * since the last time: reading all of /proc/self/maps costs as much as the
 * process has VMAs, so it is not done on every call.  Best effort, lock
 * held: a failure only leaves stale entries, which readers ignore anyway.
 */
static void registry_prune(struct mmkit__registry *r, pid_t tid)
{
	struct mmkit__span *v = NULL;
	size_t room = r->t.n + 1;
	ssize_t nv;

	if (r->t.n < r->prune_at)
		return;
	nv = mmkit__vma_spans(tid, &v);
	if (nv < 0)
		return;
	room += (size_t)nv;
	if (!table_clip(&r->t, v, (size_t)nv)) {
		r->room = room;
		r->prune_at = 2 * r->t.n > MMKIT__REGISTRY_PRUNE_MIN ? 2 * r->t.n :
			      MMKIT__REGISTRY_PRUNE_MIN;
		mmkit__names_memfd_publish(&r->memfd, &r->t, 0, r->t.n);
	}
	free(v);
}

/*
 * madvise_walk_vmas() over registry @r of process @tid (0: this one).
 * Holes are skipped (-ENOMEM at the end) and whatever name the registry
 * had there is stale, so it goes; a file stops the walk with -EBADF.
 * @after_kernel: see vma_nameable().
 */
static int registry_walk(struct mmkit__registry *r, pid_t tid, uint64_t start, uint64_t end,
			 const char *name, int after_kernel)
{
	struct vma_iter it;
	uint64_t cur = start, to;
	int ret, found, unmapped = 0;
	struct mmkit__span s = { 0, 0, 0 };

	/*
	 * Before this process's first memfd is made, and not under its lock
	 * (util.c says why).  A supervisor's registries are of other
	 * processes, which fork without it.
	 */
	if (r == &self) {
		ret = mmkit__atfork_register(&atfork_state, reg_fork_prepare, reg_fork_parent,
					     reg_fork_child);
		if (ret)
			return ret;
	}
	pthread_mutex_lock(&r->lock);
	ret = vma_open(&it, tid, after_kernel);
	while (!ret && cur < end) {
		found = vma_next(&it, cur, &s);
		if (found < 0) {
			ret = found;
			break;
		}
		if (!found || s.start >= end) {
			ret = registry_set(r, cur, end, NULL);
			unmapped = -ENOMEM;
			break;
		}
		if (cur < s.start) {
			ret = registry_set(r, cur, s.start, NULL);
			unmapped = -ENOMEM;
			cur = s.start;
			if (ret)
				break;
		}
		if (!s.nameable) {
			mmkit__error_detail(-EBADF, "%#llx-%#llx is a file mapping (a file, a memfd, a secret of memfd_secret), which cannot be named: only anonymous memory and reference pages can",
					    (unsigned long long)s.start, (unsigned long long)s.end);
			ret = -EBADF;
			break;
		}
		to = s.end < end ? s.end : end;
		ret = registry_set(r, cur, to, name);
		cur = to;
	}
	if (it.maps.fd >= 0)
		mmkit__lines_close(&it.maps);
	if (!ret && unmapped) {
		mmkit__error_detail(unmapped, "part of [%#llx, %#llx) is not mapped (its mapped parts are named)",
				    (unsigned long long)start, (unsigned long long)end);
		ret = unmapped;
	}
	registry_prune(r, tid);
	mmkit__names_memfd_snapshot(&r->memfd, &r->t);
	pthread_mutex_unlock(&r->lock);
	return ret;
}

int mmkit__registry_name(uint64_t start, uint64_t end, const char *name, int after_kernel)
{
	return registry_walk(&self, 0, start, end, name, after_kernel);
}

int mmkit__registry_name_of(struct mmkit__registry *r, pid_t tid, uint64_t start, uint64_t end,
			    const char *name)
{
	return registry_walk(r, tid, start, end, name, 0);
}

int mmkit__registry_fill(struct mmkit__registry *r, const struct mmkit__name_range *e, size_t n)
{
	int ret;

	pthread_mutex_lock(&r->lock);
	ret = table_room(r, n + 2);
	if (!ret) {
		if (n)
			memcpy(r->t.e, e, n * sizeof(*e));
		r->t.n = n;
		ret = mmkit__names_memfd_ready(&r->memfd, &r->t, n + 2);
	}
	if (!ret)
		mmkit__names_memfd_publish(&r->memfd, &r->t, 0, n);
	pthread_mutex_unlock(&r->lock);
	return ret;
}

int mmkit__registry_memfd(struct mmkit__registry *r, struct stat *st)
{
	int ret;

	pthread_mutex_lock(&r->lock);
	ret = table_room(r, r->t.n + 2);
	if (!ret)
		ret = mmkit__names_memfd_ready(&r->memfd, &r->t, r->t.n + 2);
	if (!ret)
		ret = sys_fstat(r->memfd.fd, st);
	pthread_mutex_unlock(&r->lock);
	return ret ? ret : r->memfd.fd;
}

void mmkit__registry_release(struct mmkit__registry *r)
{
	mmkit__names_memfd_release(&r->memfd);
	free(r->t.e);
	r->t.e = NULL;
	r->t.n = 0;
	r->room = 0;
}

ssize_t mmkit__registry_copy(struct mmkit__name_range **out)
{
	struct mmkit__name_range *e = NULL;
	ssize_t n;

	pthread_mutex_lock(&self.lock);
	n = (ssize_t)self.t.n;
	if (n) {
		e = mmkit__calloc(self.t.n, sizeof(*e));
		if (e)
			memcpy(e, self.t.e, self.t.n * sizeof(*e));
		else
			n = -ENOMEM;
	}
	pthread_mutex_unlock(&self.lock);
	*out = e;
	return n;
}

/*
 * The library's own unmaps and moves (refpage.c, secret.c) take the names of what
 * they unmap or move along, which the registry could not see otherwise
 * (the gap above).  A process that never stored a name takes no lock: a
 * preloaded allocator may unmap with its own lock held, and the fork
 * handlers here would then take the two in the other order.
 */
int mmkit__registry_named(void)
{
	return __atomic_load_n(&self.used, __ATOMIC_ACQUIRE);
}

/*
 * The entries of @r over [@from, @from + @keep), clipped to it, with
 * offsets from @from, into *@moved (malloc'ed, NULL if none); then the
 * names of [@from, @from + @len) go.  How many, or -errno.  Lock held.
 */
static ssize_t registry_take(struct mmkit__registry *r, uint64_t from, uint64_t len,
			     uint64_t keep, struct mmkit__name_range **moved)
{
	size_t i, j, n = 0;
	int ret;

	*moved = NULL;
	for (i = 0; i < r->t.n && keep && r->t.e[i].start < from + keep; i++)
		n += r->t.e[i].end > from;
	if (n) {
		*moved = mmkit__calloc(n, sizeof(**moved));
		if (!*moved)
			return -ENOMEM;
	}
	for (i = 0, j = 0; j < n; i++) {
		if (r->t.e[i].end <= from)
			continue;
		(*moved)[j] = r->t.e[i];
		(*moved)[j].start = ((*moved)[j].start > from ? (*moved)[j].start : from) - from;
		(*moved)[j].end = ((*moved)[j].end < from + keep ? (*moved)[j].end : from + keep) -
				  from;
		j++;
	}
	ret = len ? registry_set(r, from, from + len, NULL) : 0;
	if (ret) {
		free(*moved);
		*moved = NULL;
	}
	return ret ? ret : (ssize_t)n;
}

/*
 * Puts the @n entries @moved (offsets) at @to, over [@to, @to + @span)
 * whose stale names go first.  Lock held.
 */
static int registry_put(struct mmkit__registry *r, uint64_t to, uint64_t span,
			const struct mmkit__name_range *moved, size_t n)
{
	size_t i;
	int ret = span ? registry_set(r, to, to + span, NULL) : 0;

	for (i = 0; !ret && i < n; i++)
		ret = registry_set(r, to + moved[i].start, to + moved[i].end, moved[i].name);
	return ret;
}

int mmkit__registry_moved(uint64_t from, uint64_t len, uint64_t keep, uint64_t to)
{
	struct mmkit__name_range *moved;
	ssize_t n;
	int ret;

	if (!mmkit__registry_named())
		return 0;
	pthread_mutex_lock(&self.lock);
	n = registry_take(&self, from, len, keep, &moved);
	/* Whatever stale name the destination had (a plain munmap's) goes too. */
	ret = n < 0 ? (int)n : registry_put(&self, to, keep, moved, (size_t)n);
	free(moved);
	mmkit__names_memfd_snapshot(&self.memfd, &self.t);
	pthread_mutex_unlock(&self.lock);
	return ret;
}

ssize_t mmkit__registry_take(struct mmkit__registry *r, uint64_t from, uint64_t len,
			     uint64_t keep, struct mmkit__name_range **moved)
{
	ssize_t n;
	int ret;

	pthread_mutex_lock(&r->lock);
	n = registry_take(r, from, len, keep, moved);
	/* Room for the entries put back later: no new memfd is needed then. */
	/* Each registry_set() of put adds 2 entries at most: the clear, n entries, a grown part. */
	ret = n < 0 ? 0 : table_room(r, r->t.n + 2 * (size_t)n + 8);
	if (!ret && n >= 0)
		ret = mmkit__names_memfd_ready(&r->memfd, &r->t, r->t.n + 2 * (size_t)n + 8);
	mmkit__names_memfd_snapshot(&r->memfd, &r->t);
	pthread_mutex_unlock(&r->lock);
	if (ret) {
		free(*moved);
		*moved = NULL;
		return ret;
	}
	return n;
}

int mmkit__registry_put(struct mmkit__registry *r, uint64_t to, uint64_t span,
			const struct mmkit__name_range *moved, size_t n)
{
	int ret;

	pthread_mutex_lock(&r->lock);
	ret = registry_put(r, to, span, moved, n);
	mmkit__names_memfd_snapshot(&r->memfd, &r->t);
	pthread_mutex_unlock(&r->lock);
	return ret;
}
