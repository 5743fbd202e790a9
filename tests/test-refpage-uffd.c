// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The uffd backend's SIGBUS handling under hostile conditions (issue 10,
 * defect 8): handlers of other code installed around mmkit's, objects
 * destroyed and created while other threads' faults are being served, and
 * a thread that blocks SIGBUS.  Each case runs in a forked child under
 * alarm(2), so that a handler chain that loops (a stack overflow, or a
 * hang) or a handler reading freed memory shows as that child's death, and
 * the test fails instead of hanging.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdint.h>
#include <time.h>
#include <sys/mman.h>

#include "mmkit.h"
#include "harness.h"

#define CASE_SECONDS	30
#define STRESS_SECONDS	2
#define STRESS_THREADS	3
#define STRESS_PAGES	16

static size_t page;
static const unsigned char pattern[16] = {
	0xde, 0xad, 0xbe, 0xef, 0x01, 0x02, 0x03, 0x04,
	0xa5, 0x5a, 0x00, 0xff, 0x10, 0x20, 0x30, 0x40,
};

static struct mmkit_refpage *create(const void *pat, size_t psz)
{
	struct mmkit_refpage *rp;
	int ret = mmkit_refpage_create(&rp, pat, psz, MMKIT_REFPAGE_BACKEND_UFFD);

	if (ret)
		T_FAIL("mmkit_refpage_create: %s", strerror(-ret));
	return rp;
}

static unsigned char *map(struct mmkit_refpage *rp, size_t len)
{
	void *p;
	int ret = mmkit_refpage_map(rp, len, PROT_READ | PROT_WRITE, &p);

	if (ret)
		T_FAIL("mmkit_refpage_map: %s", strerror(-ret));
	return p;
}

/* Maps a fresh object's range, checks its first bytes read as the pattern, frees both. */
static void check_serves(void)
{
	struct mmkit_refpage *rp = create(pattern, 16);
	unsigned char *p = map(rp, 4 * page);

	T_EQ(memcmp(p + 2 * page, pattern, 16), 0);
	T_EQ(mmkit_refpage_unmap(rp, p, 4 * page), 0);
	mmkit_refpage_destroy(rp);
}

/* The handler of code that ran before mmkit: it recovers from the fault. */
static sigjmp_buf first_jmp;
static volatile sig_atomic_t first_reached;

static void first_handler(int sig)
{
	(void)sig;
	first_reached = 1;
	siglongjmp(first_jmp, 1);
}

/* The handler of code that ran after mmkit: it chains, as it must, to what it replaced. */
static struct sigaction later_prev;

static void later_handler(int sig, siginfo_t *si, void *ctx)
{
	if (later_prev.sa_flags & SA_SIGINFO)
		later_prev.sa_sigaction(sig, si, ctx);
	else if (later_prev.sa_handler != SIG_DFL && later_prev.sa_handler != SIG_IGN)
		later_prev.sa_handler(sig);
	else
		_exit(3);
}

static void install(void (*handler)(int), void (*action)(int, siginfo_t *, void *),
		    struct sigaction *old)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	if (action) {
		sa.sa_sigaction = action;
		sa.sa_flags = SA_SIGINFO;
	} else {
		sa.sa_handler = handler;
	}
	T_EQ(sigaction(SIGBUS, &sa, old), 0);
}

/*
 * A SIGBUS that is not a reference-page fault (a file mapping read past
 * the end of its file) must reach first_handler, through every handler
 * installed since.
 */
static void check_foreign_sigbus_reaches_first(void)
{
	int fd = memfd_create("mmkit-test-sigbus", MFD_CLOEXEC);
	volatile unsigned char *beyond;

	T_ASSERT(fd >= 0);
	T_EQ(ftruncate(fd, (off_t)page), 0);
	beyond = mmap(NULL, 2 * page, PROT_READ, MAP_SHARED, fd, 0);
	T_ASSERT(beyond != MAP_FAILED);
	first_reached = 0;
	if (!sigsetjmp(first_jmp, 1))
		(void)beyond[page];
	T_EQ(first_reached, 1);
	munmap((void *)beyond, 2 * page);
	close(fd);
}

/*
 * A first library's handler, then mmkit's with an object, then a later
 * library's installed while the object lives; then the object goes.
 */
static void later_library_over_object(void)
{
	struct mmkit_refpage *rp;

	alarm(CASE_SECONDS);
	install(first_handler, NULL, NULL);
	rp = create(pattern, 16);
	install(NULL, later_handler, &later_prev);
	mmkit_refpage_destroy(rp);
}

/* Another library installs its handler while an object lives; the object goes, a new one comes. */
static void chain_after_recreate(void *arg)
{
	(void)arg;
	later_library_over_object();
	check_serves();
	check_foreign_sigbus_reaches_first();
}

/*
 * The later library leaves again and puts mmkit's handler back while no
 * object exists: the next object must not take its own handler for the one
 * before it.
 */
static void chain_not_to_itself(void *arg)
{
	(void)arg;
	later_library_over_object();
	T_EQ(sigaction(SIGBUS, &later_prev, NULL), 0);
	check_serves();
	check_foreign_sigbus_reaches_first();
}

/* Someone puts the default action back: the next object installs the handler again. */
static void default_put_back(void *arg)
{
	struct sigaction dfl;

	(void)arg;
	alarm(CASE_SECONDS);
	check_serves();
	memset(&dfl, 0, sizeof(dfl));
	dfl.sa_handler = SIG_DFL;
	T_EQ(sigaction(SIGBUS, &dfl, NULL), 0);
	check_serves();
}

/*
 * Stress: STRESS_THREADS threads fault on the pages of the current range
 * (MADV_DONTNEED, then a read) while the main thread destroys the range's
 * object under them, then creates the next one, each with its own pattern
 * byte.  A read must give that byte, or 0 once the object is gone.  A
 * reader announces the cycle it reads in (reading[]) before it touches
 * that cycle's range, and the main thread unmaps a range only when no
 * reader is in its cycle any more.
 */
struct stress {
	unsigned char *_Atomic range[2];	/* of cycle c at c % 2 */
	_Atomic unsigned long cycle;		/* the current one; 0: stop */
	_Atomic unsigned long reading[STRESS_THREADS];
	_Atomic unsigned long reads;
	_Atomic int bad;
};

static struct stress stress;

static unsigned char cycle_byte(unsigned long cycle)
{
	return (unsigned char)(1 + cycle % 251);
}

static void *stress_reader(void *arg)
{
	unsigned int id = (unsigned int)(uintptr_t)arg, seed = id + 1;
	unsigned long cycle;
	unsigned char *p, c;
	size_t pg;

	for (;;) {
		cycle = stress.cycle;
		if (!cycle)
			return NULL;
		stress.reading[id] = cycle;
		/* The announcement is seen before the range is touched, or the range is not this one. */
		if (stress.cycle != cycle) {
			stress.reading[id] = 0;
			continue;
		}
		p = stress.range[cycle % 2];
		pg = (size_t)rand_r(&seed) % STRESS_PAGES;
		madvise(p + pg * page, page, MADV_DONTNEED);
		c = ((volatile unsigned char *)p)[pg * page + pg];
		if (c != cycle_byte(cycle) && c)
			stress.bad = 1;
		stress.reading[id] = 0;
		stress.reads++;
	}
}

static void destroy_under_faults(void *arg)
{
	pthread_t th[STRESS_THREADS];
	struct mmkit_refpage *rp;
	unsigned long cycle = 1, reads;
	unsigned char byte, *p;
	double end;
	int t;

	(void)arg;
	alarm(CASE_SECONDS);
	byte = cycle_byte(cycle);
	rp = create(&byte, 1);
	stress.range[cycle % 2] = map(rp, STRESS_PAGES * page);
	stress.cycle = cycle;
	for (t = 0; t < STRESS_THREADS; t++)
		T_EQ(pthread_create(&th[t], NULL, stress_reader, (void *)(uintptr_t)t), 0);
	end = t_now() + STRESS_SECONDS;
	do {
		/* Let the readers fault in this range, then pull the object from under them. */
		reads = stress.reads;
		while (stress.reads < reads + STRESS_THREADS && !stress.bad)
			usleep(50);
		mmkit_refpage_destroy(rp);
		p = stress.range[cycle % 2];
		byte = cycle_byte(++cycle);
		rp = create(&byte, 1);
		stress.range[cycle % 2] = map(rp, STRESS_PAGES * page);
		stress.cycle = cycle;
		for (t = 0; t < STRESS_THREADS; t++)
			while (stress.reading[t] == cycle - 1)
				usleep(50);
		T_EQ(munmap(p, STRESS_PAGES * page), 0);
	} while (t_now() < end && !stress.bad);
	stress.cycle = 0;
	for (t = 0; t < STRESS_THREADS; t++)
		T_EQ(pthread_join(th[t], NULL), 0);
	T_EQ(stress.bad, 0);
	T_EQ(mmkit_refpage_unmap(rp, stress.range[cycle % 2], STRESS_PAGES * page), 0);
	mmkit_refpage_destroy(rp);
	printf("    %lu objects destroyed under %lu faulting reads\n", cycle - 1,
	       (unsigned long)stress.reads);
	fflush(stdout);
}

static unsigned char *blocked_touch_p;

static void blocked_touch(void *arg)
{
	sigset_t bus;

	(void)arg;
	sigemptyset(&bus);
	sigaddset(&bus, SIGBUS);
	pthread_sigmask(SIG_BLOCK, &bus, NULL);
	(void)((volatile unsigned char *)blocked_touch_p)[0];
}

/*
 * A thread that blocks SIGBUS would be killed on its first touch of a
 * fresh page (the kernel forces the default action): map, attach and remap
 * refuse it, and work again once SIGBUS is unblocked.  What they cannot
 * see, a thread that blocks it later, kills the process as documented.
 */
static void blocked_sigbus(void *arg)
{
	struct mmkit_refpage *rp;
	sigset_t bus, old;
	unsigned char *q;
	void *p, *moved;
	int status;

	(void)arg;
	alarm(CASE_SECONDS);
	q = mmap(NULL, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(q != MAP_FAILED);
	sigemptyset(&bus);
	sigaddset(&bus, SIGBUS);
	T_EQ(pthread_sigmask(SIG_BLOCK, &bus, &old), 0);
	rp = create(pattern, 16);
	T_EQ(mmkit_refpage_map(rp, 4 * page, PROT_READ | PROT_WRITE, &p), -EINVAL);
	T_EQ(mmkit_refpage_attach(rp, q, 4 * page), -EINVAL);
	T_EQ(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
	p = map(rp, 4 * page);
	T_EQ(memcmp((unsigned char *)p + page, pattern, 16), 0);
	T_EQ(mmkit_refpage_attach(rp, q, 4 * page), 0);
	T_EQ(memcmp(q + 3 * page, pattern, 16), 0);
	/* remap maps its new range as map does: refused too, and the range stays. */
	T_EQ(pthread_sigmask(SIG_BLOCK, &bus, NULL), 0);
	T_EQ(mmkit_refpage_remap(rp, p, 4 * page, 8 * page, &moved), -EINVAL);
	T_EQ(pthread_sigmask(SIG_SETMASK, &old, NULL), 0);
	T_EQ(memcmp((unsigned char *)p + 2 * page, pattern, 16), 0);
	blocked_touch_p = (unsigned char *)p + 3 * page;
	status = t_in_child(blocked_touch, NULL);
	T_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGBUS);
	T_EQ(mmkit_refpage_unmap(rp, p, 4 * page), 0);
	T_EQ(mmkit_refpage_unmap(rp, q, 4 * page), 0);
	mmkit_refpage_destroy(rp);
}

/*
 * A range unmapped with plain munmap(2), then mapped again at the same
 * address and attached to another object: the new object's pattern is
 * served there, and destroying the old object leaves the range registered.
 */
static void reuse_after_plain_munmap(void *arg)
{
	static const unsigned char other[16] = { 0x55, 0x66 };
	struct mmkit_refpage *old = create(pattern, 16), *new = create(other, 16);
	unsigned char *p = map(old, 4 * page);
	void *q;

	(void)arg;
	T_EQ(munmap(p, 4 * page), 0);
	q = mmap(p, 4 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	T_ASSERT(q == p);
	T_EQ(mmkit_refpage_attach(new, p, 4 * page), 0);
	T_EQ(memcmp(p + page, other, 16), 0);
	mmkit_refpage_destroy(old);
	T_EQ(memcmp(p + 2 * page, other, 16), 0);
	T_EQ(mmkit_refpage_unmap(new, p, 4 * page), 0);
	mmkit_refpage_destroy(new);
}

static const struct {
	const char *name;
	void (*fn)(void *);
} cases[] = {
	{ "a handler installed later, then destroy and create: no loop", chain_after_recreate },
	{ "mmkit's handler put back, then create: it does not chain to itself", chain_not_to_itself },
	{ "the default action put back: the next object installs the handler again",
	  default_put_back },
	{ "objects destroyed and created while other threads fault", destroy_under_faults },
	{ "a thread blocking SIGBUS: map, attach and remap fail with EINVAL", blocked_sigbus },
	{ "a range munmap'ed and attached again: the new pattern, kept after the old object goes",
	  reuse_after_plain_munmap },
};

int main(void)
{
	char why[MMKIT_REASON_MAX];
	size_t i;

	if (mmkit_refpage_backend_available(MMKIT_REFPAGE_BACKEND_UFFD, why, sizeof(why)))
		T_SKIP("backend uffd unavailable: %s", why);
	page = (size_t)sysconf(_SC_PAGESIZE);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		T_CASE(cases[i].name);
		T_CHILD_OK(t_in_child(cases[i].fn, NULL));
	}
	return T_EXIT_PASS;
}
