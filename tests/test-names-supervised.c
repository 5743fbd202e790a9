// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit run --names against the kernel's own answers.  A target (this
 * program, "target") names its memory with raw prctl(PR_SET_VMA,
 * PR_SET_VMA_ANON_NAME) calls, expecting what a kernel with
 * CONFIG_ANON_VMA_NAME answers (0, EINVAL for bad names and an unaligned
 * start, ENOMEM for a hole after naming what is mapped, EBADF for a file,
 * EFAULT for a name it cannot read), from 8 threads at once, in a child it
 * forks (which inherits its names as they were at fork) and in one that
 * executes a program (which drops them).  The checker reads the names of each process with
 * mmkit_regions(), from outside, page by page.
 *
 * Where the kernel names VMAs, the target runs twice, alone and under
 * mmkit run --names, with the same answers and names both times, and no
 * registry in the supervised target: mmkit stays out of the way (the
 * custom kernel tiers).  Where it cannot, the target runs under
 * mmkit run --names and must see the kernel's answers all the same.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "harness.h"
#include "mmkit.h"
#include "names-registry.h"
#include "names-check.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif

#define THREADS		8
#define THREAD_NAMES	300

static size_t page;

static int name(void *addr, size_t len, const char *n)
{
	return syscall(SYS_prctl, PR_SET_VMA, PR_SET_VMA_ANON_NAME, addr, len, n) ? -errno : 0;
}

static char *map(size_t pages)
{
	char *p = mmap(NULL, pages * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);

	if (p == MAP_FAILED) {
		perror("mmap");
		exit(T_EXIT_FAIL);
	}
	return p;
}

static int failed;


#define EXPECT(call, want) do {							\
	int got_ = (call);							\
	if (got_ != (want)) {							\
		fprintf(stderr, "FAIL: %s = %d (%s), expected %d\n", #call,	\
			got_, strerror(-got_), (want));				\
		failed = 1;							\
	}									\
} while (0)

static void *thread_fn(void *arg)
{
	char *p = arg, n[32];
	int i;

	for (i = 0; i < THREAD_NAMES; i++) {
		snprintf(n, sizeof(n), "t-%d", i);
		EXPECT(name(p, page, n), 0);
	}
	EXPECT(name(p, page, "thread-done"), 0);
	return NULL;
}

/*
 * After exec: names one page and says where; its names from before exec
 * are gone.  A memfd of its own sits where its parent's registry was
 * (@reg, closed at exec): the supervisor must leave it alone.
 */
static int exec_target(int fd, int reg)
{
	char *e = map(1), line[64], buf[8] = "";
	struct stat before, after;
	int mine = memfd_create("not-a-registry", 0);

	if (reg < 0)
		reg = mine;
	if (mine < 0 || dup2(mine, reg) != reg || write(reg, "precious", 8) != 8 ||
	    fstat(reg, &before))
		return T_EXIT_FAIL;
	EXPECT(name(e, page, "after-exec"), 0);
	if (fstat(reg, &after) || after.st_ino != before.st_ino || pread(reg, buf, 8, 0) != 8 ||
	    memcmp(buf, "precious", 8))
		T_FAIL("the program's own memfd at %d was replaced under it", reg);
	snprintf(line, sizeof(line), "%lx\n", (unsigned long)(uintptr_t)e);
	if (write(fd, line, strlen(line)) < 0 || failed)
		return T_EXIT_FAIL;
	pause();
	return 0;
}

/* The glibc target's threads: where each one's stack and blocks are. */
struct glibc_thread {
	pthread_t t;
	pid_t tid;
	char *stack;
	void *arena_block;
	void *big_block;
	int ready[2];		/* the thread says it is set up */
	int go[2];		/* the thread is told to end */
};

static void *glibc_thread_fn(void *arg)
{
	struct glibc_thread *g = arg;
	char c, here = 0;

	g->tid = (pid_t)syscall(SYS_gettid);
	g->stack = &here;
	g->arena_block = malloc(4096);
	g->big_block = malloc(1 << 20);
	if (write(g->ready[1], "r", 1) != 1 || read(g->go[0], &c, 1) < 0)
		return NULL;
	free(g->arena_block);
	free(g->big_block);
	return NULL;
}

/*
 * What glibc 2.39 names, from a program nobody changed: its threads'
 * stacks, their blocks in non-main arenas, and large (mmapped) blocks.
 * Says where each is, then waits for stdin to close.
 */
static int glibc_target(void)
{
	struct glibc_thread g[4];
	void *big = malloc(1 << 20);
	char c;
	int i;

	printf("ready %d %lx\n", (int)getpid(), (unsigned long)(uintptr_t)big);
	for (i = 0; i < 4; i++) {
		if (pipe(g[i].ready) || pipe(g[i].go) ||
		    pthread_create(&g[i].t, NULL, glibc_thread_fn, &g[i]) ||
		    read(g[i].ready[0], &c, 1) != 1)
			return T_EXIT_FAIL;
		printf("thread %d %lx %lx %lx\n", (int)g[i].tid, (unsigned long)(uintptr_t)g[i].stack,
		       (unsigned long)(uintptr_t)g[i].arena_block,
		       (unsigned long)(uintptr_t)g[i].big_block);
	}
	printf("end\n");
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	for (i = 0; i < 4; i++) {
		if (write(g[i].go[1], "x", 1) != 1)
			return T_EXIT_FAIL;
		pthread_join(g[i].t, NULL);
	}
	free(big);
	return 0;
}

/* Names a page, waits for a byte on stdin, names it again: says what that got. */
static int orphan_target(void)
{
	char *p = map(1), c;

	EXPECT(name(p, page, "orphan"), 0);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (read(0, &c, 1) != 1)
		return T_EXIT_FAIL;
	printf("%d\n", name(p, page, "orphan-again"));
	return 0;
}

static char *remap(void *old, size_t old_len, size_t new_len, int flags, void *to)
{
	char *p = (char *)syscall(SYS_mremap, old, old_len, new_len, flags, to);

	if (p == MAP_FAILED) {
		perror("mremap");
		exit(T_EXIT_FAIL);
	}
	return p;
}

/* Maps @pages anonymous pages at @at again (its old mapping gone): a stale name must not show. */
static void map_again(char *at, size_t pages)
{
	if (mmap(at, pages * page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE,
		 -1, 0) != at) {
		perror("mmap again");
		exit(T_EXIT_FAIL);
	}
}

/*
 * mremap() with raw system calls: grown in place, shrunk, moved
 * (MREMAP_MAYMOVE), to a fixed address, with MREMAP_DONTUNMAP; where the
 * old memory went, anonymous memory is mapped again.  Then glibc's
 * realloc() of a large block (mremap_chunk()).  Says where, then waits.
 */
static int mremap_target(void)
{
	char *g = map(8), *s = map(4), *m = map(3), *f = map(2), *dst = map(2), *d = map(2);
	char *v = map(3), *plain = map(2), *over = map(2), *m2, *d2, *w, *x, *big2, c;
	char *big = malloc(1 << 20);

	munmap(g + 4 * page, 4 * page);
	EXPECT(name(g, 4 * page, "grown"), 0);
	remap(g, 4 * page, 6 * page, 0, NULL);
	EXPECT(name(s, 4 * page, "shrunk"), 0);
	remap(s, 4 * page, 2 * page, 0, NULL);
	map_again(s + 2 * page, 2);
	/* A PROT_NONE page after it: it cannot grow in place, it moves. */
	EXPECT(name(m, 2 * page, "moved"), 0);
	mprotect(m + 2 * page, page, PROT_NONE);
	m2 = remap(m, 2 * page, 4 * page, MREMAP_MAYMOVE, NULL);
	map_again(m, 2);
	EXPECT(name(f, 2 * page, "fixed"), 0);
	EXPECT(name(dst, 2 * page, "replaced"), 0);
	remap(f, 2 * page, 2 * page, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
	map_again(f, 2);
	/* Memory of no name moved over named memory: no name there after. */
	EXPECT(name(over, 2 * page, "overwritten"), 0);
	remap(plain, 2 * page, 2 * page, MREMAP_MAYMOVE | MREMAP_FIXED, over);
	EXPECT(name(d, 2 * page, "dontunmap"), 0);
	d2 = remap(d, 2 * page, 2 * page, MREMAP_MAYMOVE | MREMAP_DONTUNMAP, NULL);
	/*
	 * A failed call (no room to grow in place), then memory of the size of
	 * the growth and of the grown VMA mapped: neither is the VMA, neither
	 * gets its name.
	 */
	EXPECT(name(v, 2 * page, "stays"), 0);
	mprotect(v + 2 * page, page, PROT_NONE);
	if (syscall(SYS_mremap, v, 2 * page, 4 * page, 0) != -1 || errno != ENOMEM)
		return T_EXIT_FAIL;
	w = map(2);
	x = map(4);
	big2 = realloc(big, 8 << 20);
	if (failed || !big2)
		return T_EXIT_FAIL;
	printf("ready %d %lx %lx %lx %lx %lx %lx %lx %lx %lx %lx %lx %lx %lx\n", (int)getpid(),
	       (unsigned long)(uintptr_t)over, (unsigned long)(uintptr_t)v, (unsigned long)(uintptr_t)w,
	       (unsigned long)(uintptr_t)x,
	       (unsigned long)(uintptr_t)g, (unsigned long)(uintptr_t)s,
	       (unsigned long)(uintptr_t)m, (unsigned long)(uintptr_t)m2,
	       (unsigned long)(uintptr_t)f, (unsigned long)(uintptr_t)dst,
	       (unsigned long)(uintptr_t)d, (unsigned long)(uintptr_t)d2,
	       (unsigned long)(uintptr_t)big2);
	fflush(stdout);
	while (read(0, &c, 1) > 0)
		;
	free(big2);
	return 0;
}

/* The target: the calls, then "ready" and the addresses, then waits for stdin to close. */
static int target(const char *self)
{
	char *a = map(4), *l = map(1), *h = map(3), *pp = map(3), *t = map(THREADS), *c = map(2);
	char *mf, long79[80], long80[81], long200[201], xbuf[64];
	int go[2], back[2], ex[2], i, tmp;
	pthread_t th[THREADS];
	pid_t child, execd, self_pid = getpid();
	char *f;

	memset(long79, 'x', 79);
	long79[79] = '\0';
	memset(long80, 'y', 80);
	long80[80] = '\0';
	memset(long200, 'z', 200);
	long200[200] = '\0';

	EXPECT(name(a, 4 * page, "mmkit-a"), 0);
	EXPECT(name(a + page, page, NULL), 0);
	EXPECT(name(a + 2 * page, page, "mmkit-b"), 0);
	EXPECT(name(l, page, long79), 0);
	EXPECT(name(l, page, long80), -EINVAL);
	EXPECT(name(l, page, long200), -EINVAL);
	EXPECT(name(l, page, "esc\x1b[31m"), -EINVAL);
	EXPECT(name(l, page, "a$b"), -EINVAL);
	EXPECT(name(l, page, "a`b"), -EINVAL);
	EXPECT(name(l, page, "tab\t"), -EINVAL);
	EXPECT(name(l + 1, page, "unaligned"), -EINVAL);
	EXPECT(name(l, 0, "empty"), 0);
	EXPECT(name(l, page, (const char *)8), -EFAULT);
	munmap(h + page, page);
	EXPECT(name(h, 3 * page, "holey"), -ENOMEM);
	EXPECT(name(h + page, page, "hole"), -ENOMEM);
	EXPECT(name(pp, 3 * page, "part"), 0);
	munmap(pp + page, page);
	/*
	 * A file with a name: since 6.2 the kernel names a mapping of a tmpfs
	 * file unlinked when it was mapped (a memfd, O_TMPFILE on a tmpfs
	 * /tmp) as anonymous shared memory.
	 */
	tmp = open(self, O_RDONLY);
	if (tmp < 0)
		return T_EXIT_FAIL;
	f = mmap(NULL, page, PROT_READ, MAP_PRIVATE, tmp, 0);
	if (f == MAP_FAILED)
		return T_EXIT_FAIL;
	EXPECT(name(f, page, "file"), -EBADF);
	/* A memfd: anonymous shared memory to the kernel since 6.2, which names it. */
	tmp = memfd_create("test-names", MFD_CLOEXEC);
	if (tmp < 0 || ftruncate(tmp, (off_t)page))
		return T_EXIT_FAIL;
	mf = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, tmp, 0);
	if (mf == MAP_FAILED)
		return T_EXIT_FAIL;
	EXPECT(name(mf, page, "memfd"), kernel_names_memfd() ? 0 : -EBADF);

	for (i = 0; i < THREADS; i++)
		if (pthread_create(&th[i], NULL, thread_fn, t + i * page))
			return T_EXIT_FAIL;
	for (i = 0; i < THREADS; i++)
		pthread_join(th[i], NULL);

	/*
	 * fork: the child inherits a's names; its first naming call (c[0])
	 * gives it a registry of its own, so the parent's name for c[1]
	 * after that must not show in the child.
	 */
	if (pipe(go) || pipe(back) || pipe(ex))
		return T_EXIT_FAIL;
	child = fork();
	if (!child) {
		/* Not left behind holding the checker's pipes if the target fails. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != self_pid)
			_exit(1);
		if (read(go[0], xbuf, 1) != 1)
			_exit(1);
		EXPECT(name(c, page, "child"), 0);
		if (write(back[1], failed ? "f" : "k", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	if (child < 0 || write(go[1], "g", 1) != 1 || read(back[0], xbuf, 1) != 1 ||
	    xbuf[0] != 'k')
		return T_EXIT_FAIL;
	EXPECT(name(c + page, page, "parent-after"), 0);

	/* exec: a child that named a page before executes; only its later name shows. */
	execd = fork();
	if (!execd) {
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() != self_pid)
			_exit(1);
		EXPECT(name(c, page, "before-exec"), 0);
		snprintf(xbuf, sizeof(xbuf), "%d", ex[1]);
		snprintf(xbuf + 32, 32, "%d", registry_fd());
		execl(self, self, "exec-target", xbuf, xbuf + 32, (char *)NULL);
		_exit(1);
	}
	close(ex[1]);
	i = (int)read(ex[0], xbuf, sizeof(xbuf) - 1);
	if (execd < 0 || i <= 0)
		return T_EXIT_FAIL;
	xbuf[i] = '\0';
	if (failed)
		return T_EXIT_FAIL;
	printf("ready %d %d %d %lx %lx %lx %lx %lx %lx %lx %s", (int)getpid(), (int)child, (int)execd,
	       (unsigned long)(uintptr_t)mf, (unsigned long)(uintptr_t)a, (unsigned long)(uintptr_t)l,
	       (unsigned long)(uintptr_t)h, (unsigned long)(uintptr_t)pp,
	       (unsigned long)(uintptr_t)t, (unsigned long)(uintptr_t)c, xbuf);
	fflush(stdout);
	while (read(0, xbuf, sizeof(xbuf)) > 0)
		;
	kill(child, SIGKILL);
	kill(execd, SIGKILL);
	waitpid(child, NULL, 0);
	waitpid(execd, NULL, 0);
	return 0;
}

/* Runs the target (under mmkit run --names if @mmkit) and checks what it named. */
static void run_target(const char *self, const char *mmkit, int kernel_names, int nested)
{
	const char *with[] = { mmkit, "run", "--names", "--no-glibc-names", self, "target", NULL };
	/* mmkit run --names in mmkit run --names: the outer supervisor names, the inner runs the program. */
	const char *twice[] = { mmkit, "run", "--names", "--no-glibc-names", mmkit, "run", "--names",
				"--no-glibc-names", self, "target", NULL };
	const char *alone[] = { self, "target", NULL };
	unsigned long mf, a, l, h, pp, t, c, e;
	int in, status, i, pid, child, execd;
	char line[512], want[80];
	struct lookup q = { 0 };
	FILE *f;
	pid_t run = spawn(nested ? twice : mmkit ? with : alone, &in, &f);

	if (!fgets(line, sizeof(line), f) ||
	    sscanf(line, "ready %d %d %d %lx %lx %lx %lx %lx %lx %lx %lx", &pid, &child, &execd, &mf,
		   &a, &l, &h, &pp, &t, &c, &e) != 11) {
		close(in);
		waitpid(run, &status, 0);
		T_FAIL("the target%s did not get the kernel's answers (exit %d)",
		       mmkit ? " under mmkit run --names" : "", WEXITSTATUS(status));
	}
	memset(want, 'x', 79);
	want[79] = '\0';
	expect_name(pid, a, "mmkit-a", "named");
	if (kernel_names_memfd())
		expect_name(pid, mf, "memfd", "a memfd's mapping");
	expect_name(pid, a + page, NULL, "cleared");
	expect_name(pid, a + 2 * page, "mmkit-b", "renamed");
	expect_name(pid, a + 3 * page, "mmkit-a", "after the rename");
	expect_name(pid, l, want, "79 characters, then refused names");
	expect_name(pid, h, "holey", "before a hole");
	expect_name(pid, h + 2 * page, "holey", "after a hole");
	expect_name(pid, pp + 2 * page, "part", "after a partial munmap");
	for (i = 0; i < THREADS; i++)
		expect_name(pid, t + i * page, "thread-done", "a thread's");
	expect_name(pid, c, NULL, "the child's, in the parent");
	expect_name(pid, c + page, "parent-after", "named after fork");
	expect_name(child, a, "mmkit-a", "inherited at fork");
	expect_name(child, c, "child", "the child's own");
	expect_name(child, c + page, NULL, "the parent's name after fork, in the child");
	expect_name(execd, e, "after-exec", "after exec");
	q.only = "after-exec";
	T_EQ(mmkit_regions(execd, lookup_fn, &q), 0);
	if (q.others)
		T_FAIL("the exec'd child shows %d names from before exec", q.others);
	/* Where the kernel names, mmkit stays out of the way: no registry in the target. */
	if (kernel_names && mmkit) {
		snprintf(line, sizeof(line), "/proc/%d/fd", pid);
		for (i = 0; i < 1024; i++) {
			char path[64], link[128];
			ssize_t n;

			snprintf(path, sizeof(path), "/proc/%d/fd/%d", pid, i);
			n = readlink(path, link, sizeof(link) - 1);
			if (n > 0 && (link[n] = '\0', strstr(link, "mmkit-names")))
				T_FAIL("a registry in the target where the kernel names VMAs");
		}
	}
	close(in);
	fclose(f);
	T_ASSERT(waitpid(run, &status, 0) == run);
	T_EQ(WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), 0);
}

/*
 * Names follow mremap() as the kernel's (mremap_target()): alone where
 * the kernel names, else under mmkit run --names (with glibc's names if
 * @glibc: the preload's " glibc: malloc" stays on a block realloc() moved).
 */
static void mremap_names(const char *self, const char *mmkit, int glibc)
{
	const char *with[] = { mmkit, "run", "--names", glibc ? self : "--no-glibc-names",
			       glibc ? "mremap" : self, glibc ? NULL : "mremap", NULL };
	const char *alone[] = { self, "mremap", NULL };
	unsigned long g, s, m, m2, f, dst, d, d2, big, v, w, x, over;
	int in, status, pid = 0;
	char line[512];
	FILE *f_;
	pid_t run = spawn(mmkit ? with : alone, &in, &f_);

	if (!fgets(line, sizeof(line), f_) ||
	    sscanf(line, "ready %d %lx %lx %lx %lx %lx %lx %lx %lx %lx %lx %lx %lx %lx", &pid, &over,
		   &v, &w, &x, &g, &s, &m, &m2, &f, &dst, &d, &d2, &big) != 14)
		T_FAIL("the mremap target did not start%s", mmkit ? " under mmkit run --names" : "");
	expect_name(pid, g + 3 * page, "grown", "grown in place, the old part");
	expect_name(pid, g + 5 * page, "grown", "grown in place, the new part");
	expect_name(pid, s + page, "shrunk", "shrunk, what is left");
	expect_name(pid, s + 2 * page, NULL, "shrunk, the cut part mapped again");
	expect_name(pid, m2, "moved", "moved (MREMAP_MAYMOVE)");
	expect_name(pid, m2 + 3 * page, "moved", "moved and grown, the new part");
	expect_name(pid, m, NULL, "moved, the old address mapped again");
	expect_name(pid, dst + page, "fixed", "moved to MREMAP_FIXED's address");
	expect_name(pid, f, NULL, "moved to a fixed address, the old one mapped again");
	expect_name(pid, d2 + page, "dontunmap", "moved with MREMAP_DONTUNMAP");
	expect_name(pid, d, "dontunmap", "MREMAP_DONTUNMAP's old range, the old VMA");
	expect_name(pid, over + page, NULL, "unnamed memory moved over named memory");
	expect_name(pid, v + page, "stays", "a VMA that could not grow");
	expect_name(pid, w, NULL, "mapped after a failed mremap, the growth's size");
	expect_name(pid, x + 3 * page, NULL, "mapped after a failed mremap, the new size");
	if (glibc)
		expect_name(pid, big, " glibc: malloc", "a large block realloc() moved");
	close(in);
	fclose(f_);
	T_ASSERT(waitpid(run, &status, 0) == run);
	T_EQ(status, 0);
}

/*
 * glibc's names under mmkit run --names (the preload on glibc < 2.39, the
 * tunable after), and none with --no-glibc-names.
 */
static void glibc_names(const char *self, const char *mmkit, int on)
{
	const char *argv[] = { mmkit, "run", "--names", on ? self : "--no-glibc-names",
			       on ? "glibc" : self, on ? NULL : "glibc", NULL };
	unsigned long big, stack, arena, tbig;
	int in, pid = 0, tid, status, threads = 0;
	char line[256], want[64];
	FILE *f;
	pid_t run = spawn(argv, &in, &f);

	if (!fgets(line, sizeof(line), f) || sscanf(line, "ready %d %lx", &pid, &big) != 2)
		T_FAIL("the glibc target did not start");
	expect_name(pid, big, on ? " glibc: malloc" : NULL, "a large block of the main thread");
	while (fgets(line, sizeof(line), f) && strcmp(line, "end\n")) {
		T_ASSERT(sscanf(line, "thread %d %lx %lx %lx", &tid, &stack, &arena, &tbig) == 4);
		snprintf(want, sizeof(want), " glibc: pthread stack: %d", tid);
		expect_name(pid, stack, on ? want : NULL, "a thread's stack");
		expect_name(pid, arena, on ? " glibc: malloc arena" : NULL, "a block of a thread's arena");
		expect_name(pid, tbig, on ? " glibc: malloc" : NULL, "a thread's large block");
		threads++;
	}
	T_EQ(threads, 4);
	close(in);
	fclose(f);
	T_ASSERT(waitpid(run, &status, 0) == run);
	T_EQ(status, 0);
}

/*
 * The supervisor killed: the program goes on, and its naming calls get
 * ENOSYS from the kernel (the listener is closed), at once.
 */
static void supervisor_killed(const char *self, const char *mmkit)
{
	const char *argv[] = { mmkit, "run", "--names", "--no-glibc-names", self, "orphan", NULL };
	int in, status, pid = 0, got = 0;
	char line[64];
	FILE *f;
	pid_t run = spawn(argv, &in, &f);

	if (!fgets(line, sizeof(line), f) || sscanf(line, "ready %d", &pid) != 1)
		T_FAIL("the orphan target did not start under mmkit run --names");
	kill(run, SIGKILL);
	T_ASSERT(waitpid(run, &status, 0) == run);
	T_ASSERT(write(in, "x", 1) == 1);
	if (!fgets(line, sizeof(line), f) || sscanf(line, "%d", &got) != 1)
		T_FAIL("the program did not go on after its supervisor was killed");
	T_EQ(got, -ENOSYS);
	fclose(f);
	close(in);
}

int main(int argc, char **argv)
{
	char self[4096], mmkit[4096 + 16], shim[4096 + 32], *slash;
	void *p;
	int kernel_names;
	ssize_t n;

	page = (size_t)sysconf(_SC_PAGESIZE);
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	T_ASSERT(n > 0);
	self[n] = '\0';
	if (argc > 1 && !strcmp(argv[1], "target"))
		return target(self);
	if (argc > 1 && !strcmp(argv[1], "glibc"))
		return glibc_target();
	if (argc > 1 && !strcmp(argv[1], "mremap"))
		return mremap_target();
	if (argc > 1 && !strcmp(argv[1], "orphan"))
		return orphan_target();
	if (argc > 3 && !strcmp(argv[1], "exec-target"))
		return exec_target(atoi(argv[2]), atoi(argv[3]));
	/* The build tree: tests/ beside the mmkit binary. */
	slash = strrchr(self, '/');
	*slash = '\0';
	snprintf(mmkit, sizeof(mmkit), "%s/../mmkit", self);
	snprintf(shim, sizeof(shim), "%s/../libmmkit-names.so", self);
	*slash = '/';
	if (access(mmkit, X_OK))
		T_SKIP("no %s to run the target with", mmkit);
	p = map(1);
	kernel_names = !name(p, page, "probe");
	munmap(p, page);
	if (kernel_names) {
		run_target(self, NULL, 1, 0);
		mremap_names(self, NULL, 0);
	}
	run_target(self, mmkit, kernel_names, 0);
	run_target(self, mmkit, kernel_names, 1);
	mremap_names(self, mmkit, 0);
	if (!kernel_names)
		supervisor_killed(self, mmkit);
	/*
	 * A static build (the kernel tiers' guests) has no dynamic loader to
	 * preload with, the sanitizer build no shims (they would come before
	 * its runtime).
	 */
	if (!getauxval(AT_BASE) || access(shim, R_OK)) {
		printf("note: glibc's names not checked: %s\n",
		       getauxval(AT_BASE) ? "no libmmkit-names.so beside mmkit" : "a static build");
	} else {
		glibc_names(self, mmkit, 1);
		glibc_names(self, mmkit, 0);
		if (!kernel_names)
			mremap_names(self, mmkit, 1);
	}
	printf("PASS: the kernel's answers and names%s\n",
	       kernel_names ? ", the same with and without mmkit run --names" :
			      " under mmkit run --names where the kernel drops them");
	return T_EXIT_PASS;
}
