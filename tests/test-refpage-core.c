// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * What a core dump holds of a reference-page mapping, on the backend named
 * on the command line (syscall or kmod: tests/test-refpage-core.args).  A
 * child maps CORE_PAGES pages, overwrites one (which gives the mapping an
 * anon_vma: the dump takes the mapping whole), reads another and aborts;
 * its core goes to a tmpfs the test mounts (root only), which the child
 * makes its working directory: core_pattern is left as it is, machine-wide
 * (the test skips when it names no file in the working directory: absolute,
 * or a pipe).  The page written is in the core on both.
 * syscall (the kernel series): what reads as the pattern is left out, as
 * the zero page is: few pages of the pattern in the core (the library's
 * own copy of it), few blocks written.
 * kmod: refpage.ko maps ordinary pages (VM_MIXEDMAP) and cannot change
 * what a dump takes: every page of the mapping is in the core as the
 * pattern, the pages never touched faulted in for the dump (docs/kernel.md).
 * The test holds each backend to what docs/kernel.md says, so that a change
 * shows.
 */
#include <dirent.h>
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

/*
 * Opens the one file in @dir, the core (core_pattern names it: "core",
 * "core.PID" with kernel.core_uses_pid, or with %-specifiers), into @path;
 * the fd, or -1.
 */
static int open_core(const char *dir, char *path, size_t size)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int fd = -1;

	if (!d)
		return -1;
	while ((e = readdir(d)))
		if (e->d_name[0] != '.' && fd < 0) {
			snprintf(path, size, "%s/%s", dir, e->d_name);
			fd = open(path, O_RDONLY);
		}
	closedir(d);
	return fd;
}

/*
 * Dumps the core of a child that wrote and read @p (CORE_PAGES pages) into
 * @dir, its working directory, and reads it.  0, or the child's wait status
 * when it dumped no core.
 */
static int dump_core(unsigned char *p, const char *dir, struct core *c)
{
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	unsigned char written[256], *pattern_page;
	char path[PATH_MAX + 256];
	int status = 0, fd;
	struct stat st;
	size_t i;
	pid_t pid;

	pid = fork();
	if (!pid) {
		if (chdir(dir))
			_exit(3);
		setrlimit(RLIMIT_CORE, &unlimited);
		prctl(PR_SET_DUMPABLE, 1);
		signal(SIGABRT, SIG_DFL);
		for (i = 0; i < page; i++)
			p[CORE_PAGES / 2 * page + i] = written_byte(i);
		(void)*(volatile unsigned char *)(p + CORE_PAGES / 4 * page);
		abort();
	}
	T_ASSERT(pid > 0);
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
		T_FAIL("the child cannot enter %s", dir);
	if (!WIFSIGNALED(status) || !WCOREDUMP(status))
		return status ? status : -1;
	fd = open_core(dir, path, sizeof(path));
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
	char core_pattern[PATH_MAX] = "";
	long long len_kb;
	struct core c;
	unsigned char *p;
	int status;
	FILE *f;

	if (flag != MMKIT_REFPAGE_BACKEND_SYSCALL && flag != MMKIT_REFPAGE_BACKEND_KMOD)
		T_SKIP("core dumps are tested on the kernel backends (syscall, kmod)");
	if (!t_is_root())
		T_SKIP("mounting a tmpfs for the core needs root");
	f = fopen(CORE_PATTERN, "r");
	if (!f || !fgets(core_pattern, sizeof(core_pattern), f))
		T_FAIL("cannot read %s", CORE_PATTERN);
	fclose(f);
	core_pattern[strcspn(core_pattern, "\n")] = 0;
	/* The test leaves it as it is: the machine's, shared with every process. */
	if (core_pattern[0] == '|' || strchr(core_pattern, '/'))
		T_SKIP("core_pattern is \"%s\", not a file in the working directory", core_pattern);
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
