// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The registry: where mmkit_name() keeps names when the kernel cannot
 * (names.c), so that other processes can read them (names-read.c).
 *  - the names themselves are in process-private memory (reg.t), which
 *    mmkit_regions(0) copies; the memfd "mmkit-names" (MFD_CLOEXEC) only
 *    shows them to other processes, and is never read back: nothing a
 *    peer does to the file can change what this process believes;
 *  - the memfd is sealed (registry_create()): only this process's mapping
 *    can write it, and nobody can shrink it (which would make our writes
 *    fault) or grow it.  It holds struct mmkit__registry_header, then two
 *    areas of `cap` entries: the live one, `count` entries sorted by start,
 *    not overlapping, and a snapshot.  Room runs out: a new memfd twice
 *    as large replaces it;
 *  - a mutex serialises the writers (threads of this process); `seq` is odd
 *    while one changes the live entries, and a reader that sees it odd, or
 *    changed across its read, reads again (names-read.c: it backs off, and
 *    reads anyway, checking each entry, a seq left odd by a writer that
 *    died);
 *  - a reader that a busy writer never lets finish asks for a snapshot by
 *    holding a read lock on the file (all a reader may do to it): at the
 *    end of its next call the writer brings the snapshot area up to date,
 *    and leaves it alone while a reader reads it (for a while).  The writer
 *    never waits for a reader, and snapshots are rationed to a few per
 *    cent of its time (registry_snapshot());
 *  - another process finds the registry by the link
 *    "/memfd:mmkit-names (deleted)" in /proc/PID/fd and reads it through
 *    /proc/PID/fd/N: the same PTRACE_MODE_READ access /proc/PID/smaps takes
 *    (same user and dumpable, or root);
 *  - fork: a pthread_atfork() handler gives the child a copy in a memfd of
 *    its own, so parent and child never write each other's names (a child
 *    made by a raw clone() without the handlers would share it), and closes
 *    the child's descriptor of the parent's only if it is still that file;
 *  - a program that closes descriptors it does not know (closefrom) hides
 *    its registry until its next mmkit_name(), which notices that the
 *    descriptor is no longer the memfd and makes a new one.
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
 * before munmap().  The prctl path has none of these gaps: there the name
 * belongs to the VMA.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "names.h"
#include "procfs.h"

/* Registry size below which unmapped ranges are not looked for (registry_prune()). */
#define PRUNE_MIN		64

/* An array of named ranges, sorted by start, not overlapping. */
struct table {
	struct mmkit__name_range *e;
	size_t n;
};

static struct {
	pthread_mutex_t lock;
	struct table t;			/* the names: what the memfd shows is a copy */
	size_t room;			/* entries t.e has room for */
	int fd;				/* -1 until the first name is stored */
	struct mmkit__registry_header *hdr;	/* the memfd, mapped MAP_SHARED: only written */
	size_t cap;			/* entries each area of the memfd holds */
	dev_t dev;			/* the file fd must still refer to */
	ino_t ino;
	uint32_t seq;			/* the live entries' seq, even */
	uint32_t snap_seq;		/* the snapshot's seq, even */
	uint32_t snap_of;		/* the live seq the snapshot is a copy of */
	size_t snap_from, snap_to;	/* entries changed since the snapshot */
	size_t snap_faulted;		/* entries of the snapshot area faulted in */
	uint64_t snap_made;		/* when the snapshot was made (ns) */
	int64_t snap_budget;		/* ns that snapshots may take now */
	uint64_t snap_budget_at;	/* when snap_budget was counted (ns), 0: never */
	size_t prune_at;		/* entries that make registry_prune() look */
	int atfork_done;
} reg = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .prune_at = PRUNE_MIN };

/* A VMA of /proc/self/maps: whether the kernel would name it. */
struct span {
	uint64_t start;
	uint64_t end;
	int nameable;
};


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
static int table_clip(struct table *t, const struct span *v, size_t nv)
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
	       (mmkit__vma_anon_shmem(v) && !after_kernel) || mmkit__vma_refpage(v);
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

static int vma_open(struct vma_iter *it, int after_kernel)
{
	it->text = 0;
	it->after_kernel = after_kernel;
	return mmkit__lines_open(&it->maps, AT_FDCWD, "/proc/self/maps");
}

/* The first VMA ending after @addr into @s: 1, or 0 if there is none.  @addr only rises. */
static int vma_next(struct vma_iter *it, uint64_t addr, struct span *s)
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
			s->nameable = !q.inode || mmkit__vma_refpage(&v) ||
				      (mmkit__vma_anon_shmem(&v) && !it->after_kernel);
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

/* All the VMAs of this process, for pruning the registry. */
static ssize_t read_spans(struct span **out)
{
	struct mmkit__lines maps;
	const char *line, *eol;
	struct span *s = NULL, *bigger;
	size_t n = 0, cap = 0;
	struct mmkit__vma v;
	int ret;

	ret = mmkit__lines_open(&maps, AT_FDCWD, "/proc/self/maps");
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

/* Where area @area (0: live, 1: snapshot) begins in a memfd of @cap entries per area. */
static size_t area_offset(size_t cap, int area)
{
	return sizeof(struct mmkit__registry_header) + area * cap * sizeof(struct mmkit__name_range);
}

static struct mmkit__name_range *area_entries(int area)
{
	return (struct mmkit__name_range *)((char *)reg.hdr + area_offset(reg.cap, area));
}

/*
 * Makes a memfd with room for @cap entries per area showing reg.t, into
 * *@fd and *@hdr.  Sealed: no other process can write it (F_SEAL_FUTURE_WRITE
 * keeps only the mapping made here writable), nor shrink it, which would
 * make our writes fault, nor grow it.  Another process may open it before
 * the seals: its size is checked once it can no longer change, and what
 * such a process writes through a mapping it made meanwhile is only ever
 * read by readers, who check it.  The magic goes last, so a reader never
 * takes a file half made for a registry.
 */
static int registry_create(size_t cap, int *fd, struct mmkit__registry_header **hdr,
			   struct stat *st)
{
	size_t size = area_offset(cap, 2);
	struct mmkit__registry_header *h;
	void *p = NULL;
	int ret;

	*fd = sys_memfd_create(MMKIT__REGISTRY_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (*fd < 0)
		return *fd;
	ret = sys_ftruncate(*fd, (off_t)size);
	if (!ret)
		ret = sys_fcntl(*fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
	if (!ret)
		ret = sys_fstat(*fd, st);
	if (!ret && (uint64_t)st->st_size != size)
		ret = -EBUSY;
	if (!ret)
		ret = sys_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0, &p);
	if (!ret)
		ret = sys_fcntl(*fd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SEAL);
	/* Before Linux 5.1: others may write what readers read, but cannot make us fault. */
	if (ret == -EINVAL)
		ret = sys_fcntl(*fd, F_ADD_SEALS, F_SEAL_SEAL);
	if (ret) {
		if (p)
			sys_munmap(p, size);
		sys_close(*fd);
		return ret;
	}
	h = p;
	h->version = MMKIT__REGISTRY_VERSION;
	h->cap = (uint32_t)cap;
	h->seq = reg.seq;
	h->count = (uint32_t)reg.t.n;
	h->snap_seq = reg.snap_seq;
	/* Older than any seq this file shows: no reader takes this empty snapshot. */
	h->snap_of = reg.seq - 2;
	if (reg.t.n)
		memcpy((char *)h + area_offset(cap, 0), reg.t.e, reg.t.n * sizeof(*reg.t.e));
	__atomic_store_n(&h->magic, MMKIT__REGISTRY_MAGIC, __ATOMIC_RELEASE);
	*hdr = h;
	return 0;
}

/*
 * 1 if reg.fd is still the registry's memfd, 0 if not (a program that
 * closes descriptors it does not know, closefrom, may have reused the
 * number), -errno if fstat fails otherwise: then it is still ours.
 */
static int registry_fd_ours(void)
{
	struct stat st;
	int ret = sys_fstat(reg.fd, &st);

	if (ret == -EBADF)
		return 0;
	return ret ? ret : st.st_dev == reg.dev && st.st_ino == reg.ino;
}

/*
 * Moves the registry to a new memfd of @cap entries per area, closing the
 * old one if its descriptor is still ours.  While both exist a reader may
 * read both (the old one as it was before this change).  On failure the
 * old one stays, unless @drop: then there is none (a child after fork must
 * not write its parent's).
 */
static int registry_move(size_t cap, int drop)
{
	struct mmkit__registry_header *hdr = NULL;
	int fd = -1, close_old = reg.hdr && registry_fd_ours() == 1, ret;
	struct stat st;

	ret = registry_create(cap, &fd, &hdr, &st);
	if (ret && !drop)
		return ret;
	if (reg.hdr) {
		sys_munmap(reg.hdr, area_offset(reg.cap, 2));
		if (close_old)
			sys_close(reg.fd);
	}
	reg.fd = -1;
	reg.hdr = NULL;
	reg.cap = 0;
	if (ret)
		return ret;
	reg.fd = fd;
	reg.hdr = hdr;
	reg.cap = cap;
	reg.dev = st.st_dev;
	reg.ino = st.st_ino;
	reg.snap_of = reg.seq - 2;
	reg.snap_from = 0;
	reg.snap_to = reg.t.n;
	reg.snap_faulted = 0;
	return 0;
}

static void atfork_prepare(void)
{
	pthread_mutex_lock(&reg.lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&reg.lock);
}

/* The child's writes must not reach the parent's registry: it gets its own copy. */
static void atfork_child(void)
{
	if (reg.hdr)
		registry_move(reg.cap, 1);
	pthread_mutex_unlock(&reg.lock);
}

/* Makes sure reg.t has room for @need entries.  Lock held. */
static int table_room(size_t need)
{
	struct mmkit__name_range *e;
	size_t room = reg.room ? reg.room : 64;

	if (need <= reg.room)
		return 0;
	while (room < need)
		room *= 2;
	e = mmkit__reallocarray(reg.t.e, room, sizeof(*e));
	if (!e)
		return -ENOMEM;
	reg.t.e = e;
	reg.room = room;
	return 0;
}

/* Makes sure reg is a usable memfd with room for @need entries per area.  Lock held. */
static int registry_ready(size_t need)
{
	size_t cap = reg.cap ? reg.cap : 64;
	int ret, ours = 0;

	if (!reg.atfork_done) {
		ret = pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
		if (ret)
			return -ret;
		reg.atfork_done = 1;
	}
	if (reg.hdr) {
		/* Closed by the application (and the number maybe reused): a new one. */
		ours = registry_fd_ours();
		if (ours < 0)
			return ours;
	}
	if (ours && need <= reg.cap)
		return 0;
	while (cap < need)
		cap *= 2;
	return registry_move(cap, 0);
}

/*
 * Shows entries [@first, @last) of reg.t (and its count) in the memfd's
 * live area.  Readers retry while seq is odd or changes under them.  The
 * memfd is only written: what it holds is never read back.
 */
static void registry_publish(size_t first, size_t last)
{
	uint32_t seq = reg.seq + 1;

	if (first < reg.snap_from)
		reg.snap_from = first;
	if (last > reg.snap_to)
		reg.snap_to = last;

	__atomic_store_n(&reg.hdr->seq, seq, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (last > first)
		memcpy(area_entries(0) + first, reg.t.e + first, (last - first) * sizeof(*reg.t.e));
	__atomic_store_n(&reg.hdr->count, (uint32_t)reg.t.n, __ATOMIC_RELAXED);
	reg.seq = seq + 1;
	__atomic_store_n(&reg.hdr->seq, reg.seq, __ATOMIC_RELEASE);
}

/* 1 if another process holds a lock on byte @at of the registry, else 0. */
static int registry_locked(off_t at)
{
	struct flock fl = { .l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = at, .l_len = 1 };

	return !sys_fcntl(reg.fd, F_OFD_GETLK, (unsigned long)&fl) && fl.l_type != F_UNLCK;
}

/*
 * Faults in the snapshot area up to entry @to before a copy, outside the
 * ration: each page is paid for once per file, however often readers ask,
 * and under emulation the faults of a first copy of 60,000 entries alone
 * overdrew the budget for longer than a reader waits.  Best effort: where
 * MADV_POPULATE_WRITE is refused the copy faults the pages in itself.
 */
static void snapshot_fault_in(size_t to)
{
	uintptr_t page = sys_page_size();
	uintptr_t from = (uintptr_t)(area_entries(1) + reg.snap_faulted) & ~(page - 1);
	uintptr_t end = (uintptr_t)(area_entries(1) + to);

	if (to <= reg.snap_faulted)
		return;
	sys_madvise((void *)from, end - from, MADV_POPULATE_WRITE);
	reg.snap_faulted = to;
}

/*
 * A reader that changes under its reads asks for a snapshot by holding a
 * read lock on byte MMKIT__REGISTRY_LOCK_ASK of the memfd (all it may do
 * to a file it may only read), and on byte MMKIT__REGISTRY_LOCK_READING
 * while it reads one.  The writer copies into the snapshot area the
 * entries changed since the last one; one being read it leaves alone for
 * MMKIT__REGISTRY_SNAP_HOLD_NS at most.  Snapshots are rationed by a
 * budget (names.h), whatever readers ask.  The writer never waits for a
 * reader.  Lock held.
 */
static void registry_snapshot(void)
{
	size_t to = reg.snap_to < reg.t.n ? reg.snap_to : reg.t.n;
	uint64_t t0, cpu;

	/* Not asked, rationed, held, or the snapshot shows what the live area does. */
	if (!reg.hdr || reg.snap_of == reg.seq)
		return;
	t0 = sys_monotonic_ns();
	if (!reg.snap_budget_at)
		reg.snap_budget = MMKIT__REGISTRY_SNAP_BURST_NS;
	else
		reg.snap_budget += (int64_t)(t0 - reg.snap_budget_at) / MMKIT__REGISTRY_SNAP_RATIO;
	if (reg.snap_budget > MMKIT__REGISTRY_SNAP_BURST_NS)
		reg.snap_budget = MMKIT__REGISTRY_SNAP_BURST_NS;
	reg.snap_budget_at = t0;
	if (reg.snap_budget <= 0 || !registry_locked(MMKIT__REGISTRY_LOCK_ASK) ||
	    (t0 < reg.snap_made + MMKIT__REGISTRY_SNAP_HOLD_NS &&
	     registry_locked(MMKIT__REGISTRY_LOCK_READING)))
		return;
	snapshot_fault_in(to);
	cpu = sys_thread_cpu_ns();
	__atomic_store_n(&reg.hdr->snap_seq, reg.snap_seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	if (to > reg.snap_from)
		memcpy(area_entries(1) + reg.snap_from, reg.t.e + reg.snap_from,
		       (to - reg.snap_from) * sizeof(*reg.t.e));
	__atomic_store_n(&reg.hdr->snap_count, (uint32_t)reg.t.n, __ATOMIC_RELAXED);
	__atomic_store_n(&reg.hdr->snap_of, reg.seq, __ATOMIC_RELAXED);
	reg.snap_of = reg.seq;
	reg.snap_from = reg.t.n;
	reg.snap_to = 0;
	reg.snap_seq += 2;
	__atomic_store_n(&reg.hdr->snap_seq, reg.snap_seq, __ATOMIC_RELEASE);
	reg.snap_made = sys_monotonic_ns();
	/* What it cost the writer: its CPU time, which other processes' load does not inflate. */
	reg.snap_budget -= (int64_t)(sys_thread_cpu_ns() - cpu);
}

/* Names [start, end) @name (NULL: no name) in the registry.  Lock held. */
static int registry_set(uint64_t start, uint64_t end, const char *name)
{
	size_t first, last;
	int ret;

	if (!reg.t.n && !name)
		return 0;
	ret = table_room(reg.t.n + 2);
	if (!ret)
		ret = registry_ready(reg.t.n + 2);
	if (ret)
		return ret;
	first = mmkit__ranges_set(reg.t.e, &reg.t.n, start, end, name, &last);
	registry_publish(first, last);
	return 0;
}

/*
 * Drops the names of ranges no longer mapped, once the registry has doubled
 * since the last time: reading all of /proc/self/maps costs as much as the
 * process has VMAs, so it is not done on every call.  Best effort, lock
 * held: a failure only leaves stale entries, which readers ignore anyway.
 */
static void registry_prune(void)
{
	struct span *v = NULL;
	size_t room = reg.t.n + 1;
	ssize_t nv;

	if (reg.t.n < reg.prune_at)
		return;
	nv = read_spans(&v);
	if (nv < 0)
		return;
	room += (size_t)nv;
	if (!table_clip(&reg.t, v, (size_t)nv)) {
		reg.room = room;
		reg.prune_at = 2 * reg.t.n > PRUNE_MIN ? 2 * reg.t.n : PRUNE_MIN;
		if (reg.hdr)
			registry_publish(0, reg.t.n);
	}
	free(v);
}

/*
 * madvise_walk_vmas() over the registry.  Holes are skipped (-ENOMEM at
 * the end) and whatever name the registry had there is stale, so it goes;
 * a file stops the walk with -EBADF.  @after_kernel: see vma_nameable().
 */
int mmkit__registry_name(uint64_t start, uint64_t end, const char *name, int after_kernel)
{
	struct vma_iter it;
	uint64_t cur = start, to;
	int ret, found, unmapped = 0;
	struct span s = { 0, 0, 0 };

	pthread_mutex_lock(&reg.lock);
	ret = vma_open(&it, after_kernel);
	while (!ret && cur < end) {
		found = vma_next(&it, cur, &s);
		if (found < 0) {
			ret = found;
			break;
		}
		if (!found || s.start >= end) {
			ret = registry_set(cur, end, NULL);
			unmapped = -ENOMEM;
			break;
		}
		if (cur < s.start) {
			ret = registry_set(cur, s.start, NULL);
			unmapped = -ENOMEM;
			cur = s.start;
			if (ret)
				break;
		}
		if (!s.nameable) {
			ret = -EBADF;
			break;
		}
		to = s.end < end ? s.end : end;
		ret = registry_set(cur, to, name);
		cur = to;
	}
	if (it.maps.fd >= 0)
		mmkit__lines_close(&it.maps);
	if (!ret)
		ret = unmapped;
	registry_prune();
	registry_snapshot();
	pthread_mutex_unlock(&reg.lock);
	return ret;
}

ssize_t mmkit__registry_copy(struct mmkit__name_range **out)
{
	struct mmkit__name_range *e = NULL;
	ssize_t n;

	pthread_mutex_lock(&reg.lock);
	n = (ssize_t)reg.t.n;
	if (n) {
		e = mmkit__calloc(reg.t.n, sizeof(*e));
		if (e)
			memcpy(e, reg.t.e, reg.t.n * sizeof(*e));
		else
			n = -ENOMEM;
	}
	pthread_mutex_unlock(&reg.lock);
	*out = e;
	return n;
}
