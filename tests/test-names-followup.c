// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit run --names: how the supervisor follows mremap() of named memory
 * (cli/names-supervise.c), with programs that make it hard.
 *  - stall: a thread computes right after a failed mremap() (its follow-up
 *    cannot end: /proc/TID/syscall says "running"); another process's
 *    naming call is answered meanwhile, the name still where the kernel
 *    keeps it.
 *  - efault: a failed mremap(MREMAP_MAYMOVE) (the range spans two VMAs:
 *    EFAULT) keeps its names, as the kernel's.
 *  - timer: a named VMA moved while a 1 ms SA_RESTART timer ticks (and
 *    20,000 VMAs make each look at the maps slow): the name follows.
 *  - daemon: a double-forked daemon that outlives mmkit (which exits with
 *    its direct child's status at once) names memory and moves it with
 *    mremap(): 0, and the name lands; once it has exited, the supervisor
 *    left for it exits too (this checker is their subreaper, and reaps
 *    every one, within 30 s).
 *  - cap: a thread makes 8 failed mremap() calls of a named VMA, then
 *    computes (8 follow-ups that cannot end); another thread's failed
 *    mremap() of another named VMA is a 9th: past the cap of 8 pending
 *    follow-ups per process, its names are dropped at once (kept, as the
 *    kernel keeps them, when it is followed: the thread is past the call
 *    then); the 8 keep theirs.  Then the 8 are given up after 5 s (the
 *    thread still computing): their names are dropped, never left on
 *    memory the call may have changed.  A cap other than 8, or no
 *    give-up, fails it.
 *  - faked: under a seccomp filter that answers 0 for prctl(PR_SET_VMA)
 *    without naming anything, mmkit run --names is no nested run (there
 *    is no outer supervisor): it fails with a clear error instead of
 *    running the program with its names lost.
 * Where the kernel names VMAs there is no supervisor: skipped.
 */
#include <errno.h>
#include <linux/filter.h>
#include <pthread.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "mmkit.h"
#include "names-check.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif

static size_t page;

static int name(void *addr, size_t len, const char *n)
{
	return prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME, addr, len, n) ? -errno : 0;
}

static char *map(size_t pages, int flags)
{
	char *p = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, flags | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(T_EXIT_FAIL);
	}
	return p;
}

/* Reads stdin until it is closed: the checker is done. */
static void wait_stdin(void)
{
	char c;

	while (read(0, &c, 1) > 0)
		;
}

/*
 * The process (A) moves a named VMA spanning two (EFAULT: the call fails),
 * then computes without a system call until its child (B) says so; B
 * names memory of its own once A's call is done, says where A's VMA is,
 * and waits for the checker.  A supervisor that waited for A's follow-up
 * to end would answer B only once it gave up, the name dropped.  A's
 * computing is bounded (60 s) by the vDSO's clock.
 */
static int stall_target(void)
{
	volatile int *shared = (volatile int *)map(1, MAP_SHARED);
	char *v = map(2, MAP_PRIVATE), *c, ch;
	double t0;
	int status;
	pid_t b;

	if (name(v, 2 * page, "stays"))
		return T_EXIT_FAIL;
	mprotect(v + page, page, PROT_READ);
	b = fork();
	if (b < 0)
		return T_EXIT_FAIL;
	if (!b) {
		for (t0 = seconds(); !shared[0] && seconds() - t0 < 60;)
			usleep(1000);
		c = map(1, MAP_PRIVATE);
		printf("named %d %lx %d\n", (int)getppid(), (unsigned long)(uintptr_t)v,
		       name(c, page, "b"));
		fflush(stdout);
		if (read(0, &ch, 1) != 1)
			_exit(T_EXIT_FAIL);
		shared[1] = 1;
		wait_stdin();
		_exit(0);
	}
	if (syscall(SYS_mremap, v, 2 * page, 4 * page, MREMAP_MAYMOVE) != -1 || errno != EFAULT)
		shared[2] = 1;
	shared[0] = 1;
	for (t0 = seconds(); !shared[1] && seconds() - t0 < 60;)
		;
	if (waitpid(b, &status, 0) != b || status || shared[2])
		return T_EXIT_FAIL;
	return 0;
}

/* A failed mremap(MREMAP_MAYMOVE): EFAULT, the old range spanning two VMAs. */
static int efault_target(void)
{
	char *p = map(2, MAP_PRIVATE);

	if (name(p, 2 * page, "victim"))
		return T_EXIT_FAIL;
	mprotect(p + page, page, PROT_READ);
	if (syscall(SYS_mremap, p, 2 * page, 4 * page, MREMAP_MAYMOVE) != -1 || errno != EFAULT)
		return T_EXIT_FAIL;
	printf("ready %d %lx\n", (int)getpid(), (unsigned long)(uintptr_t)p);
	fflush(stdout);
	wait_stdin();
	return 0;
}

/*
 * Ends at once; its child makes a daemon (a session of its own, its
 * parent gone) that waits for the checker's byte (mmkit gone by then),
 * names a page, moves it with mremap(), says what it got, and waits for
 * stdin to close.
 */
static int daemon_target(void)
{
	char *p, *q, c;
	int named;

	if (fork())
		return 0;
	setsid();
	if (fork())
		_exit(0);
	if (read(0, &c, 1) != 1)
		_exit(T_EXIT_FAIL);
	p = map(1, MAP_PRIVATE);
	named = name(p, page, "late");
	q = mremap(p, page, 16 * page, MREMAP_MAYMOVE);
	printf("daemon %d %d %lx %s\n", (int)getpid(), named, (unsigned long)(uintptr_t)q,
	       q == MAP_FAILED ? strerror(errno) : "ok");
	fflush(stdout);
	wait_stdin();
	_exit(0);
}

/* The follow-ups of one process the supervisor keeps at most (cli/names-remap.c). */
#define PENDING_MAX	8

/* A named VMA spanning two: mremap(MREMAP_MAYMOVE) of it fails with EFAULT. */
static char *split_named(const char *n)
{
	char *v = map(2, MAP_PRIVATE);

	if (name(v, 2 * page, n))
		exit(T_EXIT_FAIL);
	mprotect(v + page, page, PROT_READ);
	return v;
}

/* All six arguments given: a call made again is the same call to /proc/TID/syscall. */
static int failed_mremap(char *v)
{
	return syscall(SYS_mremap, v, 2 * page, 4 * page, MREMAP_MAYMOVE, 0, 0) == -1 &&
	       errno == EFAULT;
}

static struct {
	char *v;
	int made, release, bad;
} cap_shared;

/*
 * PENDING_MAX failed mremap() calls of one VMA, the same each time (its
 * follow-ups do not end: the thread is in that very call at each next
 * look), then computing without a system call until released: the
 * follow-ups cannot end but by giving up.  Bounded (60 s) by the vDSO's
 * clock.
 */
static void *cap_computer(void *arg)
{
	double t0;
	int i;

	(void)arg;
	for (i = 0; i < PENDING_MAX; i++)
		if (!failed_mremap(cap_shared.v))
			__atomic_store_n(&cap_shared.bad, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&cap_shared.made, 1, __ATOMIC_RELEASE);
	for (t0 = seconds(); !__atomic_load_n(&cap_shared.release, __ATOMIC_ACQUIRE) &&
	     seconds() - t0 < 60;)
		;
	return NULL;
}

/*
 * PENDING_MAX follow-ups in a computing thread, then a failed mremap() of
 * another named VMA in this one, which is past its call at once; says
 * where both VMAs are, and releases the computing thread at the
 * checker's byte.
 */
static int cap_target(void)
{
	char *w, c;
	pthread_t t;

	cap_shared.v = split_named("followed");
	w = split_named("capped");
	if (pthread_create(&t, NULL, cap_computer, NULL))
		return T_EXIT_FAIL;
	while (!__atomic_load_n(&cap_shared.made, __ATOMIC_ACQUIRE))
		usleep(1000);
	if (!failed_mremap(w) || cap_shared.bad)
		return T_EXIT_FAIL;
	printf("ready %d %lx %lx\n", (int)getpid(), (unsigned long)(uintptr_t)cap_shared.v,
	       (unsigned long)(uintptr_t)w);
	fflush(stdout);
	if (read(0, &c, 1) != 1)
		return T_EXIT_FAIL;
	__atomic_store_n(&cap_shared.release, 1, __ATOMIC_RELEASE);
	pthread_join(t, NULL);
	wait_stdin();
	return 0;
}

static void on_alarm(int sig)
{
	(void)sig;
}

/* A named VMA moved (no room to grow in place) while a 1 ms timer ticks, among 20,000 VMAs. */
static int timer_target(void)
{
	size_t i, n = 20000;
	char *many = mmap(NULL, n * page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), *m, *m2;
	struct itimerval it = { { 0, 1000 }, { 0, 1000 } }, off = { { 0, 0 }, { 0, 0 } };
	struct sigaction sa;

	if (many == MAP_FAILED)
		return T_EXIT_FAIL;
	for (i = 0; i < n; i += 2)
		mprotect(many + i * page, page, PROT_READ | PROT_WRITE);
	m = map(3, MAP_PRIVATE);
	if (name(m, 2 * page, "moved"))
		return T_EXIT_FAIL;
	mprotect(m + 2 * page, page, PROT_NONE);
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	m2 = (char *)syscall(SYS_mremap, m, 2 * page, 4 * page, MREMAP_MAYMOVE);
	setitimer(ITIMER_REAL, &off, NULL);
	if (m2 == MAP_FAILED)
		return T_EXIT_FAIL;
	printf("ready %d %lx\n", (int)getpid(), (unsigned long)(uintptr_t)m2);
	fflush(stdout);
	wait_stdin();
	return 0;
}

/* Runs mmkit run --names on this program's @role with a pipe to and from it. */
static pid_t run_role(const char *mmkit, const char *self, const char *role, int *in, FILE **f)
{
	const char *argv[] = { mmkit, "run", "--names", "--no-glibc-names", self, role, NULL };

	return spawn(argv, in, f);
}

/* Closes the program's stdin and expects mmkit to exit 0. */
static void finish(pid_t run, int in, FILE *f)
{
	int status;

	close(in);
	fclose(f);
	T_ASSERT(waitpid(run, &status, 0) == run);
	T_EQ(status, 0);
}

static void stall(const char *mmkit, const char *self)
{
	unsigned long v;
	int in, a, ret;
	char line[128];
	FILE *f;
	pid_t run = run_role(mmkit, self, "stall", &in, &f);

	if (!fgets(line, sizeof(line), f) || sscanf(line, "named %d %lx %d", &a, &v, &ret) != 3)
		T_FAIL("the stall target did not start under mmkit run --names");
	T_EQ(ret, 0);
	expect_name(a, v, "stays",
		    "a failed mremap's VMA, its thread computing, when another process got its answer");
	T_ASSERT(write(in, "x", 1) == 1);
	finish(run, in, f);
}

/* The supervisor's give-up (cli/names-remap.c's GIVE_UP_NS), in seconds. */
#define GIVE_UP_S	5

/*
 * The cap of PENDING_MAX follow-ups per process, then the give-up: the
 * 8 follow-ups' names dropped while their thread still computes.  The
 * give-up is GIVE_UP_S after the calls: waited for 30 s at most (a bound
 * for a loaded machine, not a timing), and not before GIVE_UP_S after
 * mmkit started (the calls came after it: load only makes it later).
 */
static void cap_and_give_up(const char *mmkit, const char *self)
{
	double start = seconds(), t0, seen;
	struct lookup q;
	unsigned long v, w;
	int in, pid, ret;
	char line[128];
	FILE *f;
	pid_t run = run_role(mmkit, self, "cap", &in, &f);

	if (!fgets(line, sizeof(line), f) || sscanf(line, "ready %d %lx %lx", &pid, &v, &w) != 3)
		T_FAIL("the cap target did not start under mmkit run --names");
	expect_name(pid, v, "followed", "the VMA of 8 pending follow-ups (the cap) keeps its name");
	expect_name(pid, v + page, "followed", "the VMA of 8 pending follow-ups (the cap) keeps its name");
	expect_name(pid, w, NULL, "a 9th follow-up of a process, past the cap, drops its names at once");
	expect_name(pid, w + page, NULL,
		    "a 9th follow-up of a process, past the cap, drops its names at once");
	t0 = seconds();
	do {
		if (seconds() - t0 > 30)
			T_FAIL("pending follow-ups not given up within 30 s (pid %d, %#lx: '%s')", pid, v,
			       q.name);
		usleep(50000);
		memset(&q, 0, sizeof(q));
		q.addr = v;
		ret = mmkit_regions(pid, lookup_fn, &q);
		seen = seconds();
		T_EQ(ret, 0);
		T_ASSERT(q.found);
	} while (q.name[0]);
	if (seen - start < GIVE_UP_S)
		T_FAIL("pending follow-ups given up %.1f s after mmkit started, before the %d s give-up",
		       seen - start, GIVE_UP_S);
	expect_name(pid, v + page, NULL, "a follow-up given up drops its names");
	printf("ok: the cap and the give-up, after %.1f s\n", seconds() - t0);
	T_ASSERT(write(in, "x", 1) == 1);
	finish(run, in, f);
}

/* Reaps every child of this (subreaper) process, 30 s at most; 0 when there is none left. */
static int reap_all(void)
{
	double t0 = seconds();
	pid_t got;

	while ((got = waitpid(-1, NULL, WNOHANG)) >= 0 && seconds() - t0 < 30)
		if (!got)
			usleep(10000);
	return got < 0 && errno == ECHILD ? 0 : -1;
}

static void daemon_outlives(const char *mmkit, const char *self)
{
	unsigned long q;
	int in, pid, named, status;
	char line[256], what[64];
	double t0 = seconds();
	FILE *f;
	pid_t run, got;

	T_ASSERT(!prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0));
	run = run_role(mmkit, self, "daemon", &in, &f);
	while ((got = waitpid(run, &status, WNOHANG)) == 0 && seconds() - t0 < 30)
		usleep(10000);
	if (got != run)
		T_FAIL("mmkit run --names did not exit while a process it left runs");
	T_EQ(status, 0);
	T_ASSERT(write(in, "x", 1) == 1);
	if (!fgets(line, sizeof(line), f) ||
	    sscanf(line, "daemon %d %d %lx %63s", &pid, &named, &q, what) != 4)
		T_FAIL("the daemon left by mmkit run --names said nothing");
	T_EQ(named, 0);
	if (strcmp(what, "ok"))
		T_FAIL("the daemon's mremap(MREMAP_MAYMOVE) after mmkit exited: %s", line);
	expect_name(pid, q, "late", "named and moved by a process outliving mmkit");
	close(in);
	fclose(f);
	if (reap_all())
		T_FAIL("a process left by mmkit run --names (its supervisor?) did not exit once the daemon had");
}

/* mmkit run --names under a filter answering 0 for every prctl(PR_SET_VMA): a clear error. */
static void faked(const char *mmkit, const char *self)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_prctl, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_VMA, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };
	const char *argv[] = { mmkit, "run", "--names", "--no-glibc-names", self, "efault", NULL };
	char err[1024] = "";
	int e[2], status;
	size_t n;
	ssize_t got;
	pid_t run;

	T_ASSERT(!pipe(e));
	run = fork();
	T_ASSERT(run >= 0);
	if (!run) {
		close(e[0]);
		dup2(e[1], 2);
		close(0);
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
		    syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog))
			_exit(T_EXIT_SKIP);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(e[1]);
	for (n = 0; n < sizeof(err) - 1 && (got = read(e[0], err + n, sizeof(err) - 1 - n)) > 0;)
		n += (size_t)got;
	err[n] = '\0';
	close(e[0]);
	T_ASSERT(waitpid(run, &status, 0) == run);
	if (WIFEXITED(status) && WEXITSTATUS(status) == T_EXIT_SKIP)
		T_SKIP("cannot install a seccomp filter here");
	if (!WIFEXITED(status) || !WEXITSTATUS(status) || !strstr(err, "names nothing"))
		T_FAIL("mmkit run --names under a filter faking prctl(PR_SET_VMA): status %#x, '%s'",
		       status, err);
}

static void one(const char *mmkit, const char *self, const char *role, const char *want,
		const char *what)
{
	unsigned long at;
	int in, pid;
	char line[128];
	FILE *f;
	pid_t run = run_role(mmkit, self, role, &in, &f);

	if (!fgets(line, sizeof(line), f) || sscanf(line, "ready %d %lx", &pid, &at) != 2)
		T_FAIL("the %s target did not start under mmkit run --names", role);
	expect_name(pid, at, want, what);
	if (!strcmp(role, "efault"))
		expect_name(pid, at + page, want, what);
	finish(run, in, f);
}

int main(int argc, char **argv)
{
	char self[4096], mmkit[4096 + 16], *slash;
	ssize_t n;
	void *p;

	page = (size_t)sysconf(_SC_PAGESIZE);
	if (argc > 1 && !strcmp(argv[1], "stall"))
		return stall_target();
	if (argc > 1 && !strcmp(argv[1], "efault"))
		return efault_target();
	if (argc > 1 && !strcmp(argv[1], "timer"))
		return timer_target();
	if (argc > 1 && !strcmp(argv[1], "daemon"))
		return daemon_target();
	if (argc > 1 && !strcmp(argv[1], "cap"))
		return cap_target();
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	T_ASSERT(n > 0);
	self[n] = '\0';
	slash = strrchr(self, '/');
	*slash = '\0';
	snprintf(mmkit, sizeof(mmkit), "%s/../mmkit", self);
	*slash = '/';
	if (access(mmkit, X_OK))
		T_SKIP("no %s to run the targets with", mmkit);
	p = map(1, MAP_PRIVATE);
	if (!name(p, page, "probe"))
		T_SKIP("the kernel names VMAs itself: mmkit run --names does not supervise");
	munmap(p, page);
	stall(mmkit, self);
	one(mmkit, self, "efault", "victim", "a VMA whose mremap(MREMAP_MAYMOVE) failed");
	one(mmkit, self, "timer", "moved", "moved while a timer ticks");
	cap_and_give_up(mmkit, self);
	daemon_outlives(mmkit, self);
	faked(mmkit, self);
	printf("PASS: names follow mremap() under mmkit run --names, never blocking the supervisor\n");
	return T_EXIT_PASS;
}
