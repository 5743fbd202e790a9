// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Secret memory, leaks: a core dump of a process holding a known secret
 * does not contain it (both backends; a control run with the same bytes in
 * malloc'ed memory proves the search works); process_vm_readv() and
 * /proc/PID/mem reads of a secret fail on the memfd_secret backend (and
 * succeed on the fallback, as documented); a forked child cannot read the
 * parent's secrets: SIGSEGV through fork() on both backends, and through
 * a raw clone() a hole (memfd_secret) or zeros (fallback).
 */
#include <dirent.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "harness.h"
#include "secret-backends.h"
#include "mmkit.h"

#define MARK_LEN	64


static void *secret(size_t size)
{
	void *p = NULL;
	int ret = mmkit_secret_alloc(&p, size, MMKIT_SECRET_QUIET);

	if (ret)
		T_FAIL("mmkit_secret_alloc(%zu): %s", size, strerror(-ret));
	return p;
}

/*
 * Writes the marker straight into @dst, byte by byte, so that no copy of it
 * exists anywhere else in the process (no literal, no stack buffer).
 */
static void write_mark(volatile unsigned char *dst, uint64_t seed)
{
	uint64_t x = seed;
	int i;

	for (i = 0; i < MARK_LEN; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		dst[i] = (unsigned char)(x >> 24);
	}
}

static int contains(const unsigned char *hay, size_t len, const unsigned char *needle)
{
	size_t i;

	for (i = 0; i + MARK_LEN <= len; i++)
		if (hay[i] == needle[0] && !memcmp(hay + i, needle, MARK_LEN))
			return 1;
	return 0;
}

/* ------------------------------------------------------------------ */

static const char *core_dir;

static void dump_core(void *arg)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };
	int in_secret = arg != NULL;
	unsigned char *pooled, *paged, *plain;

	if (chdir(core_dir) || setrlimit(RLIMIT_CORE, &rl))
		_exit(3);
	pooled = secret(MARK_LEN);
	paged = secret(8192);
	if (in_secret) {
		write_mark(pooled, 0x1234567);
		write_mark(paged + 4000, 0x7654321);
	} else {
		plain = malloc(8192);
		write_mark(plain, 0x1234567);
		write_mark(plain + 4000, 0x7654321);
	}
	signal(SIGABRT, SIG_DFL);
	abort();
}

/* Runs dump_core in a child and returns the core file's contents. */
static unsigned char *core_of(int in_secret, size_t *len)
{
	char path[512];
	struct dirent *de;
	unsigned char *buf;
	struct stat st;
	int status, fd;
	DIR *dir;

	status = t_in_child(dump_core, in_secret ? (void *)1 : NULL);
	T_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	if (!WCOREDUMP(status))
		T_FAIL("no core dumped (core_pattern, RLIMIT_CORE or dumpability)");
	dir = opendir(core_dir);
	T_ASSERT(dir);
	while ((de = readdir(dir)) && de->d_name[0] == '.')
		;
	T_ASSERT(de);
	snprintf(path, sizeof(path), "%s/%s", core_dir, de->d_name);
	closedir(dir);
	fd = open(path, O_RDONLY);
	T_ASSERT(fd >= 0 && !fstat(fd, &st) && st.st_size > 0);
	buf = malloc((size_t)st.st_size);
	T_ASSERT(buf);
	T_EQ(read(fd, buf, (size_t)st.st_size), st.st_size);
	close(fd);
	unlink(path);
	*len = (size_t)st.st_size;
	return buf;
}

static void test_core_dump(void)
{
	unsigned char mark1[MARK_LEN], mark2[MARK_LEN], *core, *plain;
	char dir[] = "/tmp/mmkit-secret-core-XXXXXX";
	char pattern[256] = "";
	size_t len, plain_len;
	FILE *f;

	T_CASE("a core dump does not contain the secrets (control: it does contain plain memory)");
#ifdef __SANITIZE_ADDRESS__
	printf("    skipped: ASan maps terabytes of shadow and disables core dumps; the native build runs it\n");
	return;
#endif
	f = fopen("/proc/sys/kernel/core_pattern", "r");
	if (!f || !fgets(pattern, sizeof(pattern), f))
		T_FAIL("cannot read /proc/sys/kernel/core_pattern");
	fclose(f);
	if (pattern[0] == '|' || strchr(pattern, '/')) {
		printf("    skipped: core_pattern is \"%.*s\", not a file in the working directory\n",
		       (int)strcspn(pattern, "\n"), pattern);
		return;
	}
	core_dir = mkdtemp(dir);
	T_ASSERT(core_dir);
	/*
	 * The secret's dump first, then the control's, then the marks: a
	 * dumping child must not inherit a copy of them from this process.
	 */
	core = core_of(1, &len);
	plain = core_of(0, &plain_len);
	write_mark(mark1, 0x1234567);
	write_mark(mark2, 0x7654321);
	T_ASSERT(contains(plain, plain_len, mark1) && contains(plain, plain_len, mark2));
	printf("    core of %zu KiB searched\n", len / 1024);
	T_ASSERT(!contains(core, len, mark1));
	T_ASSERT(!contains(core, len, mark2));
	free(plain);
	free(core);
	rmdir(core_dir);
}

/* ------------------------------------------------------------------ */

static void test_remote_reads(void)
{
	unsigned char mark[MARK_LEN], got[MARK_LEN];
	int to_parent[2], to_child[2];
	struct iovec local = { got, MARK_LEN }, remote;
	uintptr_t addr;
	char path[64];
	ssize_t n;
	pid_t pid;
	int fd, secretmem = !strcmp(backend, "memfd_secret");

	T_CASE(secretmem ? "process_vm_readv and /proc/PID/mem cannot read a secret"
			 : "the fallback: process_vm_readv and /proc/PID/mem can read it (documented)");
	if (!t_is_root())
		T_SKIP("reading another process's memory needs root here");
	write_mark(mark, 0xabcdef);
	T_ASSERT(!pipe(to_parent) && !pipe(to_child));
	fflush(NULL);
	pid = fork();
	T_ASSERT(pid >= 0);
	if (pid == 0) {
		unsigned char *s = secret(MARK_LEN);
		char c;

		/* Read sees end-of-file if the parent dies: no child left behind. */
		close(to_child[1]);
		write_mark(s, 0xabcdef);
		addr = (uintptr_t)s;
		if (write(to_parent[1], &addr, sizeof(addr)) != sizeof(addr))
			_exit(3);
		if (read(to_child[0], &c, 1) != 1)
			_exit(4);
		mmkit_secret_free(s);
		_exit(0);
	}
	T_EQ(read(to_parent[0], &addr, sizeof(addr)), sizeof(addr));
	remote.iov_base = (void *)addr;
	remote.iov_len = MARK_LEN;
	memset(got, 0, sizeof(got));
	n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	printf("    process_vm_readv: %zd (%s)\n", n, n < 0 ? strerror(errno) : "read");
	if (secretmem)
		T_ASSERT(n < 0 && errno == EFAULT && memcmp(got, mark, MARK_LEN));
	else
		T_ASSERT(n == MARK_LEN && !memcmp(got, mark, MARK_LEN));

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	fd = open(path, O_RDONLY);
	T_ASSERT(fd >= 0);
	memset(got, 0, sizeof(got));
	n = pread(fd, got, MARK_LEN, (off_t)addr);
	printf("    /proc/PID/mem: %zd (%s)\n", n, n < 0 ? strerror(errno) : "read");
	if (secretmem)
		T_ASSERT(n < 0 && errno == EIO && memcmp(got, mark, MARK_LEN));
	else
		T_ASSERT(n == MARK_LEN && !memcmp(got, mark, MARK_LEN));
	close(fd);
	T_EQ(write(to_child[1], "x", 1), 1);
	T_CHILD_OK(({ int st; T_EQ(waitpid(pid, &st, 0), pid); st; }));
	close(to_parent[0]);
	close(to_parent[1]);
	close(to_child[0]);
	close(to_child[1]);
}

/* ------------------------------------------------------------------ */

static volatile unsigned char *peek_at;

static void peek(void *arg)
{
	(void)arg;
	signal(SIGSEGV, SIG_DFL);
	signal(SIGBUS, SIG_DFL);
	_exit(peek_at[0] == 0 ? 10 : 11);
}

/* A child made without the atfork handlers, as by a raw clone(). */
static int raw_fork_peek(void)
{
	int status;
	long pid;

	fflush(NULL);
	pid = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
	T_ASSERT(pid >= 0);
	if (pid == 0) {
		int i, sum = 0;

		for (i = 0; i < MARK_LEN; i++)
			sum |= peek_at[i];
		syscall(SYS_exit_group, sum ? 11 : 10);
	}
	T_EQ(waitpid((pid_t)pid, &status, 0), pid);
	return status;
}

static void *fork_old[2];

static void child_uses_secrets(void *arg)
{
	struct mmkit_secret_stats st;
	unsigned char *p[100];
	int i;

	(void)arg;
	T_EQ(mmkit_secret_stats(&st), 0);
	T_EQ(st.allocs_live, 0);
	T_EQ(st.bytes_locked, 0);
	mmkit_secret_free(fork_old[0]);
	mmkit_secret_free(fork_old[1]);
	for (i = 0; i < 100; i++) {
		p[i] = secret(i % 2 ? 32 : 10000);
		memset(p[i], i + 1, 32);
	}
	for (i = 0; i < 100; i++) {
		T_EQ(p[i][31], i + 1);
		mmkit_secret_free(p[i]);
	}
	T_EQ(mmkit_secret_stats(&st), 0);
	T_EQ(st.allocs_live, 0);
}

static void test_fork(void)
{
	unsigned char *pooled = secret(MARK_LEN), *paged = secret(10000);
	int status, i, secretmem = !strcmp(backend, "memfd_secret");
	unsigned char *which[2] = { pooled, paged + 5000 };

	T_CASE(secretmem ? "a fork child cannot read the parent's secrets: SIGSEGV (raw clone: SIGSEGV)"
			 : "a fork child cannot read the parent's secrets: SIGSEGV (raw clone: zeros)");
	signal(SIGSEGV, SIG_DFL);
	for (i = 0; i < 2; i++) {
		write_mark(which[i], 0x5eed);
		peek_at = which[i];
		status = t_in_child(peek, NULL);
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV)
			T_FAIL("fork child: %s %d, expected SIGSEGV", WIFEXITED(status) ? "exit" : "signal",
			       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		status = raw_fork_peek();
		if (secretmem && (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV))
			T_FAIL("raw clone child: %s %d, expected SIGSEGV",
			       WIFEXITED(status) ? "exit" : "signal",
			       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		if (!secretmem && (!WIFEXITED(status) || WEXITSTATUS(status) != 10))
			T_FAIL("raw clone child: %s %d, expected zeros (exit 10)",
			       WIFEXITED(status) ? "exit" : "signal",
			       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	}
	/* The parent still has them. */
	write_mark(pooled, 0x5eed);
	T_ASSERT(pooled[0] || pooled[1]);
	/* In the child, freeing the parent's secrets is allowed, and new ones work. */
	fork_old[0] = pooled;
	fork_old[1] = paged;
	T_CHILD_OK(t_in_child(child_uses_secrets, NULL));
	mmkit_secret_free(pooled);
	mmkit_secret_free(paged);
}

static void suite(void)
{
	test_core_dump();
	test_remote_reads();
	test_fork();
}

int main(void)
{
	t_secret_backends(suite);
	return T_EXIT_PASS;
}
