// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The registry: where mmkit_name() keeps names when the kernel cannot
 * (names.c), so that other processes can read them (names-read.c).
 *  - a memfd "mmkit-names" (MFD_CLOEXEC), kept open and mapped MAP_SHARED;
 *  - struct mmkit__registry_header, then `count` struct mmkit__name_range
 *    sorted by start, not overlapping; the file grows (ftruncate +
 *    mremap), never shrinks;
 *  - a mutex serialises the writers (threads of this process); `seq` is odd
 *    while one changes the entries, and a reader that sees it odd, or
 *    changed across its read, reads again (names-read.c: it backs off, and
 *    reads anyway, checking each entry, a seq left odd by a writer that
 *    died); a writer finding seq odd makes it even again;
 *  - a reader that a busy writer never lets finish asks, in `pause_us`,
 *    for one pause before the next change, as long as one read takes it
 *    (bounded): the writer clears it and waits, so a reader that died costs
 *    one pause;
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

static struct {
	pthread_mutex_t lock;
	int fd;				/* -1 until the first name is stored */
	struct mmkit__registry_header *hdr;	/* the memfd, mapped MAP_SHARED */
	size_t size;			/* bytes of the file and the mapping */
	dev_t dev;			/* the file fd must still refer to */
	ino_t ino;
	size_t prune_at;		/* entries that make registry_prune() look */
	int atfork_done;
} reg = { .lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .prune_at = PRUNE_MIN };

/* An array of named ranges, sorted by start, not overlapping. */
struct table {
	struct mmkit__name_range *e;
	size_t n;
};

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
 */
void mmkit__ranges_set(struct mmkit__name_range *e, size_t *n, uint64_t start, uint64_t end,
		       const char *name)
{
	struct mmkit__name_range rep[3];
	size_t i = 0, j, k = 0, lo, hi, cnt = *n, p;

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
	memmove(&e[i + k], &e[j], (cnt - j) * sizeof(*e));
	memcpy(&e[i], rep, k * sizeof(*e));
	cnt = cnt - (j - i) + k;
	/* Only pairs around the change, (i - 1, i) to (i + k - 1, i + k), can be equal neighbours. */
	lo = i ? i : 1;
	hi = i + k < cnt ? i + k : cnt - 1;
	for (p = hi; cnt && p >= lo; p--) {
		if (e[p - 1].end != e[p].start || strcmp(e[p - 1].name, e[p].name))
			continue;
		e[p - 1].end = e[p].end;
		memmove(&e[p], &e[p + 1], (cnt - p - 1) * sizeof(*e));
		cnt--;
	}
	*n = cnt;
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
 * too: the registry names them where the kernel cannot.
 */
static int vma_nameable(const struct mmkit__vma *v)
{
	return !v->path_len || v->path[0] == '[' || mmkit__vma_anon_shmem(v) ||
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
	char name[PATH_MAX + 16];	/* PROCMAP_QUERY's name of the VMA */
};

static int vma_open(struct vma_iter *it)
{
	it->text = 0;
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
			s->nameable = !q.inode || mmkit__vma_anon_shmem(&v) ||
				      mmkit__vma_refpage(&v);
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
		s->nameable = vma_nameable(&v);
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
		s[n++].nameable = vma_nameable(&v);
	}
	mmkit__lines_close(&maps);
	if (ret < 0) {
		free(s);
		return ret;
	}
	*out = s;
	return (ssize_t)n;
}

static struct mmkit__name_range *registry_entries(struct mmkit__registry_header *hdr)
{
	return (struct mmkit__name_range *)(hdr + 1);
}

/* Makes reg a new memfd of @size bytes holding a copy of @from (NULL: empty). */
static int registry_new(size_t size, const struct mmkit__registry_header *from)
{
	struct stat st;
	void *p;
	int fd, ret;

	fd = sys_memfd_create(MMKIT__REGISTRY_NAME, MFD_CLOEXEC);
	if (fd < 0)
		return fd;
	ret = sys_ftruncate(fd, (off_t)size);
	if (!ret)
		ret = sys_fstat(fd, &st);
	if (!ret)
		ret = sys_mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0, &p);
	if (ret) {
		sys_close(fd);
		return ret;
	}
	if (from) {
		memcpy(p, from, size);
	} else {
		((struct mmkit__registry_header *)p)->magic = MMKIT__REGISTRY_MAGIC;
		((struct mmkit__registry_header *)p)->version = MMKIT__REGISTRY_VERSION;
	}
	reg.fd = fd;
	reg.hdr = p;
	reg.size = size;
	reg.dev = st.st_dev;
	reg.ino = st.st_ino;
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
 * Moves the registry to a new memfd, closing the old one if its
 * descriptor is still ours.  On failure there is no registry: a
 * half-shared one would be worse than names lost.
 */
static int registry_reopen(void)
{
	struct mmkit__registry_header *old = reg.hdr;
	int fd = reg.fd, close_old = registry_fd_ours() == 1, ret;
	size_t size = reg.size;

	ret = registry_new(size, old);
	if (ret) {
		reg.fd = -1;
		reg.hdr = NULL;
		reg.size = 0;
	}
	sys_munmap(old, size);
	if (close_old)
		sys_close(fd);
	return ret;
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
		registry_reopen();
	pthread_mutex_unlock(&reg.lock);
}

/* Makes sure reg is a usable registry of at least @need bytes.  Lock held. */
static int registry_ready(size_t need)
{
	size_t page = sys_page_size(), size;
	void *p;
	int ret;

	if (!reg.hdr) {
		if (!reg.atfork_done) {
			ret = pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
			if (ret)
				return -ret;
			reg.atfork_done = 1;
		}
		return registry_new((need + page - 1) & ~(page - 1), NULL);
	}
	/* Closed by the application (and the number maybe reused): a new one. */
	ret = registry_fd_ours();
	if (ret < 0)
		return ret;
	if (!ret) {
		ret = registry_reopen();
		if (ret)
			return ret;
	}
	if (need <= reg.size)
		return 0;
	for (size = reg.size; size < need; size *= 2)
		;
	ret = sys_ftruncate(reg.fd, (off_t)size);
	if (!ret)
		ret = sys_mremap(reg.hdr, reg.size, size, MREMAP_MAYMOVE, NULL, &p);
	if (ret)
		return ret;
	reg.hdr = p;
	reg.size = size;
	return 0;
}

/*
 * Readers retry while seq is odd or changes under them.  Returns the odd
 * seq set: odd whatever seq was, as a writer that died mid-update (a
 * process sharing the memfd) leaves it odd.  First the pause a starved
 * reader asked for.
 */
static uint32_t registry_write_begin(void)
{
	uint32_t pause = __atomic_exchange_n(&reg.hdr->pause_us, 0, __ATOMIC_RELAXED);
	uint32_t seq = (reg.hdr->seq + 1) | 1;

	if (pause)
		sys_sleep_ns(1000ull * (pause < MMKIT__REGISTRY_PAUSE_MAX_US ?
					pause : MMKIT__REGISTRY_PAUSE_MAX_US));
	__atomic_store_n(&reg.hdr->seq, seq, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return seq;
}

static void registry_write_end(uint32_t seq, size_t count)
{
	__atomic_store_n(&reg.hdr->count, (uint32_t)count, __ATOMIC_RELAXED);
	__atomic_store_n(&reg.hdr->seq, seq + 1, __ATOMIC_RELEASE);
}

/* Names [start, end) @name (NULL: no name) in the registry.  Lock held. */
static int registry_set(uint64_t start, uint64_t end, const char *name)
{
	size_t n = reg.hdr ? reg.hdr->count : 0;
	uint32_t seq;
	int ret;

	if (!reg.hdr && !name)
		return 0;
	ret = registry_ready(sizeof(struct mmkit__registry_header) + (n + 2) * sizeof(struct mmkit__name_range));
	if (ret)
		return ret;
	seq = registry_write_begin();
	mmkit__ranges_set(registry_entries(reg.hdr), &n, start, end, name);
	registry_write_end(seq, n);
	return 0;
}

/* Replaces all the entries of the registry with @t.  Lock held. */
static int registry_store(const struct table *t)
{
	uint32_t seq;
	int ret;

	ret = registry_ready(sizeof(struct mmkit__registry_header) + t->n * sizeof(*t->e));
	if (ret)
		return ret;
	seq = registry_write_begin();
	if (t->n)
		memcpy(registry_entries(reg.hdr), t->e, t->n * sizeof(*t->e));
	registry_write_end(seq, t->n);
	return 0;
}

/* The registry's entries, copied into @t.  Lock held. */
static int registry_load(struct table *t)
{
	size_t n = reg.hdr ? reg.hdr->count : 0;

	t->e = NULL;
	t->n = 0;
	if (!n)
		return 0;
	t->e = mmkit__calloc(n, sizeof(*t->e));
	if (!t->e)
		return -ENOMEM;
	memcpy(t->e, registry_entries(reg.hdr), n * sizeof(*t->e));
	t->n = n;
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
	struct table t = { NULL, 0 };
	struct span *v = NULL;
	ssize_t nv;

	if (!reg.hdr || reg.hdr->count < reg.prune_at)
		return;
	nv = read_spans(&v);
	if (nv < 0)
		return;
	if (!registry_load(&t) && !table_clip(&t, v, (size_t)nv) && !registry_store(&t))
		reg.prune_at = 2 * t.n > PRUNE_MIN ? 2 * t.n : PRUNE_MIN;
	free(t.e);
	free(v);
}

/*
 * madvise_walk_vmas() over the registry.  Holes are skipped (-ENOMEM at
 * the end) and whatever name the registry had there is stale, so it goes;
 * a file stops the walk with -EBADF.
 */
int mmkit__registry_name(uint64_t start, uint64_t end, const char *name)
{
	struct vma_iter it;
	uint64_t cur = start, to;
	int ret, found, unmapped = 0;
	struct span s = { 0, 0, 0 };

	pthread_mutex_lock(&reg.lock);
	ret = vma_open(&it);
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
	pthread_mutex_unlock(&reg.lock);
	return ret;
}

ssize_t mmkit__registry_copy(struct mmkit__name_range **out)
{
	struct table t;
	int ret;

	pthread_mutex_lock(&reg.lock);
	ret = registry_load(&t);
	pthread_mutex_unlock(&reg.lock);
	if (ret)
		return ret;
	*out = t.e;
	return (ssize_t)t.n;
}
