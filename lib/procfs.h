/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * The procfs layer: the one reader of each /proc format libmmkit and the
 * command use.  Another process's /proc files are hostile input: every
 * reader here is bounded in memory whatever the file holds, and rejects a
 * line it cannot parse instead of guessing.  Not installed.
 */
#ifndef MMKIT_PROCFS_H
#define MMKIT_PROCFS_H

#include <stddef.h>
#include <limits.h>
#include <stdint.h>

/*
 * The longest line accepted: a path of PATH_MAX bytes escaped and more.
 * The buffer starts at a page and doubles up to this only for long lines.
 */
#define MMKIT__LINE_MAX		65536

/* A /proc text file read a chunk at a time, line by line. */
struct mmkit__lines {
	int fd;
	char *buf;
	size_t cap;		/* bytes of buf */
	size_t len;		/* bytes in buf */
	size_t pos;		/* first byte not yet returned */
	int eof;
};

/* Opens @path relative to @dirfd (AT_FDCWD, or an open /proc/PID). */
int mmkit__lines_open(struct mmkit__lines *l, int dirfd, const char *path);
/*
 * The next line as [*line, *eol), *eol being its '\n' or the end of the
 * file: 1, or 0 at the end, or -errno (-EIO: a line longer than the buffer).
 */
int mmkit__lines_next(struct mmkit__lines *l, const char **line, const char **eol);
void mmkit__lines_close(struct mmkit__lines *l);

/* A line of /proc/PID/maps, or the first line of a VMA in /proc/PID/smaps. */
struct mmkit__vma {
	uint64_t start;
	uint64_t end;
	uint64_t offset;
	uint64_t inode;
	unsigned int dev_major;
	unsigned int dev_minor;
	char perms[5];
	const char *path;	/* path_len bytes, not NUL-terminated; "" for none */
	size_t path_len;
};

/* "start-end perms offset major:minor inode   path": 0, or -EINVAL. */
int mmkit__vma_parse(const char *line, const char *eol, struct mmkit__vma *v);
/* 1 if the VMA's path is exactly @s. */
int mmkit__vma_path_is(const struct mmkit__vma *v, const char *s);
/* 1 if @v is MAP_SHARED | MAP_ANONYMOUS memory: shmem shown as "/dev/zero (deleted)". */
int mmkit__vma_anon_shmem(const struct mmkit__vma *v);
/*
 * 1 if @v maps a memfd (not of hugetlbfs) and the kernel names memfd
 * mappings (6.2+: as anonymous shared memory).
 */
int mmkit__vma_memfd(const struct mmkit__vma *v);

/* The name of the memfd backend's pattern files (refpage-memfd.c). */
#define MMKIT__REFPAGE_MEMFD_NAME	"mmkit-refpage"
/*
 * 1 if @v is reference-page memory of a file: a private mapping of a memfd
 * pattern file or of a refpage.ko descriptor, which mmkit names in its
 * registry where the kernel names only anonymous memory.  Only the paths
 * these files show are taken, which ordinary files cannot have: a file's
 * path starts with "/", so "anon_inode:[refpage]" is the module's, and
 * "/memfd:mmkit-refpage (deleted)" would be a file in / itself, which only
 * root can make.
 */
int mmkit__vma_refpage(const struct mmkit__vma *v);

/*
 * 1 if [line, eol) is "@key:   N kB" (smaps, status, meminfo), with N KiB
 * in *@bytes as bytes (saturated); 0 if it is another line.
 */
int mmkit__kb_line(const char *line, const char *eol, const char *key,
		   unsigned long long *bytes);
/* @key's "N kB" line of the file @path of @dirfd, in bytes; -ENOENT if absent. */
int mmkit__kb_read(int dirfd, const char *path, const char *key, unsigned long long *bytes);
/* 1 if [line, eol) is smaps' "VmFlags:" line and lists the two-letter @flag. */
int mmkit__vmflags_has(const char *line, const char *eol, const char *flag);

/* What /proc/PID/stat says a process is, for a reader of its memory. */
enum mmkit__proc_kind {
	MMKIT__PROC_USER,	/* a process with user memory */
	MMKIT__PROC_KTHREAD,	/* a kernel thread: no user memory at all */
	MMKIT__PROC_ZOMBIE,	/* exited, not yet waited for: its memory is gone */
};
/* The kind of process whose /proc/PID/stat line is [line, eol); -EINVAL if it is not one. */
int mmkit__stat_parse(const char *line, const char *eol, enum mmkit__proc_kind *kind);
/* The same from the file @path of @dirfd ("/proc/2/stat", or "stat" of /proc/PID). */
int mmkit__proc_kind(int dirfd, const char *path, enum mmkit__proc_kind *kind);

/*
 * The inode number of the namespace that the link @path of @dirfd names
 * ("/proc/self/ns/user" reads "user:[4026531837]"), of type @type.
 */
int mmkit__ns_inode(int dirfd, const char *path, const char *type, uint64_t *ino);

/* The state of a page in /proc/PID/pagemap (bit 63 present, bit 62 swapped). */
enum mmkit__page_state {
	MMKIT__PAGE_ABSENT,
	MMKIT__PAGE_PRESENT,
	MMKIT__PAGE_SWAPPED,
};

typedef int (*mmkit__page_run_fn)(uint64_t start, uint64_t end, enum mmkit__page_state state,
				  void *arg);

/*
 * Calls @fn for each run of pages of [start, end) (page aligned) in one
 * state, in address order, until it returns non-zero, which is returned.
 * @fd: an open pagemap; -1 for this process's pages by mincore(2), which
 * cannot see swapped-out pages (they count as absent).
 */
int mmkit__pagemap_walk(int fd, uint64_t start, uint64_t end, mmkit__page_run_fn fn, void *arg);

/*
 * Calls @fn for each run of present or swapped pages of [start, end) (page
 * aligned) of the open pagemap @fd, in address order, until it returns
 * non-zero, which is returned.  Absent pages, and the shared zero page
 * (present in pagemap, never counted in smaps' Rss), are not reported.
 * The kernel's PAGEMAP_SCAN (6.7+) skips unpopulated page tables whole, so
 * the cost follows what is mapped, not the span; -ENOTTY before 6.7.
 */
int mmkit__pagemap_scan(int fd, uint64_t start, uint64_t end, mmkit__page_run_fn fn, void *arg);

/*
 * Calls @fn(@fd_dir, NAME, @arg) for each entry NAME of @fd_dir (an open
 * /proc/PID/fd) whose link reads exactly @link, until @fn returns
 * non-zero, which is returned.  -errno if the directory cannot be read.
 */
typedef int (*mmkit__fd_fn)(int fd_dir, const char *name, void *arg);
int mmkit__fds_linked_to(int fd_dir, const char *link, mmkit__fd_fn fn, void *arg);

/*
 * Where the limits of a thread's memory cgroup are, kept between calls of
 * mmkit__memcg_limit() (reading mountinfo is the cost: ~100 us, more with
 * many mounts); found again when the thread's cgroup changes.  Zeroed
 * before the first call; its user serialises calls.
 */
struct mmkit__memcg {
	char cgroup[PATH_MAX];	/* the cgroup's path in /proc/thread-self/cgroup; "" for none */
	char dir[PATH_MAX];	/* its directory */
	size_t top;		/* bytes of dir that are the mount point */
	int v1;			/* the v1 memory controller's files, else cgroup v2's */
};

/*
 * The memory limit of the calling thread's memory cgroup: the smallest of
 * memory.max (cgroup v2) or memory.limit_in_bytes (the v1 memory
 * controller, which a hybrid mount uses) of its cgroup and each ancestor
 * this process can see (up to the root of its cgroup namespace and of the
 * mount), in *@bytes (ULLONG_MAX: no limit), and the file that sets it in
 * @where (@len bytes, control bytes shown as '?').  0, or -errno (-ENOENT:
 * no memory cgroup mounted where this process can see it).
 */
int mmkit__memcg_limit(struct mmkit__memcg *c, unsigned long long *bytes, char *where, size_t len);
#endif /* MMKIT_PROCFS_H */
