// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * pthread_cancel(3) of a thread inside a libmmkit call.  The library's
 * locked parts reach cancellation points (open, read, close of /proc
 * files, pwrite of a registry or pattern file): a thread cancelled there
 * died holding the lock, and the next call in any thread waited for good.
 * Like glibc's malloc, no libmmkit call acts on a cancellation inside:
 * it is acted on at the caller's next cancellation point.
 *
 * Each case starts a thread that makes the call in a loop (with a
 * cancellation point of its own between calls), cancels it at a varying
 * moment, joins it, and does that ROUNDS times; then the calling thread
 * makes the call again.  An alarm turns a wait for good into a failure;
 * a descriptor the cancelled threads left open fails it too.
 */
#include <pthread.h>
#include <semaphore.h>
#include <sys/mman.h>

#include "harness.h"
#include "mmkit.h"

#define ROUNDS		100
/* Far above what a case costs (~0.5 s, ~3 s under TSan): only a lock held for good gets there. */
#define ALARM_SECONDS	60

static const char *current;

static void on_alarm(int sig)
{
	static const char msg[] = "FAIL: a call waited for good after threads were cancelled in it: ";

	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	(void)!write(2, current, strlen(current));
	(void)!write(2, "\n", 1);
	_exit(T_EXIT_FAIL);
}

struct worker {
	void (*op)(void);
	unsigned long done;
};

static void *worker_loop(void *arg)
{
	struct worker *w = arg;

	for (;;) {
		w->op();
		__atomic_add_fetch(&w->done, 1, __ATOMIC_RELEASE);
		pthread_testcancel();
	}
	return NULL;
}

/* Cancels a thread running @op in a loop ROUNDS times, then runs @op here. */
static void cancel_rounds(const char *what, void (*op)(void))
{
	struct worker w = { op, 0 };
	pthread_t t;
	void *res;
	unsigned int round;
	volatile unsigned long spin;
	int fds;

	current = what;
	alarm(ALARM_SECONDS);
	/* Once first: what the library keeps open for good (a pattern file, a registry) is counted. */
	op();
	fds = t_count_fds();
	for (round = 0; round < ROUNDS; round++) {
		w.done = 0;
		T_EQ(pthread_create(&t, NULL, worker_loop, &w), 0);
		/* A moment that varies, so that the request lands in every part of the call. */
		while (!__atomic_load_n(&w.done, __ATOMIC_ACQUIRE))
			sched_yield();
		for (spin = 0; spin < (round * 7919) % 20000; spin++)
			;
		T_EQ(pthread_cancel(t), 0);
		T_EQ(pthread_join(t, &res), 0);
		T_ASSERT(res == PTHREAD_CANCELED);
	}
	op();
	alarm(0);
	if (t_count_fds() != fds)
		T_FAIL("%s: %d descriptors open before the cancelled threads, %d after", what, fds,
		       t_count_fds());
	printf("ok: %s: %u threads cancelled in it, then called again\n", what, ROUNDS);
}

/* A secret of pages of its own, 1 MiB: the cgroup's limit is read under the lock. */
static void secret_span(void)
{
	void *p;

	if (mmkit_secret_alloc(&p, 1 << 20, MMKIT_SECRET_PAGES | MMKIT_SECRET_QUIET))
		T_FAIL("mmkit_secret_alloc: %s", mmkit_last_error());
	mmkit_secret_free(p);
}

/* Names and unnames anonymous memory: the registry, where the kernel cannot. */
static void name_range(void)
{
	size_t len = 4 * (size_t)sysconf(_SC_PAGESIZE);
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	T_ASSERT(p != MAP_FAILED);
	if (mmkit_name(p, len, "cancel") || mmkit_name(p, len, NULL))
		T_FAIL("mmkit_name: %s", mmkit_last_error());
	munmap(p, len);
}

static int region_seen(const struct mmkit_region *r, void *arg)
{
	(void)r;
	(*(unsigned long *)arg)++;
	return 0;
}

/* A reader: this process's smaps, pagemap and registries, no lock of the library. */
static void regions_walk(void)
{
	unsigned long n = 0;

	if (mmkit_regions(getpid(), region_seen, &n) || !n)
		T_FAIL("mmkit_regions: %s", mmkit_last_error());
}

/* A callback that says it is in and waits at a cancellation point for good. */
static int region_stuck(const struct mmkit_region *r, void *arg)
{
	(void)r;
	sem_post(arg);
	for (;;)
		pause();
	return 0;
}

#ifdef __SANITIZE_ADDRESS__
#include <sanitizer/asan_interface.h>

/*
 * GCC 12's ASan leaves the redzones of the frames a cancellation unwinds
 * poisoned, and the thread's exit then writes over them (its key
 * destructors' memset): the whole stack is unpoisoned on the way out,
 * from this uninstrumented frame (only glibc's start_thread is above).
 */
static void __attribute__((no_sanitize_address)) unpoison_stack(void *arg)
{
	pthread_attr_t a;
	size_t size;
	void *low;

	(void)arg;
	if (!pthread_getattr_np(pthread_self(), &a)) {
		if (!pthread_attr_getstack(&a, &low, &size))
			__asan_unpoison_memory_region(low, size);
		pthread_attr_destroy(&a);
	}
}
#else
/* Without ASan nothing is poisoned. */
static void unpoison_stack(void *arg)
{
	(void)arg;
}
#endif

static void *__attribute__((no_sanitize_address)) regions_stuck(void *arg)
{
	pthread_cleanup_push(unpoison_stack, NULL);
	mmkit_regions(0, region_stuck, arg);
	pthread_cleanup_pop(0);
	return NULL;
}

/*
 * A callback runs with the caller's cancellation state: a thread
 * cancelled in one left the walk's descriptors open (2 a walk) and its
 * memory allocated.
 */
static void regions_cancel_in_callback(void)
{
	unsigned int round;
	pthread_t t;
	sem_t in;
	void *res;
	int fds;

	T_EQ(sem_init(&in, 0, 0), 0);
	regions_walk();
	fds = t_count_fds();
	for (round = 0; round < ROUNDS; round++) {
		T_EQ(pthread_create(&t, NULL, regions_stuck, &in), 0);
		while (sem_wait(&in))
			;
		T_EQ(pthread_cancel(t), 0);
		T_EQ(pthread_join(t, &res), 0);
		T_ASSERT(res == PTHREAD_CANCELED);
	}
	if (t_count_fds() != fds)
		T_FAIL("mmkit_regions: %d descriptors open before %u threads were cancelled in its callback, %d after",
		       fds, ROUNDS, t_count_fds());
	sem_destroy(&in);
	printf("ok: mmkit_regions: %u threads cancelled in its callback, nothing left open\n", ROUNDS);
}

/*
 * A reference-page object of a pattern of its own each time, on @backend:
 * memfd writes its pattern file under its lock, uffd closes its
 * userfaultfd under its lock when the last object goes.
 */
static void refpage_cycle(unsigned int backend)
{
	static unsigned int n;
	struct mmkit_refpage *rp;
	unsigned int pattern = __atomic_add_fetch(&n, 1, __ATOMIC_RELAXED);
	void *p;

	if (mmkit_refpage_create(&rp, &pattern, sizeof(pattern), backend))
		T_FAIL("mmkit_refpage_create: %s", mmkit_last_error());
	if (mmkit_refpage_map(rp, 1 << 20, PROT_READ, &p))
		T_FAIL("mmkit_refpage_map: %s", mmkit_last_error());
	mmkit_refpage_unmap(rp, p, 1 << 20);
	mmkit_refpage_destroy(rp);
}

static void refpage_memfd(void)
{
	refpage_cycle(MMKIT_REFPAGE_BACKEND_MEMFD);
}

static void refpage_uffd(void)
{
	refpage_cycle(MMKIT_REFPAGE_BACKEND_UFFD);
}

int main(void)
{
	char why[256];

	signal(SIGALRM, on_alarm);
	setvbuf(stdout, NULL, _IONBF, 0);
	cancel_rounds("mmkit_secret_alloc (pages of its own)", secret_span);
	cancel_rounds("mmkit_name", name_range);
	cancel_rounds("mmkit_regions", regions_walk);
	regions_cancel_in_callback();
	cancel_rounds("mmkit_refpage_create/map/destroy (memfd)", refpage_memfd);
	if (mmkit_refpage_backend_available(MMKIT_REFPAGE_BACKEND_UFFD, why, sizeof(why)))
		T_SKIP("the uffd backend: %s (the other calls passed)", why);
	cancel_rounds("mmkit_refpage_create/map/destroy (uffd)", refpage_uffd);
	return T_EXIT_PASS;
}
