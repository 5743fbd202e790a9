// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * What a core dump holds of a reference-page mapping, on the backend named
 * on the command line (syscall or kmod: tests/test-refpage-core.args).  A
 * child maps CORE_PAGES pages, overwrites one (which gives the mapping an
 * anon_vma: the dump takes the mapping whole), reads another and aborts;
 * its core goes to a tmpfs the test mounts, through a core_pattern the test
 * sets and restores (root only).  The page written is in the core on both.
 * syscall (the kernel series): what reads as the pattern is left out, as
 * the zero page is: few pages of the pattern in the core (the library's
 * own copy of it), few blocks written.
 * kmod: refpage.ko maps ordinary pages (VM_MIXEDMAP) and cannot change
 * what a dump takes: every page of the mapping is in the core as the
 * pattern, the pages never touched faulted in for the dump (docs/kernel.md).
 * The test holds each backend to what docs/kernel.md says, so that a change
 * shows.
 */
#include <fcntl.h>
#include <limits.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "refpage-test.h"

#define CORE_PAGES	4096
#define CORE_PATTERN	"/proc/sys/kernel/core_pattern"

/* The bytes the child writes over its page: nowhere else in its memory. */
static unsigned char written_byte(size_t i)
{
	return (unsigned char)(i * 7 + 3);
}

/* What the core of a child that dumped one says. */
struct core {
	int has_written;	/* the page the child wrote */
	long pattern_pages;	/* pages of the pattern, at page offsets */
	long long kb;		/* kB the core's file allocated */
};

/*
 * Reads the core @fd, of @size bytes, into @c: whether it holds @written
 * (@len bytes), and how many of its pages hold @pattern_page.  The core's
 * segments start at page offsets.
 */
static void read_core(int fd, size_t size, const void *written, size_t len,
		      const unsigned char *pattern_page, struct core *c)
{
	unsigned char *data = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
	size_t off;

	T_ASSERT(data != MAP_FAILED);
	c->has_written = memmem(data, size, written, len) != NULL;
	c->pattern_pages = 0;
	for (off = 0; off + page <= size; off += page)
		c->pattern_pages += !memcmp(data + off, pattern_page, page);
	munmap(data, size);
}

/* Writes @s to kernel.core_pattern; 0, or -1. */
static int set_core_pattern(const char *s)
{
	FILE *f = fopen(CORE_PATTERN, "w");

	if (!f)
		return -1;
	if (fputs(s, f) < 0) {
		fclose(f);
		return -1;
	}
	return fclose(f) ? -1 : 0;
}

/*
 * Dumps the core of a child that wrote and read @p (CORE_PAGES pages) into
 * a tmpfs at @dir, with core_pattern set meanwhile, and reads it.  0, or
 * the child's wait status when it dumped no core.
 */
static int dump_core(unsigned char *p, const char *dir, struct core *c)
{
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	char saved[PATH_MAX], path[PATH_MAX + 32];
	unsigned char written[256], *pattern_page;
	int status = 0, fd;
	struct stat st;
	FILE *f;
	size_t i;
	pid_t pid;

	f = fopen(CORE_PATTERN, "r");
	T_ASSERT(f && fgets(saved, sizeof(saved), f));
	fclose(f);
	saved[strcspn(saved, "\n")] = 0;
	snprintf(path, sizeof(path), "%s/core", dir);
	T_EQ(set_core_pattern(path), 0);
	pid = fork();
	if (!pid) {
		setrlimit(RLIMIT_CORE, &unlimited);
		prctl(PR_SET_DUMPABLE, 1);
		signal(SIGABRT, SIG_DFL);
		for (i = 0; i < page; i++)
			p[CORE_PAGES / 2 * page + i] = written_byte(i);
		(void)*(volatile unsigned char *)(p + CORE_PAGES / 4 * page);
		abort();
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
	/* Before anything can fail: core_pattern as it was. */
	T_EQ(set_core_pattern(saved), 0);
	T_ASSERT(pid > 0);
	if (!WIFSIGNALED(status) || !WCOREDUMP(status))
		return status ? status : -1;
	fd = open(path, O_RDONLY);
	if (fd < 0) {	/* kernel.core_uses_pid appends the pid */
		snprintf(path, sizeof(path), "%s/core.%d", dir, pid);
		fd = open(path, O_RDONLY);
	}
	T_ASSERT(fd >= 0 && fstat(fd, &st) == 0);
	/* Made after the fork, so that the child's memory has neither. */
	pattern_page = malloc(page);
	T_ASSERT(pattern_page);
	for (i = 0; i < page; i++)
		pattern_page[i] = pattern[i % sizeof(pattern)];
	for (i = 0; i < sizeof(written); i++)
		written[i] = written_byte(i);
	read_core(fd, st.st_size, written, sizeof(written), pattern_page, c);
	free(pattern_page);
	c->kb = (long long)st.st_blocks / 2;
	close(fd);
	unlink(path);
	return 0;
}

static char dir[] = "/tmp/mmkit-refpage-core.XXXXXX";

/* At exit, a failed case's too: the tmpfs for the core gone. */
static void unmount_dir(void)
{
	umount(dir);
	rmdir(dir);
}

int main(int argc, char **argv)
{
	unsigned int flag = refpage_test_backend(argc, argv);
	long long len_kb;
	struct core c;
	unsigned char *p;
	int status;

	if (flag != MMKIT_REFPAGE_BACKEND_SYSCALL && flag != MMKIT_REFPAGE_BACKEND_KMOD)
		T_SKIP("core dumps are tested on the kernel backends (syscall, kmod)");
	if (!t_is_root())
		T_SKIP("setting kernel.core_pattern and mounting a tmpfs need root");
	T_ASSERT(mkdtemp(dir));
	atexit(unmount_dir);
	if (mount("mmkit-refpage-core", dir, "tmpfs", 0, "size=64m"))
		T_SKIP("cannot mount a tmpfs for the core: %s", strerror(errno));
	p = map(create(flag, 16), CORE_PAGES * page, PROT_READ | PROT_WRITE);
	len_kb = (long long)(CORE_PAGES * page / 1024);
	status = dump_core(p, dir, &c);
	if (status)
		T_SKIP("the child dumped no core (wait status %#x)", status);
	printf("%s: a core with %lld kB of pattern mapped allocates %lld kB, %ld pages of pattern\n",
	       argv[1], len_kb, c.kb, c.pattern_pages);
	T_CASE("the page written is in the core");
	T_ASSERT(c.has_written);
	if (flag == MMKIT_REFPAGE_BACKEND_SYSCALL) {
		/* The library's own copy of the pattern page is dumped. */
		T_CASE("syscall: the pattern is left out, as the zero page is");
		T_ASSERT(c.pattern_pages < CORE_PAGES / 16);
		T_ASSERT(c.kb < len_kb / 4);
	} else {
		T_CASE("kmod: every page of the mapping is in the core, as the pattern");
		T_ASSERT(c.pattern_pages >= CORE_PAGES - 1);
		T_ASSERT(c.kb >= len_kb);
	}
	return T_EXIT_PASS;
}
