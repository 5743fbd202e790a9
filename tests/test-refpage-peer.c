// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * A peer against the memfd backend's pattern file (mmkit_refpage(3),
 * "memfd"): a process of the same user opens the victim's pattern file
 * read-write through /proc/PID/fd/N, as any process that may read the
 * victim's descriptors can, and tries to write it (write, pwrite), to
 * truncate or grow it (ftruncate), to punch a hole in it (fallocate), to
 * map it writable (MAP_SHARED), to unseal nothing more (F_ADD_SEALS).
 * Each must fail: unsealed, the untouched pages of every object of the
 * pattern read what the peer wrote, and a truncated file makes the next
 * read of an untouched page SIGBUS.  Then the victim's untouched pages
 * must still read the pattern, in the range mapped before and in one
 * mapped after.  As root and as uid 65534 (the victim made dumpable again,
 * as a program started as that user is, so that the peer may open its
 * descriptors).
 */
#include <dirent.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <sys/mman.h>
#include <sys/prctl.h>

#include "mmkit.h"
#include "harness.h"

#define RANGE		(1UL << 20)

static const unsigned char pattern = 0x5a;
static size_t page;

/* The descriptor of this process's pattern file. */
static int pattern_fd(void)
{
	struct dirent *d;
	char link[64];
	int fd = -1;
	ssize_t n;
	DIR *dir;

	dir = opendir("/proc/self/fd");
	T_ASSERT(dir);
	while ((d = readdir(dir))) {
		n = readlinkat(dirfd(dir), d->d_name, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		if (!strcmp(link, "/memfd:mmkit-refpage (deleted)"))
			fd = atoi(d->d_name);
	}
	closedir(dir);
	T_ASSERT(fd >= 0);
	return fd;
}

/* Each attack on /proc/@victim/fd/@n must fail: the first that works is named. */
static void peer(pid_t victim, int n)
{
	unsigned char junk[4096];
	char path[64];
	void *p;
	int fd;

	/* Only what any process of the user can do: no descriptor inherited. */
	close(n);
	memset(junk, 0xee, sizeof(junk));
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)victim, n);
	fd = open(path, O_RDWR);
	if (fd < 0)
		T_FAIL("open %s read-write: %s (the attack needs it to work)", path, strerror(errno));
	if (write(fd, junk, sizeof(junk)) >= 0)
		T_FAIL("the peer wrote the pattern file (write)");
	if (pwrite(fd, junk, sizeof(junk), (off_t)page) >= 0)
		T_FAIL("the peer wrote the pattern file (pwrite)");
	if (!ftruncate(fd, 0))
		T_FAIL("the peer truncated the pattern file");
	if (!ftruncate(fd, (off_t)(2 * RANGE)))
		T_FAIL("the peer grew the pattern file");
	if (!fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, 0, (off_t)RANGE))
		T_FAIL("the peer punched a hole in the pattern file");
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p != MAP_FAILED)
		T_FAIL("the peer mapped the pattern file writable");
	if (!fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK))
		T_FAIL("the peer could still change the pattern file's seals");
	close(fd);
}

static void suite(void *as_nobody)
{
	struct mmkit_refpage *rp;
	unsigned char *before, *after;
	int status, n;
	void *v;
	pid_t pid;

	if (as_nobody) {
		t_become_nobody();
		/* Changing uid made this process undumpable: its /proc/PID/fd root's alone. */
		T_EQ(prctl(PR_SET_DUMPABLE, 1), 0);
	}
	T_EQ(mmkit_refpage_create(&rp, &pattern, 1, MMKIT_REFPAGE_BACKEND_MEMFD), 0);
	T_EQ(mmkit_refpage_map(rp, RANGE, PROT_READ | PROT_WRITE, &v), 0);
	before = v;
	n = pattern_fd();
	fflush(NULL);
	pid = fork();
	T_ASSERT(pid >= 0);
	if (!pid) {
		peer(getppid(), n);
		_exit(0);
	}
	T_EQ(waitpid(pid, &status, 0), pid);
	T_CHILD_OK(status);
	/* A SIGBUS here (a truncated file) ends the child: the parent says so. */
	t_expect_bytes(before, RANGE, pattern);
	T_EQ(mmkit_refpage_map(rp, RANGE, PROT_READ | PROT_WRITE, &v), 0);
	after = v;
	t_expect_bytes(after, RANGE, pattern);
	T_EQ(mmkit_refpage_unmap(rp, before, RANGE), 0);
	T_EQ(mmkit_refpage_unmap(rp, after, RANGE), 0);
	mmkit_refpage_destroy(rp);
}

int main(void)
{
	char why[MMKIT_REASON_MAX];

	if (mmkit_refpage_backend_available(MMKIT_REFPAGE_BACKEND_MEMFD, why, sizeof(why)))
		T_SKIP("memfd backend unavailable: %s", why);
	page = (size_t)sysconf(_SC_PAGESIZE);
	T_CASE("a peer of the same user can neither write, resize nor map writable the pattern file");
	T_CHILD_OK(t_in_child(suite, NULL));
	if (t_is_root()) {
		T_CASE("the same as uid 65534");
		T_CHILD_OK(t_in_child(suite, "nobody"));
	}
	return T_EXIT_PASS;
}
