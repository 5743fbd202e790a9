// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Reading the registry of a process (names-registry.c has the format):
 * this process's under its lock, another's through /proc/PID/fd.  Another
 * process's memory is not trusted: what it holds is checked, bounded and
 * read again when torn.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <linux/magic.h>

#include "names.h"

/* A writer holds seq odd for a memcpy(); this many torn reads in a row is not contention. */
#define REGISTRY_READ_TRIES	1000
/* Most entries taken from another process: bounds what its header makes us allocate. */
#define REGISTRY_MAX_ENTRIES	(1u << 20)

/* An array of named ranges, sorted by start, not overlapping. */
struct table {
	struct mmkit__name_range *e;
	size_t n;
};

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
	struct mmkit__registry_header h, again;
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
		if ((size_t)n < sizeof(h) || h.magic != MMKIT__REGISTRY_MAGIC ||
		    h.version != MMKIT__REGISTRY_VERSION || h.count > REGISTRY_MAX_ENTRIES)
			return 0;
		if (h.seq & 1)
			continue;
		bytes = h.count * sizeof(*e);
		if (bytes) {
			e = mmkit__calloc(h.count, sizeof(*e));
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
	bigger = mmkit__reallocarray(t->e, t->n + 2 * n, sizeof(*bigger));
	if (!bigger) {
		free(e);
		return -ENOMEM;
	}
	t->e = bigger;
	for (i = 0; i < n; i++)
		mmkit__ranges_set(t->e, &t->n, e[i].start, e[i].end, e[i].name);
	free(e);
	return 0;
}

/*
 * Opens descriptor @name of /proc/PID/fd (@dfd) for reading if it is a
 * memfd: an unlinked regular file of shmem (tmpfs, or ramfs on a kernel
 * without CONFIG_SHMEM), where no open or read can block.  Its link alone
 * proves nothing: any file unlinked from the path "/memfd:mmkit-names"
 * reads the same, and opening a FIFO there would wait for a writer
 * forever, a file of a FUSE or NFS mount for its server.  So the file is
 * opened O_PATH, which opens nothing behind it, checked, and only then
 * reopened through /proc/self/fd.  A hugetlbfs memfd is not ours either:
 * the registry never asks for huge pages.  Returns the descriptor,
 * -ENOENT if the target closed it meanwhile, -ENODEV if it is not a
 * memfd, or -errno.
 */
static int registry_open(int dfd, const char *name)
{
	struct statfs sf;
	struct stat st;
	char self[32];
	int path_fd, fd, ret;

	path_fd = sys_openat(dfd, name, O_PATH | O_CLOEXEC, 0);
	if (path_fd < 0)
		return path_fd;
	ret = sys_fstat(path_fd, &st);
	if (!ret)
		ret = sys_fstatfs(path_fd, &sf);
	if (!ret && (!S_ISREG(st.st_mode) || st.st_nlink ||
		     (sf.f_type != TMPFS_MAGIC && sf.f_type != RAMFS_MAGIC)))
		ret = -ENODEV;
	if (ret) {
		sys_close(path_fd);
		return ret;
	}
	snprintf(self, sizeof(self), "/proc/self/fd/%d", path_fd);
	fd = sys_open(self, O_RDONLY | O_NONBLOCK | O_CLOEXEC, 0);
	sys_close(path_fd);
	return fd;
}

/*
 * The registries of process @pid: normally one, but two copies of libmmkit
 * (static and shared) in one process each keep theirs.
 */
static ssize_t registry_read_pid(pid_t pid, struct mmkit__name_range **out,
				 struct mmkit__names_stats *stats)
{
	char path[64], link[sizeof(MMKIT__REGISTRY_LINK)];
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
			if (len != (ssize_t)sizeof(link) - 1 || memcmp(link, MMKIT__REGISTRY_LINK, (size_t)len))
				continue;
			fd = registry_open(dfd, d->d_name);
			if (fd == -ENODEV)
				stats->decoys++;
			if (fd == -ENOENT || fd == -ENODEV)
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

ssize_t mmkit__names_read(pid_t pid, struct mmkit__name_range **out,
			  struct mmkit__names_stats *stats)
{
	*out = NULL;
	memset(stats, 0, sizeof(*stats));
	/* A kernel that names VMAs itself: no process on it keeps a registry. */
	if (!mmkit__kernel_names())
		return 0;
	if (pid && pid != sys_getpid())
		return registry_read_pid(pid, out, stats);
	return mmkit__registry_copy(out);
}

ssize_t mmkit__names_get(pid_t pid, struct mmkit__name_range **out)
{
	struct mmkit__names_stats stats;

	return mmkit__names_read(pid, out, &stats);
}
