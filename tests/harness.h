/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * What every test program shares.  A test exits 0 when it passes, 1 when it
 * fails and 77 when the machine lacks what it needs (the reason printed).
 */
#ifndef MMKIT_TEST_HARNESS_H
#define MMKIT_TEST_HARNESS_H

#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#define T_EXIT_PASS	0
#define T_EXIT_FAIL	1
#define T_EXIT_SKIP	77

/* The uid tests drop to when they must run unprivileged. */
#define T_NOBODY	65534

#define T_FAIL(...) do {						\
	fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);		\
	fprintf(stderr, __VA_ARGS__);					\
	fputc('\n', stderr);						\
	exit(T_EXIT_FAIL);						\
} while (0)

#define T_SKIP(...) do {						\
	printf("SKIP: ");						\
	printf(__VA_ARGS__);						\
	putchar('\n');							\
	exit(T_EXIT_SKIP);						\
} while (0)

/*
 * Whether the run requires @what, a word of MMKIT_TEST_REQUIRE (e.g.
 * "mte syscall"): a kernel tier built for a feature sets it, so that a
 * test finding the feature missing fails there instead of skipping.
 */
static inline int t_required(const char *what)
{
	const char *list = getenv("MMKIT_TEST_REQUIRE"), *p;
	size_t n = strlen(what);

	for (p = list; p && (p = strstr(p, what)); p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
			return 1;
	return 0;
}

/* T_SKIP when @what is missing, but a failure where the run requires it. */
#define T_MISSING(what, ...) do {					\
	if (t_required(what)) {						\
		fprintf(stderr, "%s:%d: FAIL: MMKIT_TEST_REQUIRE has %s: ",	\
			__FILE__, __LINE__, what);			\
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
		exit(T_EXIT_FAIL);					\
	}								\
	T_SKIP(__VA_ARGS__);						\
} while (0)

#define T_ASSERT(cond) do {						\
	if (!(cond))							\
		T_FAIL("%s", #cond);					\
} while (0)

/* Compares two integer expressions and prints both values on failure. */
#define T_EQ(a, b) do {							\
	long long a_ = (long long)(a), b_ = (long long)(b);		\
	if (a_ != b_)							\
		T_FAIL("%s == %s: %lld != %lld", #a, #b, a_, b_);	\
} while (0)

/* Every one of the @len bytes at @p is @v. */
static inline void t_expect_bytes(const unsigned char *p, size_t len, unsigned char v)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (p[i] != v)
			T_FAIL("byte %zu of %zu is %#x, expected %#x", i, len, p[i], v);
}

/* A named check inside a test program, printed as it passes. */
#define T_CASE(name)	printf("  %s\n", name)

/*
 * Runs fn(arg) in a forked child and returns its wait status, so a test can
 * expect a crash, an abort or a different identity without dying itself.
 */
static inline int t_in_child(void (*fn)(void *), void *arg)
{
	int status;
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0)
		T_FAIL("fork: %s", strerror(errno));
	if (pid == 0) {
		fn(arg);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid)
		T_FAIL("waitpid: %s", strerror(errno));
	return status;
}

static inline int t_is_root(void)
{
	return geteuid() == 0;
}

/*
 * Becomes nobody (uid and gid 65534, no supplementary groups), which drops
 * every capability.  Only for use in a child: it cannot be undone.
 */
static inline void t_become_nobody(void)
{
	if (setgroups(0, NULL) || setresgid(T_NOBODY, T_NOBODY, T_NOBODY) ||
	    setresuid(T_NOBODY, T_NOBODY, T_NOBODY))
		T_FAIL("cannot drop to uid %d: %s", T_NOBODY, strerror(errno));
}

/* Pipe handshakes between a test and its child: one byte each way. */
static inline void t_wait_byte(int fd)
{
	char c;

	if (read(fd, &c, 1) != 1)
		T_FAIL("read: %s", errno ? strerror(errno) : "end of file");
}

static inline void t_send_byte(int fd)
{
	if (write(fd, "x", 1) != 1)
		T_FAIL("write: %s", strerror(errno));
}

/* Expects a child's wait status to be a clean exit 0. */
#define T_CHILD_OK(status) do {						\
	int s_ = (status);						\
	if (!WIFEXITED(s_) || WEXITSTATUS(s_) != 0)			\
		T_FAIL("child: %s %d", WIFEXITED(s_) ? "exit" : "signal", \
		       WIFEXITED(s_) ? WEXITSTATUS(s_) : WTERMSIG(s_));	\
} while (0)

/* A forked child paused until t_reap() lets it exit. */
struct t_child {
	pid_t pid;
	int go;		/* a byte written here lets the child exit */
};

/*
 * Forks a child that runs fn(arg), tells the parent so and waits: what it
 * set up stays live for the parent to inspect until t_reap().
 */
static inline struct t_child t_spawn_paused(void (*fn)(void *), void *arg)
{
	int to_child[2], from_child[2];
	struct t_child ch;

	T_ASSERT(!pipe(to_child) && !pipe(from_child));
	fflush(NULL);
	ch.pid = fork();
	T_ASSERT(ch.pid >= 0);
	if (ch.pid == 0) {
		close(to_child[1]);
		close(from_child[0]);
		fn(arg);
		t_send_byte(from_child[1]);
		t_wait_byte(to_child[0]);
		_exit(0);
	}
	close(to_child[0]);
	close(from_child[1]);
	t_wait_byte(from_child[0]);
	close(from_child[0]);
	ch.go = to_child[1];
	return ch;
}

/* Lets a t_spawn_paused() child exit and expects a clean exit 0. */
#define t_reap(ch) do {							\
	struct t_child c_ = (ch);					\
	int st_;							\
	t_send_byte(c_.go);						\
	close(c_.go);							\
	T_EQ(waitpid(c_.pid, &st_, 0), c_.pid);				\
	T_CHILD_OK(st_);						\
} while (0)

/* Descriptors this process has open, for leak checks. */
static inline int t_count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (!d)
		T_FAIL("opendir /proc/self/fd: %s", strerror(errno));
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n - 1;	/* the directory's own */
}

/*
 * The `mmkit` command beside the tests directory this program was built
 * into (BUILD/tests/PROG: BUILD/mmkit), into @path of @len bytes; skips
 * the test when it was not built.
 */
static inline void t_mmkit_path(char *path, size_t len, const char *argv0)
{
	ssize_t n = readlink("/proc/self/exe", path, len - 16);
	char *slash;

	T_ASSERT(n > 0);
	path[n] = '\0';
	slash = strrchr(path, '/');
	T_ASSERT(slash);
	*slash = '\0';
	slash = strrchr(path, '/');
	T_ASSERT(slash);
	strcpy(slash, "/mmkit");
	if (access(path, X_OK))
		T_SKIP("%s not built (%s)", path, argv0);
}

/* CLOCK_MONOTONIC in seconds, for timing a case. */
static inline double t_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Seconds of CPU this process has used, in user and kernel mode: what a
 * test bounds the work of a call by.  Unlike t_now()'s, it does not grow
 * with what else the machine runs (make check runs its tests side by
 * side, on machines that build kernels beside them).
 */
static inline double t_cpu(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#endif /* MMKIT_TEST_HARNESS_H */
