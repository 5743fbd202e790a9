// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <linux/ioctl.h>
#include <linux/magic.h>

#include "procfs.h"
#include "util.h"

#define PM_PRESENT	(1ULL << 63)
#define PM_SWAP		(1ULL << 62)
/* pagemap entries read at a time: 4 KiB of stack. */
#define PAGEMAP_BATCH	512

/*
 * PAGEMAP_SCAN of <linux/fs.h> (Linux 6.7), spelt out here: the build
 * host's headers may be older than the kernel the library runs on.
 */
struct pm_scan_region {
	uint64_t start;
	uint64_t end;
	uint64_t categories;
};

struct pm_scan_request {
	uint64_t size;
	uint64_t flags;
	uint64_t start;
	uint64_t end;
	uint64_t walk_end;
	uint64_t vec;
	uint64_t vec_len;
	uint64_t max_pages;
	uint64_t category_inverted;
	uint64_t category_mask;
	uint64_t category_anyof_mask;
	uint64_t return_mask;
};

#define PM_SCAN_IOCTL		_IOWR('f', 16, struct pm_scan_request)
#define PM_SCAN_PRESENT		(1ULL << 3)
#define PM_SCAN_SWAPPED		(1ULL << 4)
#define PM_SCAN_PFNZERO		(1ULL << 5)
/* Runs returned per ioctl: 1.5 KiB of stack. */
#define PM_SCAN_BATCH		64

int mmkit__lines_open(struct mmkit__lines *l, int dirfd, const char *path)
{
	l->buf = NULL;
	l->cap = l->len = l->pos = 0;
	l->eof = 0;
	l->fd = sys_openat(dirfd, path, O_RDONLY | O_CLOEXEC, 0);
	return l->fd < 0 ? l->fd : 0;
}

void mmkit__lines_close(struct mmkit__lines *l)
{
	if (l->fd >= 0)
		sys_close(l->fd);
	free(l->buf);
	l->fd = -1;
	l->buf = NULL;
}

int mmkit__lines_next(struct mmkit__lines *l, const char **line, const char **eol)
{
	char *start, *nl, *bigger;
	ssize_t n;

	for (;;) {
		/* No buffer before the first read: NULL + 0 is undefined in C. */
		start = l->buf ? l->buf + l->pos : NULL;
		nl = l->len > l->pos ? memchr(start, '\n', l->len - l->pos) : NULL;
		if (nl || (l->eof && l->pos < l->len)) {
			*line = start;
			*eol = nl ? nl : l->buf + l->len;
			l->pos = (size_t)(*eol - l->buf) + !!nl;
			return 1;
		}
		if (l->eof)
			return 0;
		if (l->pos) {
			memmove(l->buf, start, l->len - l->pos);
			l->len -= l->pos;
			l->pos = 0;
		}
		/*
		 * Allocated at the first read (PROCMAP_QUERY users of the fd never
		 * read), grown for a line longer than the buffer.
		 */
		if (l->len == l->cap) {
			if (l->cap >= MMKIT__LINE_MAX)
				return -EIO;
			bigger = mmkit__reallocarray(l->buf, l->cap ? 2 * l->cap : 4096, 1);
			if (!bigger)
				return -ENOMEM;
			l->buf = bigger;
			l->cap = l->cap ? 2 * l->cap : 4096;
		}
		n = sys_read(l->fd, l->buf + l->len, l->cap - l->len);
		if (n == -EINTR)
			continue;
		if (n < 0)
			return (int)n;
		l->eof = !n;
		l->len += (size_t)n;
	}
}

static const char *parse_hex(const char *p, const char *eol, uint64_t *out)
{
	const char *start = p;
	uint64_t v = 0;

	for (; p < eol && p - start < 16; p++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else
			break;
		v = v << 4 | (uint64_t)d;
	}
	if (p == start)
		return NULL;
	*out = v;
	return p;
}

static const char *parse_dec(const char *p, const char *eol, unsigned long long *out)
{
	const char *start = p;
	unsigned long long v = 0;

	for (; p < eol && p - start < 19 && *p >= '0' && *p <= '9'; p++)
		v = v * 10 + (unsigned long long)(*p - '0');
	if (p == start)
		return NULL;
	*out = v;
	return p;
}

int mmkit__vma_parse(const char *line, const char *eol, struct mmkit__vma *v)
{
	const char *p = line;
	unsigned long long inode;
	uint64_t major, minor;

	p = parse_hex(p, eol, &v->start);
	if (!p || p == eol || *p != '-')
		return -EINVAL;
	p = parse_hex(p + 1, eol, &v->end);
	if (!p || eol - p < 6 || *p != ' ' || p[5] != ' ')
		return -EINVAL;
	/* The kernel writes [r-][w-][x-][ps]: anything else is not a maps line. */
	if ((p[1] != 'r' && p[1] != '-') || (p[2] != 'w' && p[2] != '-') ||
	    (p[3] != 'x' && p[3] != '-') || (p[4] != 'p' && p[4] != 's'))
		return -EINVAL;
	memcpy(v->perms, p + 1, 4);
	v->perms[4] = '\0';
	p = parse_hex(p + 6, eol, &v->offset);
	if (!p || p == eol || *p != ' ')
		return -EINVAL;
	p = parse_hex(p + 1, eol, &major);
	if (!p || p == eol || *p != ':')
		return -EINVAL;
	p = parse_hex(p + 1, eol, &minor);
	if (!p || p == eol || *p != ' ')
		return -EINVAL;
	p = parse_dec(p + 1, eol, &inode);
	if (!p || v->start >= v->end || (p < eol && *p != ' '))
		return -EINVAL;
	v->inode = inode;
	v->dev_major = (unsigned int)major;
	v->dev_minor = (unsigned int)minor;
	while (p < eol && *p == ' ')
		p++;
	v->path = p;
	v->path_len = (size_t)(eol - p);
	return 0;
}

int mmkit__vma_path_is(const struct mmkit__vma *v, const char *s)
{
	size_t n = strlen(s);

	return v->path_len == n && !memcmp(v->path, s, n);
}

int mmkit__vma_anon_shmem(const struct mmkit__vma *v)
{
	return v->perms[3] == 's' && mmkit__vma_path_is(v, "/dev/zero (deleted)");
}

/*
 * The device of the kernel's internal tmpfs (where memfds live) in
 * *@major, *@minor, if the kernel names memfd mappings (6.2+): 1, else 0.
 * Cached once known; a memfd that cannot be made now is asked again.
 */
static int memfd_dev(unsigned int *major, unsigned int *minor)
{
	static unsigned int dev[2];
	static int known;	/* 1: dev holds it; -1: before 6.2 */
	unsigned long long a = 0, b = 0;
	struct utsname u;
	const char *p;
	struct stat st;
	int k = __atomic_load_n(&known, __ATOMIC_ACQUIRE), fd;

	if (!k) {
		if (uname(&u))
			return 0;
		p = parse_dec(u.release, u.release + sizeof(u.release), &a);
		if (!p || *p != '.' || !parse_dec(p + 1, u.release + sizeof(u.release), &b))
			return 0;
		if (a < 6 || (a == 6 && b < 2)) {
			__atomic_store_n(&known, -1, __ATOMIC_RELEASE);
			return 0;
		}
		fd = sys_memfd_create("mmkit-probe", MFD_CLOEXEC);
		if (fd < 0)
			return 0;
		k = !sys_fstat(fd, &st);
		sys_close(fd);
		if (!k)
			return 0;
		__atomic_store_n(&dev[0], major(st.st_dev), __ATOMIC_RELAXED);
		__atomic_store_n(&dev[1], minor(st.st_dev), __ATOMIC_RELAXED);
		__atomic_store_n(&known, 1, __ATOMIC_RELEASE);
	}
	*major = __atomic_load_n(&dev[0], __ATOMIC_RELAXED);
	*minor = __atomic_load_n(&dev[1], __ATOMIC_RELAXED);
	return k > 0;
}

/*
 * 1 if @v maps a memfd (not a hugetlbfs one) where the kernel names it:
 * since 6.2 shmem_mmap() gives the mapping of a tmpfs file unlinked when
 * it is mapped the vm_ops of anonymous shared memory, which
 * madvise_vma_anon_name() names, private or shared.  A memfd never has a
 * link (vfs_link() refuses a file of no link that is not O_TMPFILE's), so
 * every mapping of one qualifies.  It is told by its path and the device
 * of the kernel's internal tmpfs (a file named /memfd:... elsewhere, or a
 * hugetlbfs memfd, is on another).  Other tmpfs files unlinked when mapped
 * (O_TMPFILE, or unlinked then mapped) cannot be told from files unlinked
 * after: /proc shows "(deleted)" for both; they stay refused (EBADF).
 */
int mmkit__vma_memfd(const struct mmkit__vma *v)
{
	static const char pre[] = "/memfd:", post[] = " (deleted)";
	unsigned int major, minor;

	return v->path_len > sizeof(pre) + sizeof(post) - 2 &&
	       !memcmp(v->path, pre, sizeof(pre) - 1) &&
	       !memcmp(v->path + v->path_len - (sizeof(post) - 1), post, sizeof(post) - 1) &&
	       memfd_dev(&major, &minor) && v->dev_major == major && v->dev_minor == minor;
}

int mmkit__vma_refpage(const struct mmkit__vma *v)
{
	return v->perms[3] == 'p' &&
	       (mmkit__vma_path_is(v, "/memfd:" MMKIT__REFPAGE_MEMFD_NAME " (deleted)") ||
		mmkit__vma_path_is(v, "anon_inode:[refpage]"));
}

int mmkit__kb_line(const char *line, const char *eol, const char *key,
		   unsigned long long *bytes)
{
	size_t n = strlen(key);
	unsigned long long kb;
	const char *p;

	if ((size_t)(eol - line) <= n || memcmp(line, key, n) || line[n] != ':')
		return 0;
	for (p = line + n + 1; p < eol && (*p == ' ' || *p == '\t'); p++)
		;
	if (!parse_dec(p, eol, &kb))
		return 0;
	*bytes = kb > ~0ULL / 1024 ? ~0ULL : kb * 1024;
	return 1;
}

int mmkit__kb_read(int dirfd, const char *path, const char *key, unsigned long long *bytes)
{
	struct mmkit__lines l;
	const char *line, *eol;
	int ret;

	ret = mmkit__lines_open(&l, dirfd, path);
	if (ret)
		return ret;
	while ((ret = mmkit__lines_next(&l, &line, &eol)) == 1)
		if (mmkit__kb_line(line, eol, key, bytes))
			break;
	mmkit__lines_close(&l);
	return ret == 1 ? 0 : ret ? ret : -ENOENT;
}

/* PF_KTHREAD of the kernel's include/linux/sched.h: the flag of a kernel thread. */
#define PROC_FLAG_KTHREAD	0x00200000UL

int mmkit__stat_parse(const char *line, const char *eol, enum mmkit__proc_kind *kind)
{
	const char *p = eol, *field;
	unsigned long long flags;
	char state;
	int i;

	/* "PID (COMM) STATE PPID ...": COMM may hold any byte, ')' too: the last ')' ends it. */
	while (p > line && p[-1] != ')')
		p--;
	if (p == line || eol - p < 3 || p[0] != ' ')
		return -EINVAL;
	state = p[1];
	/* Fields 4 to 8 (ppid pgrp session tty_nr tpgid), then 9, flags. */
	for (field = p + 2, i = 0; i < 5; i++) {
		if (field >= eol || *field != ' ')
			return -EINVAL;
		for (field++; field < eol && *field != ' '; field++)
			;
	}
	if (field >= eol || *field != ' ')
		return -EINVAL;
	field = parse_dec(field + 1, eol, &flags);
	if (!field || (field < eol && *field != ' '))
		return -EINVAL;
	if (state == 'Z' || state == 'X')
		*kind = MMKIT__PROC_ZOMBIE;
	else if (flags & PROC_FLAG_KTHREAD)
		*kind = MMKIT__PROC_KTHREAD;
	else
		*kind = MMKIT__PROC_USER;
	return 0;
}

int mmkit__proc_kind(int dirfd, const char *path, enum mmkit__proc_kind *kind)
{
	struct mmkit__lines l;
	const char *line, *eol;
	int ret;

	ret = mmkit__lines_open(&l, dirfd, path);
	if (ret)
		return ret;
	ret = mmkit__lines_next(&l, &line, &eol);
	if (ret == 1)
		ret = mmkit__stat_parse(line, eol, kind);
	else if (!ret)
		ret = -EINVAL;
	mmkit__lines_close(&l);
	return ret;
}

int mmkit__vmflags_has(const char *line, const char *eol, const char *flag)
{
	const char *p;

	if (eol - line < 8 || memcmp(line, "VmFlags:", 8))
		return 0;
	/* Two-letter flags, each after a space. */
	for (p = line + 8; eol - p >= 3; p++)
		if (p[0] == ' ' && p[1] == flag[0] && p[2] == flag[1] &&
		    (eol - p == 3 || p[3] == ' '))
			return 1;
	return 0;
}

int mmkit__ns_inode(int dirfd, const char *path, const char *type, uint64_t *ino)
{
	size_t n = strlen(type);
	unsigned long long v;
	const char *end;
	char link[64];
	ssize_t len;

	len = sys_readlinkat(dirfd, path, link, sizeof(link));
	if (len < 0)
		return (int)len;
	if ((size_t)len >= sizeof(link) || (size_t)len < n + 4 || memcmp(link, type, n) ||
	    memcmp(link + n, ":[", 2) || link[len - 1] != ']')
		return -EINVAL;
	end = parse_dec(link + n + 2, link + len - 1, &v);
	if (end != link + len - 1)
		return -EINVAL;
	*ino = v;
	return 0;
}

/* The states of @count pages from @addr into @state. */
static int page_states(int fd, uint64_t addr, size_t count, unsigned char *state)
{
	uint64_t entries[PAGEMAP_BATCH];
	size_t page = sys_page_size(), i;
	ssize_t n;
	int ret;

	if (fd < 0) {
		ret = sys_mincore((void *)(uintptr_t)addr, count * page, state);
		for (i = 0; !ret && i < count; i++)
			state[i] = state[i] & 1 ? MMKIT__PAGE_PRESENT : MMKIT__PAGE_ABSENT;
		return ret;
	}
	n = sys_pread(fd, entries, count * sizeof(entries[0]),
		      (off_t)(addr / page * sizeof(entries[0])));
	if (n != (ssize_t)(count * sizeof(entries[0])))
		return n < 0 ? (int)n : -EIO;
	for (i = 0; i < count; i++)
		state[i] = entries[i] & PM_PRESENT ? MMKIT__PAGE_PRESENT :
			   entries[i] & PM_SWAP ? MMKIT__PAGE_SWAPPED : MMKIT__PAGE_ABSENT;
	return 0;
}

int mmkit__pagemap_walk(int fd, uint64_t start, uint64_t end, mmkit__page_run_fn fn, void *arg)
{
	size_t page = sys_page_size(), i, count;
	unsigned char state[PAGEMAP_BATCH];
	uint64_t addr = start, run = start;
	int ret = 0, run_state = -1;

	while (addr < end && !ret) {
		count = (end - addr) / page < PAGEMAP_BATCH ? (size_t)((end - addr) / page) :
			PAGEMAP_BATCH;
		if (!count)
			return -EINVAL;
		ret = page_states(fd, addr, count, state);
		for (i = 0; i < count && !ret; i++, addr += page) {
			if (state[i] == run_state)
				continue;
			if (run_state >= 0)
				ret = fn(run, addr, (enum mmkit__page_state)run_state, arg);
			run = addr;
			run_state = state[i];
		}
	}
	if (!ret && run_state >= 0)
		ret = fn(run, addr, (enum mmkit__page_state)run_state, arg);
	return ret;
}

int mmkit__pagemap_scan(int fd, uint64_t start, uint64_t end, mmkit__page_run_fn fn, void *arg)
{
	struct pm_scan_region run[PM_SCAN_BATCH];
	struct pm_scan_request req;
	int n, i, ret = 0;

	memset(&req, 0, sizeof(req));
	req.size = sizeof(req);
	req.vec = (uintptr_t)run;
	req.vec_len = PM_SCAN_BATCH;
	/* Present or swapped, and not the zero page. */
	req.category_anyof_mask = PM_SCAN_PRESENT | PM_SCAN_SWAPPED;
	req.category_inverted = PM_SCAN_PFNZERO;
	req.category_mask = PM_SCAN_PFNZERO;
	req.return_mask = PM_SCAN_PRESENT | PM_SCAN_SWAPPED;
	while (start < end && !ret) {
		req.start = start;
		req.end = end;
		n = sys_ioctl(fd, PM_SCAN_IOCTL, &req);
		if (n < 0)
			return n;
		if (n > PM_SCAN_BATCH || req.walk_end <= start || req.walk_end > end)
			return -EIO;
		for (i = 0; i < n && !ret; i++) {
			if (run[i].start < start || run[i].end > req.walk_end ||
			    run[i].start >= run[i].end)
				return -EIO;
			ret = fn(run[i].start, run[i].end,
				 run[i].categories & PM_SCAN_PRESENT ? MMKIT__PAGE_PRESENT :
				 MMKIT__PAGE_SWAPPED, arg);
		}
		start = req.walk_end;
	}
	return ret;
}

int mmkit__fds_linked_to(int fd_dir, const char *link, mmkit__fd_fn fn, void *arg)
{
	char buf[4096] __attribute__((aligned(8))), target[PATH_MAX];
	size_t want = strlen(link), off;
	struct dirent64 *d;
	ssize_t n, len;
	int ret = 0;

	while (!ret && (n = sys_getdents64(fd_dir, buf, sizeof(buf))) > 0) {
		for (off = 0; !ret && off < (size_t)n; off += d->d_reclen) {
			d = (struct dirent64 *)(buf + off);
			/* One byte more than @link: a longer target does not match. */
			len = sys_readlinkat(fd_dir, d->d_name, target,
					     want + 1 < sizeof(target) ? want + 1 : sizeof(target));
			if (len == (ssize_t)want && !memcmp(target, link, want))
				ret = fn(fd_dir, d->d_name, arg);
		}
	}
	return ret ? ret : n < 0 ? (int)n : 0;
}

/* 1 if the comma-separated list [p, end) has the item @item. */
static int list_has(const char *p, const char *end, const char *item)
{
	size_t n = strlen(item);
	const char *comma;

	for (; p < end; p = comma + 1) {
		comma = memchr(p, ',', (size_t)(end - p));
		if (!comma)
			comma = end;
		if ((size_t)(comma - p) == n && !memcmp(p, item, n))
			return 1;
	}
	return 0;
}

/* The field after the @n-th space of [line, eol), its end in *@end. */
static const char *field(const char *line, const char *eol, int n, const char **end)
{
	const char *p = line;

	while (n-- > 0) {
		p = memchr(p, ' ', (size_t)(eol - p));
		if (!p)
			return NULL;
		p++;
	}
	*end = memchr(p, ' ', (size_t)(eol - p));
	if (!*end)
		*end = eol;
	return p;
}

/*
 * This thread's memory cgroup as /proc/thread-self/cgroup gives it (the
 * thread's own: v1 shows "/" for a process whose leader has exited): the v1
 * memory controller's line if there is one, else the v2 "0::" line, in
 * @path.  -ENOENT for none, or for a cgroup outside this cgroup namespace
 * (a path through ".."), whose ancestors this process cannot see.
 */
static int memcg_path(char *path, size_t len, int *v1)
{
	const char *line, *eol, *c1, *c2;
	struct mmkit__lines l;
	char v2[PATH_MAX] = "";
	size_t n;
	int ret;

	path[0] = '\0';
	ret = mmkit__lines_open(&l, AT_FDCWD, "/proc/thread-self/cgroup");
	if (ret)
		return ret;
	while ((ret = mmkit__lines_next(&l, &line, &eol)) == 1) {
		c1 = memchr(line, ':', (size_t)(eol - line));
		c2 = c1 ? memchr(c1 + 1, ':', (size_t)(eol - c1 - 1)) : NULL;
		n = c2 ? (size_t)(eol - c2 - 1) : 0;
		if (!c2 || n >= len || n >= sizeof(v2))
			continue;
		if (c2 == c1 + 1 && c1 - line == 1 && line[0] == '0') {
			memcpy(v2, c2 + 1, n);
			v2[n] = '\0';
		} else if (list_has(c1 + 1, c2, "memory")) {
			memcpy(path, c2 + 1, n);
			path[n] = '\0';
		}
	}
	mmkit__lines_close(&l);
	if (ret < 0)
		return ret;
	*v1 = !!path[0];
	if (!*v1)
		memcpy(path, v2, strlen(v2) + 1);
	if (path[0] != '/' || strstr(path, "/../") ||
	    ((n = strlen(path)) >= 3 && !strcmp(path + n - 3, "/..")))
		return -ENOENT;
	return 0;
}

/*
 * The directory of cgroup @path in the mount that shows it (cgroup2, or a
 * v1 hierarchy with the memory controller), into @c: of the mounts whose
 * root holds @path, the one with the shortest root, which shows the most
 * ancestors.  Paths with escaped bytes (a "\" in mountinfo) are not followed.
 */
static int memcg_find(struct mmkit__memcg *c, const char *path, int v1)
{
	const char *line, *eol, *p, *end, *root, *root_end, *mnt, *mnt_end, *sep;
	size_t rlen, mlen, best = SIZE_MAX, plen = strlen(path);
	struct mmkit__lines l;
	int ret;

	ret = mmkit__lines_open(&l, AT_FDCWD, "/proc/self/mountinfo");
	if (ret)
		return ret;
	while ((ret = mmkit__lines_next(&l, &line, &eol)) == 1) {
		sep = NULL;
		for (p = line; p + 3 <= eol; p++)
			if (!memcmp(p, " - ", 3)) {
				sep = p + 3;
				break;
			}
		root = field(line, eol, 3, &root_end);
		mnt = root ? field(line, eol, 4, &mnt_end) : NULL;
		if (!sep || !mnt || memchr(line, '\\', (size_t)(eol - line)))
			continue;
		p = field(sep, eol, 0, &end);
		if (v1 ? !((size_t)(end - p) == 6 && !memcmp(p, "cgroup", 6) &&
			   (p = field(sep, eol, 2, &end)) && list_has(p, end, "memory")) :
			 !((size_t)(end - p) == 7 && !memcmp(p, "cgroup2", 7)))
			continue;
		/* The cgroup's path is under the mount's root (a namespace's or a bind mount's). */
		rlen = root_end - root == 1 ? 0 : (size_t)(root_end - root);
		mlen = (size_t)(mnt_end - mnt);
		if (rlen >= best || rlen > plen || memcmp(path, root, rlen) ||
		    (path[rlen] != '/' && path[rlen]) || mlen + plen - rlen >= sizeof(c->dir))
			continue;
		memcpy(c->dir, mnt, mlen);
		/* The mount's own cgroup is the mount point, without a trailing "/". */
		memcpy(c->dir + mlen, path + rlen, plen - rlen + 1);
		if (c->dir[mlen] == '/' && !c->dir[mlen + 1])
			c->dir[mlen] = '\0';
		c->top = mlen;
		best = rlen;
	}
	mmkit__lines_close(&l);
	if (ret < 0)
		return ret;
	if (best == SIZE_MAX)
		return -ENOENT;
	c->v1 = v1;
	memcpy(c->cgroup, path, plen + 1);
	return 0;
}

/* The limit in the file @file of a cgroup filesystem, or ULLONG_MAX. */
static unsigned long long memcg_read(const char *file)
{
	unsigned long long limit = ULLONG_MAX, v = 0;
	const char *line, *eol;
	struct mmkit__lines l;
	struct statfs sf;

	if (mmkit__lines_open(&l, AT_FDCWD, file))
		return limit;
	/* Only a cgroup filesystem's file: the path came from another file. */
	if (!sys_fstatfs(l.fd, &sf) &&
	    (sf.f_type == CGROUP_SUPER_MAGIC || sf.f_type == CGROUP2_SUPER_MAGIC) &&
	    mmkit__lines_next(&l, &line, &eol) == 1 && parse_dec(line, eol, &v) == eol &&
	    v < (1ULL << 62))	/* v1's "no limit" is PAGE_COUNTER_MAX pages, above 2^62 */
		limit = v;
	mmkit__lines_close(&l);
	return limit;
}

int mmkit__memcg_limit(struct mmkit__memcg *c, unsigned long long *bytes, char *where, size_t len)
{
	char path[PATH_MAX], dir[PATH_MAX], file[PATH_MAX + 32];
	unsigned long long limit;
	int v1, ret;
	char *slash;
	size_t i;

	ret = memcg_path(path, sizeof(path), &v1);
	if (ret)
		return ret;
	if (!c->cgroup[0] || c->v1 != v1 || strcmp(c->cgroup, path)) {
		c->cgroup[0] = '\0';
		ret = memcg_find(c, path, v1);
		if (ret)
			return ret;
	}
	memcpy(dir, c->dir, sizeof(dir));
	*bytes = ULLONG_MAX;
	for (;;) {
		snprintf(file, sizeof(file), "%s/%s", dir,
			 c->v1 ? "memory.limit_in_bytes" : "memory.max");
		limit = memcg_read(file);
		if (limit < *bytes) {
			*bytes = limit;
			/* Shown to people: no control bytes of a cgroup's name. */
			snprintf(where, len, "%s", file);
			for (i = 0; where[i]; i++)
				if ((unsigned char)where[i] < 0x20 || where[i] == 0x7f)
					where[i] = '?';
		}
		slash = strrchr(dir, '/');
		if (!slash || (size_t)(slash - dir) < c->top)
			break;
		*slash = '\0';
	}
	return 0;
}
