// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Named anonymous memory: mmkit_name() and the registry behind it.
 *
 * Where the kernel has CONFIG_ANON_VMA_NAME (5.17+), mmkit_name() is
 * prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME) after the checks the kernel makes
 * itself, and /proc/PID/maps shows [anon:NAME].  Whether it has is found out
 * once per process by naming a fresh page of our own: without the option
 * prctl_set_vma() is a stub, and EINVAL from that valid call on a valid
 * anonymous range can mean nothing else.  uname() would say nothing about
 * the configuration.
 *
 * Elsewhere (Debian's kernels) names go to a registry other processes can
 * read, so that tools report memory by name on any kernel:
 *  - a memfd "mmkit-names" (MFD_CLOEXEC), kept open and mapped MAP_SHARED;
 *  - struct registry_header, then `count` struct mmkit__name_range sorted
 *    by start, not overlapping; the file grows (ftruncate + mremap), never
 *    shrinks;
 *  - a mutex serialises the writers (threads of this process); `seq` is odd
 *    while one changes the entries, and a reader that sees it odd, or
 *    changed across its read, reads again;
 *  - another process finds the registry by the link
 *    "/memfd:mmkit-names (deleted)" in /proc/PID/fd and reads it through
 *    /proc/PID/fd/N: the same PTRACE_MODE_READ access /proc/PID/smaps takes
 *    (same user and dumpable, or root);
 *  - fork: a pthread_atfork() handler gives the child a copy in a memfd of
 *    its own, so parent and child never write each other's names (a child
 *    made by a raw clone() without the handlers would share it);
 *  - a program that closes descriptors it does not know (closefrom) hides
 *    its registry until its next mmkit_name(), which notices that the
 *    descriptor is no longer the memfd and makes a new one.
 *
 * mmkit_name() walks the VMAs like the kernel's madvise_walk_vmas(): holes
 * are skipped and -ENOMEM returned at the end, the mapped parts being
 * named; a VMA with a file stops the walk with -EBADF, the VMAs before it
 * staying named.  MAP_SHARED | MAP_ANONYMOUS memory can be named, as since
 * Linux 6.2 (6.1 refused it with EBADF too).  The VMAs
 * come from PROCMAP_QUERY (Linux 6.11+: a few ioctls, whatever the number
 * of VMAs) or else from /proc/self/maps, read only up to the end of the
 * range.  Naming a range replaces what the registry had for it, trimming
 * and splitting older entries as the kernel splits VMAs: a binary search
 * and one memmove() of the entries after it.
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
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <linux/fs.h>

#include "names.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif

/* Linux 6.11 uapi, for building against older headers (Debian 12 has 6.1's). */
#ifndef PROCMAP_QUERY
struct procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};
#define PROCMAP_QUERY_VMA_SHARED		0x08
#define PROCMAP_QUERY_COVERING_OR_NEXT_VMA	0x10
#define PROCMAP_QUERY				_IOWR('f', 17, struct procmap_query)
#endif

#define REGISTRY_NAME		"mmkit-names"
#define REGISTRY_LINK		"/memfd:" REGISTRY_NAME " (deleted)"
#define REGISTRY_MAGIC		0x4e4b4d4du	/* "MMKN" */
#define REGISTRY_VERSION	1u
/* A writer holds seq odd for a memcpy(); this many torn reads in a row is not contention. */
#define REGISTRY_READ_TRIES	1000
/* Most entries taken from another process: bounds what its header makes us allocate. */
#define REGISTRY_MAX_ENTRIES	(1u << 20)
/* Registry size below which unmapped ranges are not looked for (registry_prune()). */
#define PRUNE_MIN		64
/* Bytes of /proc/self/maps read at a time when PROCMAP_QUERY is missing. */
#define MAPS_CHUNK		65536

struct registry_header {
	uint32_t magic;
	uint32_t version;
	uint32_t seq;		/* odd while a writer changes the entries */
	uint32_t count;		/* entries that follow */
};

static struct {
	pthread_mutex_t lock;
	int fd;				/* -1 until the first name is stored */
	struct registry_header *hdr;	/* the memfd, mapped MAP_SHARED */
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

static pthread_once_t kernel_once = PTHREAD_ONCE_INIT;
static int kernel_ret;		/* prctl's answer: 0 if the kernel names VMAs */
static int kernel_mmap_ret;	/* non-zero if no page could be mapped to ask */

static void kernel_probe(void)
{
	size_t page = sys_page_size();
	void *p;

	kernel_mmap_ret = sys_mmap(NULL, page, PROT_READ | PROT_WRITE,
				   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0, &p);
	if (kernel_mmap_ret) {
		kernel_ret = kernel_mmap_ret;
		return;
	}
	kernel_ret = sys_prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)p, page,
			       (unsigned long)"mmkit-probe");
	sys_munmap(p, page);
}

/* 0 if the kernel names VMAs itself, else why not (-errno). */
static int kernel_names(void)
{
	pthread_once(&kernel_once, kernel_probe);
	return kernel_ret;
}

void mmkit__probe_names(struct mmkit_feature *f)
{
	int ret = kernel_names();

	if (!ret)
		mmkit__feature_set(f, MMKIT_STATUS_NATIVE, "prctl",
				   "prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME) works: kernel has CONFIG_ANON_VMA_NAME");
	else if (kernel_mmap_ret)
		mmkit__feature_set(f, MMKIT_STATUS_FALLBACK, "registry",
				   "could not map a page to try prctl(PR_SET_VMA): %s; using the registry",
				   strerror(-ret));
	else if (ret == -EINVAL)
		mmkit__feature_set(f, MMKIT_STATUS_FALLBACK, "registry",
				   "prctl(PR_SET_VMA) returned EINVAL: kernel built without CONFIG_ANON_VMA_NAME; using the registry");
	else
		mmkit__feature_set(f, MMKIT_STATUS_FALLBACK, "registry",
				   "prctl(PR_SET_VMA) failed: %s; using the registry", strerror(-ret));
}

/* is_valid_name_char() of kernel/sys.c, and strndup_user(name, 80)'s limit. */
MMKIT_EXPORT int mmkit_name_valid(const char *name)
{
	size_t i;

	if (!name)
		return 0;
	for (i = 0; name[i]; i++) {
		unsigned char c = (unsigned char)name[i];

		if (i + 1 >= MMKIT_NAME_MAX || c < 0x20 || c > 0x7e || strchr("\\`$[]", c))
			return -EINVAL;
	}
	return 0;
}

/* The checks of madvise_set_anon_name(), in its order. */
static int name_range(void *addr, size_t len_in, uint64_t *start, uint64_t *end)
{
	size_t page = sys_page_size();
	uintptr_t s = (uintptr_t)addr;
	size_t len;

	if (s & (page - 1))
		return -EINVAL;
	len = (len_in + page - 1) & ~(page - 1);
	if (len_in && !len)
		return -EINVAL;
	if (s + len < s)
		return -EINVAL;
	*start = s;
	*end = s + len;
	return 0;
}

/*
 * Names [start, end) @name (NULL: no name) in the sorted array @e of *@n
 * entries, which has room for 2 more: trims or splits the entries it
 * overlaps, as the kernel splits VMAs, and joins equal neighbours.  A
 * binary search and one memmove() of the entries after the range.
 */
static void ranges_set(struct mmkit__name_range *e, size_t *n, uint64_t start, uint64_t end,
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

	e = sys_calloc(t->n + nv + 1, sizeof(*e));
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
	return v->path_len == 11 && !memcmp(v->path, "[vsyscall]", 11);
}

/*
 * The VMAs of this process, in address order, one at a time: by
 * PROCMAP_QUERY where the kernel has it (6.11+), so that naming a range
 * costs a few ioctls whatever the number of VMAs; else from the text of
 * /proc/self/maps, read only as far as the range.
 */
struct vma_iter {
	int fd;
	int text;		/* no PROCMAP_QUERY: parsing the text */
	char *buf;		/* the text, MAPS_CHUNK bytes */
	size_t len;		/* bytes in buf */
	size_t pos;		/* first byte not parsed */
	int eof;
	char name[PATH_MAX + 16];	/* PROCMAP_QUERY's name of the VMA */
};

static int vma_open(struct vma_iter *it)
{
	it->text = 0;
	it->buf = NULL;
	it->len = it->pos = 0;
	it->eof = 0;
	it->fd = sys_open("/proc/self/maps", O_RDONLY | O_CLOEXEC, 0);
	return it->fd < 0 ? it->fd : 0;
}

static void vma_close(struct vma_iter *it)
{
	sys_close(it->fd);
	free(it->buf);
}

/* The next line of the text that is a VMA: 1, or 0 at the end. */
static int vma_line(struct vma_iter *it, struct mmkit__vma *v)
{
	char *line, *eol;
	ssize_t n;

	for (;;) {
		line = it->buf + it->pos;
		eol = memchr(line, '\n', it->len - it->pos);
		if (eol) {
			it->pos = (size_t)(eol - it->buf) + 1;
			if (!mmkit__vma_parse(line, eol, v))
				return 1;
			continue;
		}
		if (it->eof)
			return 0;
		memmove(it->buf, line, it->len - it->pos);
		it->len -= it->pos;
		it->pos = 0;
		/* A line is at most a path (PATH_MAX) and a hundred bytes more. */
		if (it->len == MAPS_CHUNK)
			return -EIO;
		n = sys_read(it->fd, it->buf + it->len, MAPS_CHUNK - it->len);
		if (n == -EINTR)
			continue;
		if (n < 0)
			return (int)n;
		it->eof = !n;
		it->len += (size_t)n;
	}
}

/* The first VMA ending after @addr into @s: 1, or 0 if there is none.  @addr only rises. */
static int vma_next(struct vma_iter *it, uint64_t addr, struct span *s)
{
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
		ret = sys_ioctl(it->fd, PROCMAP_QUERY, &q);
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
			s->nameable = !q.inode || mmkit__vma_anon_shmem(&v);
			return 1;
		}
		if (ret != -ENOTTY)
			return ret;
		it->buf = sys_calloc(1, MAPS_CHUNK);
		if (!it->buf)
			return -ENOMEM;
		it->text = 1;
	}
	while ((ret = vma_line(it, &v)) == 1) {
		if (v.end <= addr || vsyscall(&v))
			continue;
		s->start = v.start;
		s->end = v.end;
		s->nameable = mmkit__vma_nameable(&v);
		return 1;
	}
	return ret;
}

/* All the VMAs of this process, for pruning the registry. */
static ssize_t read_spans(struct span **out)
{
	struct mmkit__vma v;
	struct span *s;
	char *buf, *line, *eol;
	size_t lines = 1, n = 0;
	ssize_t len;

	len = sys_read_file("/proc/self/maps", &buf);
	if (len < 0)
		return len;
	for (line = buf; (line = strchr(line, '\n')); line++)
		lines++;
	s = sys_calloc(lines, sizeof(*s));
	if (!s) {
		free(buf);
		return -ENOMEM;
	}
	for (line = buf; *line; line = *eol ? eol + 1 : eol) {
		eol = strchrnul(line, '\n');
		if (mmkit__vma_parse(line, eol, &v) || vsyscall(&v))
			continue;
		s[n].start = v.start;
		s[n].end = v.end;
		s[n++].nameable = mmkit__vma_nameable(&v);
	}
	free(buf);
	*out = s;
	return (ssize_t)n;
}

static struct mmkit__name_range *registry_entries(struct registry_header *hdr)
{
	return (struct mmkit__name_range *)(hdr + 1);
}

/* Makes reg a new memfd of @size bytes holding a copy of @from (NULL: empty). */
static int registry_new(size_t size, const struct registry_header *from)
{
	struct stat st;
	void *p;
	int fd, ret;

	fd = sys_memfd_create(REGISTRY_NAME, MFD_CLOEXEC);
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
		((struct registry_header *)p)->magic = REGISTRY_MAGIC;
		((struct registry_header *)p)->version = REGISTRY_VERSION;
	}
	reg.fd = fd;
	reg.hdr = p;
	reg.size = size;
	reg.dev = st.st_dev;
	reg.ino = st.st_ino;
	return 0;
}

/*
 * Moves the registry to a new memfd (@close_old: and closes the old one,
 * still ours).  On failure there is no registry: a half-shared one would
 * be worse than names lost.
 */
static int registry_reopen(int close_old)
{
	struct registry_header *old = reg.hdr;
	size_t size = reg.size;
	int fd = reg.fd, ret;

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
		registry_reopen(1);
	pthread_mutex_unlock(&reg.lock);
}

/* Makes sure reg is a usable registry of at least @need bytes.  Lock held. */
static int registry_ready(size_t need)
{
	size_t page = sys_page_size(), size;
	struct stat st;
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
	if (sys_fstat(reg.fd, &st) || st.st_dev != reg.dev || st.st_ino != reg.ino) {
		ret = registry_reopen(0);
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

/* Readers retry while seq is odd or changes under them. */
static uint32_t registry_write_begin(void)
{
	uint32_t seq = reg.hdr->seq;

	__atomic_store_n(&reg.hdr->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	return seq;
}

static void registry_write_end(uint32_t seq, size_t count)
{
	__atomic_store_n(&reg.hdr->count, (uint32_t)count, __ATOMIC_RELAXED);
	__atomic_store_n(&reg.hdr->seq, seq + 2, __ATOMIC_RELEASE);
}

/* Names [start, end) @name (NULL: no name) in the registry.  Lock held. */
static int registry_set(uint64_t start, uint64_t end, const char *name)
{
	size_t n = reg.hdr ? reg.hdr->count : 0;
	uint32_t seq;
	int ret;

	if (!reg.hdr && !name)
		return 0;
	ret = registry_ready(sizeof(struct registry_header) + (n + 2) * sizeof(struct mmkit__name_range));
	if (ret)
		return ret;
	seq = registry_write_begin();
	ranges_set(registry_entries(reg.hdr), &n, start, end, name);
	registry_write_end(seq, n);
	return 0;
}

/* Replaces all the entries of the registry with @t.  Lock held. */
static int registry_store(const struct table *t)
{
	uint32_t seq;
	int ret;

	ret = registry_ready(sizeof(struct registry_header) + t->n * sizeof(*t->e));
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
	t->e = sys_calloc(n, sizeof(*t->e));
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
	struct span *v;
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
 * mmkit_name() without the kernel's help: madvise_walk_vmas().  Holes are
 * skipped (-ENOMEM at the end) and whatever name the registry had there is
 * stale, so it goes; a file stops the walk with -EBADF.
 */
static int registry_name(uint64_t start, uint64_t end, const char *name)
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
	if (it.fd >= 0)
		vma_close(&it);
	if (!ret)
		ret = unmapped;
	registry_prune();
	pthread_mutex_unlock(&reg.lock);
	return ret;
}

MMKIT_EXPORT int mmkit_name(void *addr, size_t len, const char *name)
{
	uint64_t start, end;
	int ret;

	/* The kernel copies and checks the name before it looks at the range. */
	ret = mmkit_name_valid(name);
	if (!ret)
		ret = name_range(addr, len, &start, &end);
	if (ret || start == end)
		return ret;
	if (!kernel_names())
		return sys_prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, (unsigned long)addr, len,
				 (unsigned long)name);
	return registry_name(start, end, name);
}

/* Keeps the entries a well-behaved writer could have stored; returns how many. */
static size_t entries_sane(struct mmkit__name_range *e, size_t n)
{
	uint64_t last = 0;
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (e[i].start >= e[i].end || e[i].start < last ||
		    !memchr(e[i].name, '\0', sizeof(e[i].name)) || mmkit_name_valid(e[i].name))
			continue;
		last = e[i].end;
		e[k++] = e[i];
	}
	return k;
}

/*
 * Reads a registry of another process through @fd, retrying torn reads.
 * A file that is not a registry of this version holds no names for us.
 */
static ssize_t registry_read(int fd, struct mmkit__name_range **out)
{
	struct registry_header h, again;
	struct mmkit__name_range *e = NULL;
	ssize_t n;
	size_t bytes;
	int tries;

	for (tries = 0; tries < REGISTRY_READ_TRIES; tries++) {
		free(e);
		e = NULL;
		n = sys_pread(fd, &h, sizeof(h), 0);
		if (n < 0)
			return n;
		if ((size_t)n < sizeof(h) || h.magic != REGISTRY_MAGIC ||
		    h.version != REGISTRY_VERSION || h.count > REGISTRY_MAX_ENTRIES)
			return 0;
		if (h.seq & 1)
			continue;
		bytes = h.count * sizeof(*e);
		if (bytes) {
			e = sys_calloc(h.count, sizeof(*e));
			if (!e)
				return -ENOMEM;
			n = sys_pread(fd, e, bytes, sizeof(h));
			if (n < 0) {
				free(e);
				return n;
			}
			if ((size_t)n < bytes)
				continue;
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		n = sys_pread(fd, &again, sizeof(again), 0);
		if (n < 0) {
			free(e);
			return n;
		}
		if ((size_t)n == sizeof(again) && again.seq == h.seq) {
			*out = e;
			return (ssize_t)entries_sane(e, h.count);
		}
	}
	free(e);
	return -EAGAIN;
}

/* Adds @n entries of @e to @t: the first registry as it is, any other over it. */
static int table_add(struct table *t, struct mmkit__name_range *e, size_t n)
{
	struct mmkit__name_range *bigger;
	size_t i;

	if (!t->n) {
		free(t->e);
		t->e = e;
		t->n = n;
		return 0;
	}
	/* Each entry set adds at most two. */
	bigger = sys_reallocarray(t->e, t->n + 2 * n, sizeof(*bigger));
	if (!bigger) {
		free(e);
		return -ENOMEM;
	}
	t->e = bigger;
	for (i = 0; i < n; i++)
		ranges_set(t->e, &t->n, e[i].start, e[i].end, e[i].name);
	free(e);
	return 0;
}

/*
 * The registries of process @pid: normally one, but two copies of libmmkit
 * (static and shared) in one process each keep theirs.
 */
static ssize_t registry_read_pid(pid_t pid, struct mmkit__name_range **out)
{
	char path[64], link[sizeof(REGISTRY_LINK)];
	char buf[4096] __attribute__((aligned(8)));
	struct table t = { NULL, 0 };
	struct mmkit__name_range *e;
	struct dirent64 *d;
	ssize_t n = 0, len, got;
	int dfd, fd, ret = 0;
	size_t off;

	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	dfd = sys_open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
	if (dfd < 0)
		return dfd;
	while (!ret && (n = sys_getdents64(dfd, buf, sizeof(buf))) > 0) {
		for (off = 0; !ret && off < (size_t)n; off += d->d_reclen) {
			d = (struct dirent64 *)(buf + off);
			len = sys_readlinkat(dfd, d->d_name, link, sizeof(link));
			if (len != (ssize_t)sizeof(link) - 1 || memcmp(link, REGISTRY_LINK, (size_t)len))
				continue;
			fd = sys_openat(dfd, d->d_name, O_RDONLY | O_CLOEXEC, 0);
			if (fd == -ENOENT)
				continue;
			if (fd < 0) {
				ret = fd;
				break;
			}
			e = NULL;
			got = registry_read(fd, &e);
			sys_close(fd);
			if (got < 0)
				ret = (int)got;
			else
				ret = table_add(&t, e, (size_t)got);
		}
	}
	if (!ret && n < 0)
		ret = (int)n;
	sys_close(dfd);
	if (ret) {
		free(t.e);
		return ret;
	}
	*out = t.e;
	return (ssize_t)t.n;
}

ssize_t mmkit__names_get(pid_t pid, struct mmkit__name_range **out)
{
	struct table t;
	int ret;

	*out = NULL;
	/* A kernel that names VMAs itself: no process on it keeps a registry. */
	if (!kernel_names())
		return 0;
	if (pid && pid != sys_getpid())
		return registry_read_pid(pid, out);
	pthread_mutex_lock(&reg.lock);
	ret = registry_load(&t);
	pthread_mutex_unlock(&reg.lock);
	if (ret)
		return ret;
	*out = t.e;
	return (ssize_t)t.n;
}
