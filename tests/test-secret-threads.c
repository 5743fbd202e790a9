// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Secret memory across threads: pooled secrets are allocated and freed
 * through per-thread caches without the lock, so a secret freed by another
 * thread than the one that allocated it takes a path of its own.  Two
 * threads hand each other secrets to check and free; a thread that exits
 * gives its cached slots back to their chunks; a damaged canary or a second
 * free from another thread still aborts; then many threads allocate, free
 * and hand over secrets of every size at once.  Runs under TSan in
 * `make check` (it starts threads), on both backends.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include "harness.h"
#include "secret-backends.h"
#include "mmkit.h"
#include "secret.h"

/* A secret in flight: its bytes all hold @fill. */
struct item {
	unsigned char *p;
	size_t size;
	unsigned char fill;
};

#define QUEUE_CAP	256

/* A bounded queue of secrets from one thread to another. */
struct queue {
	pthread_mutex_t lock;
	pthread_cond_t changed;
	struct item item[QUEUE_CAP];
	unsigned int head, count;
	int closed;
};

static void queue_init(struct queue *q)
{
	memset(q, 0, sizeof(*q));
	pthread_mutex_init(&q->lock, NULL);
	pthread_cond_init(&q->changed, NULL);
}

static void queue_put(struct queue *q, struct item it)
{
	pthread_mutex_lock(&q->lock);
	while (q->count == QUEUE_CAP)
		pthread_cond_wait(&q->changed, &q->lock);
	q->item[(q->head + q->count++) % QUEUE_CAP] = it;
	pthread_cond_broadcast(&q->changed);
	pthread_mutex_unlock(&q->lock);
}

/* 0 if the queue is full (its reader may be gone): the caller keeps @it. */
static int queue_try_put(struct queue *q, struct item it)
{
	int put = 0;

	pthread_mutex_lock(&q->lock);
	if (q->count < QUEUE_CAP) {
		q->item[(q->head + q->count++) % QUEUE_CAP] = it;
		pthread_cond_broadcast(&q->changed);
		put = 1;
	}
	pthread_mutex_unlock(&q->lock);
	return put;
}

/* 1 and the oldest item, or 0 once the queue is closed and empty; waits if @wait. */
static int queue_get(struct queue *q, struct item *it, int wait)
{
	int got = 0;

	pthread_mutex_lock(&q->lock);
	while (wait && !q->count && !q->closed)
		pthread_cond_wait(&q->changed, &q->lock);
	if (q->count) {
		*it = q->item[q->head];
		q->head = (q->head + 1) % QUEUE_CAP;
		q->count--;
		got = 1;
		pthread_cond_broadcast(&q->changed);
	}
	pthread_mutex_unlock(&q->lock);
	return got;
}

static void queue_close(struct queue *q)
{
	pthread_mutex_lock(&q->lock);
	q->closed = 1;
	pthread_cond_broadcast(&q->changed);
	pthread_mutex_unlock(&q->lock);
}

static uint32_t next_random(uint32_t *seed)
{
	*seed = *seed * 1664525u + 1013904223u;
	return *seed >> 8;
}

static struct item make_item(size_t size, unsigned char fill)
{
	struct item it = { NULL, size, fill };
	int ret = mmkit_secret_alloc((void **)&it.p, size, MMKIT_SECRET_QUIET);

	if (ret)
		T_FAIL("mmkit_secret_alloc(%zu): %s", size, strerror(-ret));
	memset(it.p, fill, size);
	return it;
}

/* Checks the bytes and the recorded size of @it, then frees it. */
static void check_free(const struct item *it)
{
	size_t i, size = 0;

	for (i = 0; i < it->size; i++)
		if (it->p[i] != it->fill)
			T_FAIL("byte %zu of a %zu-byte secret is %#x, expected %#x", i, it->size, it->p[i],
			       it->fill);
	T_EQ(mmkit_secret_size(it->p, &size), 0);
	T_EQ(size, it->size);
	mmkit_secret_free(it->p);
}

#define HANDED		3000

struct pair {
	struct queue *out, *in;
	unsigned char fill;
	/* The chunks of the pooled secrets this thread allocated. */
	struct chunk *chunk[HANDED];
};

/* Sends HANDED secrets to the other thread while checking and freeing its. */
static void *hand_over(void *arg)
{
	struct pair *me = arg;
	struct item it;
	int i;

	for (i = 0; i < HANDED; i++) {
		it = make_item(1 + (size_t)i % MMKIT_SECRET_POOL_MAX, me->fill);
		me->chunk[i] = secret__chunk_of(it.p);
		queue_put(me->out, it);
		while (queue_get(me->in, &it, 0))
			check_free(&it);
	}
	queue_close(me->out);
	while (queue_get(me->in, &it, 1))
		check_free(&it);
	return NULL;
}

/* Every slot of @c is free in it or held in quarantine: no thread's cache has one. */
static int all_back(const struct chunk *c)
{
	return c->state != CHUNK_ACTIVE || c->nfree + c->nheld == c->nslots;
}

static void test_cross_free(void)
{
	static struct queue ab, ba;
	static struct pair a = { &ab, &ba, 0xa5, { 0 } }, b = { &ba, &ab, 0x5a, { 0 } };
	struct mmkit_secret_stats before, after;
	pthread_t ta, tb;
	int i;

	T_CASE("two threads free each other's secrets: checked, wiped, counted, slots back in their chunks or quarantine");
	queue_init(&ab);
	queue_init(&ba);
	T_EQ(mmkit_secret_stats(&before), 0);
	T_EQ(pthread_create(&ta, NULL, hand_over, &a), 0);
	T_EQ(pthread_create(&tb, NULL, hand_over, &b), 0);
	T_EQ(pthread_join(ta, NULL), 0);
	T_EQ(pthread_join(tb, NULL), 0);
	T_EQ(mmkit_secret_stats(&after), 0);
	T_EQ(after.allocs_live, before.allocs_live);
	T_EQ(after.bytes_live, before.bytes_live);
	/*
	 * Both threads exited: their caches went back to the chunks, but for
	 * the quarantine, which their classes hold; none is left registered.
	 */
	pthread_mutex_lock(&S.lock);
	T_ASSERT(S.caches == NULL);
	for (i = 0; i < HANDED; i++) {
		T_ASSERT(a.chunk[i] && b.chunk[i]);
		T_ASSERT(all_back(a.chunk[i]));
		T_ASSERT(all_back(b.chunk[i]));
	}
	pthread_mutex_unlock(&S.lock);
}

static void *alloc_damaged(void *arg)
{
	struct item *it = arg;

	*it = make_item(40, 1);
	/* One byte past the end: into the canary. */
	it->p[40] = 0;
	return NULL;
}

static void *alloc_one(void *arg)
{
	struct item *it = arg;

	*it = make_item(40, 1);
	return NULL;
}

static void free_damaged_elsewhere(void *arg)
{
	struct item it;
	pthread_t t;

	(void)arg;
	T_EQ(pthread_create(&t, NULL, alloc_damaged, &it), 0);
	T_EQ(pthread_join(t, NULL), 0);
	mmkit_secret_free(it.p);
}

static void free_twice_elsewhere(void *arg)
{
	struct item it;
	pthread_t t;

	(void)arg;
	T_EQ(pthread_create(&t, NULL, alloc_one, &it), 0);
	T_EQ(pthread_join(t, NULL), 0);
	mmkit_secret_free(it.p);
	mmkit_secret_free(it.p);
}

static void expect_abort(void (*fn)(void *))
{
	int status = t_in_child(fn, NULL);

	if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
		T_FAIL("expected SIGABRT, got %s %d", WIFEXITED(status) ? "exit" : "signal",
		       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
}

static void test_cross_abort(void)
{
	T_CASE("a damaged canary or a second free aborts when another thread frees");
	expect_abort(free_damaged_elsewhere);
	expect_abort(free_twice_elsewhere);
}

/* A thread frees a secret of @arg bytes, keeping the stale pointer, and exits. */
static void *free_and_exit(void *arg)
{
	struct item it = make_item(*(size_t *)arg, 0x77);

	mmkit_secret_free(it.p);
	return it.p;
}

/*
 * The slot a thread freed last before it exited is not handed out to
 * another thread by the next allocations of its class (16, or 8 of
 * 2 KiB): a stale pointer reads zeros, not that thread's secret.  A
 * thread's exit gave its quarantine back to the chunks, and the next
 * allocation took the slot just freed.  In a child: an allocator with no
 * other thread's slots in it.
 */
static void exit_quarantine(void *arg)
{
	static const struct { size_t size, held; } cases[] = {
		{ 32, QUARANTINE }, { 1000, QUARANTINE }, { 2000, 8 },
	};
	struct item q[QUARANTINE];
	unsigned char *stale;
	size_t i, j;
	pthread_t t;

	(void)arg;
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		T_EQ(pthread_create(&t, NULL, free_and_exit, (void *)&cases[i].size), 0);
		T_EQ(pthread_join(t, (void **)&stale), 0);
		for (j = 0; j < cases[i].held; j++) {
			q[j] = make_item(cases[i].size, 0x33);
			if (q[j].p == stale)
				T_FAIL("a %zu-byte secret freed by a thread that exited came back at allocation %zu of %zu",
				       cases[i].size, j + 1, cases[i].held);
		}
		t_expect_bytes(stale, cases[i].size, 0);
		for (j = 0; j < cases[i].held; j++)
			check_free(&q[j]);
	}
}

#define EXITING	3

/* What a thread frees before it exits: @n secrets of @size bytes, and where they were. */
struct exiting {
	size_t size, n;
	unsigned char *stale[QUARANTINE];
};

/* A thread allocates @arg's secrets, frees them all and exits. */
static void *free_all_and_exit(void *arg)
{
	struct exiting *ex = arg;
	struct item it[QUARANTINE];
	size_t i;

	for (i = 0; i < ex->n; i++)
		it[i] = make_item(ex->size, 0x55);
	for (i = 0; i < ex->n; i++) {
		mmkit_secret_free(it[i].p);
		ex->stale[i] = it[i].p;
	}
	return NULL;
}

/*
 * EXITING threads exit one after the other, each with a full quarantine
 * of 32-byte slots: none of them is among another thread's next
 * allocations, however many exited since (each exit pushed the one
 * before's back into the chunks, where the next allocation took 15 of
 * its 16).
 */
static void exit_quarantine_many(void *arg)
{
	static struct exiting ex[EXITING];
	struct item q[EXITING * QUARANTINE];
	size_t i, j, k;
	pthread_t t;

	(void)arg;
	for (i = 0; i < EXITING; i++) {
		ex[i].size = 32;
		ex[i].n = QUARANTINE;
		T_EQ(pthread_create(&t, NULL, free_all_and_exit, &ex[i]), 0);
		T_EQ(pthread_join(t, NULL), 0);
	}
	for (k = 0; k < EXITING * QUARANTINE; k++) {
		q[k] = make_item(32, 0x33);
		for (i = 0; i < EXITING; i++)
			for (j = 0; j < QUARANTINE; j++)
				if (q[k].p == ex[i].stale[j])
					T_FAIL("allocation %zu of %d took slot %zu freed by exited thread %zu of %d",
					       k + 1, EXITING * QUARANTINE, j + 1, i + 1, EXITING);
	}
	for (i = 0; i < EXITING; i++)
		for (j = 0; j < QUARANTINE; j++)
			t_expect_bytes(ex[i].stale[j], 32, 0);
	for (k = 0; k < EXITING * QUARANTINE; k++)
		check_free(&q[k]);
}

/* A thread allocates secrets of a few sizes, frees them and exits. */
static void *some_and_exit(void *arg)
{
	static const size_t sizes[] = { 32, 32, 1000, 2000, 8192 };
	struct item it[sizeof(sizes) / sizeof(sizes[0])];
	size_t i;

	(void)arg;
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		it[i] = make_item(sizes[i], 0x44);
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		check_free(&it[i]);
	return NULL;
}

/*
 * Once the threads that allocated have exited with nothing live, every
 * page mapped is counted as kept for reuse: the chunks only their
 * quarantine kept were neither live nor cached in the statistics.
 */
static void exit_quarantine_stats(void *arg)
{
	struct mmkit_secret_stats st;
	pthread_t t;
	int i;

	(void)arg;
	for (i = 0; i < 2; i++) {
		T_EQ(pthread_create(&t, NULL, some_and_exit, NULL), 0);
		T_EQ(pthread_join(t, NULL), 0);
	}
	T_EQ(mmkit_secret_stats(&st), 0);
	T_EQ(st.allocs_live, 0);
	T_ASSERT(st.pages_mapped > 0);
	if (st.pages_cached != st.pages_mapped)
		T_FAIL("nothing live, %llu pages mapped, %llu of them counted as cached",
		       st.pages_mapped, st.pages_cached);
}

/* The quarantine of the 2 KiB class. */
#define BIG_QUARANTINE	8

/*
 * Threads started and ended for ever, each holding its quarantine at
 * exit, do not make the pool grow for ever: past HELD_KEEP_BYTES of held
 * slots in a class, the oldest give way when it needs a chunk (each
 * exit's 16 KiB was held until the lock limit, or for good without one:
 * 1,890 pages after 10,000 threads of 16 32-byte secrets).  The last
 * thread's quarantine is still kept.
 */
static void exit_quarantine_bounded(void *arg)
{
	size_t threads = 3 * HELD_KEEP_BYTES / (BIG_QUARANTINE * 2048), i, j, k;
	struct exiting ex = { 2000, BIG_QUARANTINE, { NULL } };
	struct item q[BIG_QUARANTINE];
	struct mmkit_secret_stats st;
	pthread_t t;

	(void)arg;
	for (i = 0; i < threads; i++) {
		T_EQ(pthread_create(&t, NULL, free_all_and_exit, &ex), 0);
		T_EQ(pthread_join(t, NULL), 0);
	}
	T_EQ(mmkit_secret_stats(&st), 0);
	if (st.pages_mapped * (size_t)sysconf(_SC_PAGESIZE) > 2 * HELD_KEEP_BYTES)
		T_FAIL("%zu threads exited, each with %d 2000-byte secrets freed: %llu pages mapped for none live",
		       threads, BIG_QUARANTINE, st.pages_mapped);
	for (k = 0; k < BIG_QUARANTINE; k++) {
		q[k] = make_item(2000, 0x33);
		for (j = 0; j < BIG_QUARANTINE; j++)
			if (q[k].p == ex.stale[j])
				T_FAIL("allocation %zu took a slot the last exited thread freed", k + 1);
	}
	for (k = 0; k < BIG_QUARANTINE; k++)
		check_free(&q[k]);
}

/* Allocates 32-byte secrets up to the lock limit, frees them all, exits: how many. */
static void *fill_and_exit(void *arg)
{
	void **p = arg;
	size_t n = 0, i;
	int ret = 0;

	while (n < 4096 && !(ret = mmkit_secret_alloc(&p[n], 32, MMKIT_SECRET_QUIET)))
		n++;
	T_EQ(ret, -ENOMEM);
	for (i = 0; i < n; i++)
		mmkit_secret_free(p[i]);
	return (void *)n;
}

/*
 * What RLIMIT_MEMLOCK counts as locked now, as mmkit counts it: VmLck, or
 * on kernels that charge secret memory at fault (6.1 and Debian's 6.12:
 * VmLck stays 0) mmkit's own count of what it mapped.
 */
static unsigned long long locked_now(void)
{
	struct mmkit_secret_stats st;
	struct mmkit_memlock m;

	T_EQ(mmkit_memlock_check(NULL, 0, &m), 0);
	T_EQ(mmkit_secret_stats(&st), 0);
	return m.locked > st.bytes_locked ? m.locked : st.bytes_locked;
}

/*
 * Under a limit with room for one page of 32-byte secrets, the slots an
 * exited thread held in quarantine give way rather than another thread's
 * allocation fail: as many allocations succeed as the thread made.
 */
static void exit_quarantine_tight(void *arg)
{
	static void *p[4096];
	struct rlimit rl;
	size_t n, i;
	pthread_t t;
	void *res;

	(void)arg;
	t_become_nobody();
	rl.rlim_cur = rl.rlim_max = locked_now() + (rlim_t)sysconf(_SC_PAGESIZE);
	T_EQ(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	T_EQ(pthread_create(&t, NULL, fill_and_exit, p), 0);
	T_EQ(pthread_join(t, &res), 0);
	n = (size_t)res;
	T_ASSERT(n > QUARANTINE);
	for (i = 0; i < n; i++)
		if (mmkit_secret_alloc(&p[i], 32, MMKIT_SECRET_QUIET))
			T_FAIL("allocation %zu of %zu at the limit failed after a thread exited: %s", i + 1,
			       n, mmkit_last_error());
	for (i = 0; i < n; i++)
		mmkit_secret_free(p[i]);
}

/* A thread allocates and frees a 32-byte secret, and exits: where it was. */
static void *free_one_and_exit(void *arg)
{
	struct item it = make_item(32, 0x66);

	(void)arg;
	mmkit_secret_free(it.p);
	return it.p;
}

/*
 * A thread allocates QUARANTINE 32-byte secrets, none at @arg, frees them
 * and exits.
 */
static void *alloc_none_at(void *arg)
{
	struct item q[QUARANTINE];
	size_t j;

	for (j = 0; j < QUARANTINE; j++) {
		q[j] = make_item(32, 0x33);
		if (q[j].p == arg)
			T_FAIL("a 32-byte slot an exited thread freed came back at allocation %zu of %d after a mapping at the lock limit",
			       j + 1, QUARANTINE);
	}
	for (j = 0; j < QUARANTINE; j++)
		check_free(&q[j]);
	return NULL;
}

/*
 * At the lock limit, a mapping that the freed spans kept for reuse make
 * room for leaves the exited threads' quarantine alone: any mapping over
 * the limit released every class's held slots, and the next allocation
 * of another thread took the slot an exited thread freed last.  When
 * nothing else can go, the chunks only the quarantine keeps do: a
 * mapping that needs their pages gets them.
 */
static void exit_quarantine_reclaim(void *arg)
{
	long page = sysconf(_SC_PAGESIZE);
	struct mmkit_secret_stats st;
	unsigned char *stale;
	struct rlimit rl;
	void *span;
	pthread_t t;

	(void)arg;
	t_become_nobody();
	T_EQ(pthread_create(&t, NULL, free_one_and_exit, NULL), 0);
	T_EQ(pthread_join(t, (void **)&stale), 0);
	/* A freed span of 8 pages, kept for reuse: the limit then has room for 1 page. */
	T_EQ(mmkit_secret_alloc(&span, 8 * (size_t)page, MMKIT_SECRET_QUIET), 0);
	mmkit_secret_free(span);
	rl.rlim_cur = rl.rlim_max = locked_now() + (rlim_t)page;
	T_EQ(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	/* 6 pages: over the limit until the span goes, not the quarantine. */
	if (mmkit_secret_alloc(&span, 6 * (size_t)page, MMKIT_SECRET_QUIET))
		T_FAIL("6 pages at the limit, with 8 of a freed span to take back: %s", mmkit_last_error());
	/* In a thread: its exit leaves no slot in a cache, only held ones. */
	T_EQ(pthread_create(&t, NULL, alloc_none_at, stale), 0);
	T_EQ(pthread_join(t, NULL), 0);
	t_expect_bytes(stale, 32, 0);
	mmkit_secret_free(span);
	/* The last resort: pages only held slots keep, for a span that needs them. */
	T_EQ(mmkit_secret_stats(&st), 0);
	rl.rlim_cur = rl.rlim_max = locked_now();
	T_EQ(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	if (mmkit_secret_alloc(&span, st.pages_mapped * (size_t)page, MMKIT_SECRET_QUIET))
		T_FAIL("%llu pages at the limit, all mapped for secrets none of which is live: %s",
		       st.pages_mapped, mmkit_last_error());
	mmkit_secret_free(span);
}

static void test_exit_quarantine(void)
{
	T_CASE("a thread's exit keeps its quarantine: its last freed slot is not another thread's next");
	T_CHILD_OK(t_in_child(exit_quarantine, NULL));
	T_CASE("every exited thread's quarantine is kept, not only the last one's");
	T_CHILD_OK(t_in_child(exit_quarantine_many, NULL));
	T_CASE("nothing live once the threads exited: every page mapped is counted as cached");
	T_CHILD_OK(t_in_child(exit_quarantine_stats, NULL));
	T_CASE("threads started and ended for ever: the held slots stay within their budget");
	T_CHILD_OK(t_in_child(exit_quarantine_bounded, NULL));
	if (t_is_root()) {
		T_CASE("at the lock limit, the quarantine of an exited thread gives way rather than fail");
		T_CHILD_OK(t_in_child(exit_quarantine_tight, NULL));
		T_CASE("a mapping at the lock limit takes back the exited threads' quarantine last");
		T_CHILD_OK(t_in_child(exit_quarantine_reclaim, NULL));
	}
}

#define THREADS		8
#define STEPS		6000
#define LIVE		48

static struct queue inbox[THREADS];

/*
 * Each thread keeps up to LIVE secrets of random sizes (mostly pooled,
 * some page-granular), frees some itself, sends some to a random thread,
 * and checks and frees what it is sent.
 */
static void *churn(void *arg)
{
	unsigned int self = (unsigned int)(uintptr_t)arg, n = 0, k;
	uint32_t seed = self * 2654435761u + 1;
	struct item live[LIVE], it;
	size_t size;
	int step;

	for (step = 0; step < STEPS; step++) {
		uint32_t r = next_random(&seed);

		if (n < LIVE && (r % 3 || !n)) {
			size = r % 16 ? 1 + r / 16 % MMKIT_SECRET_POOL_MAX : 4096 + r / 16 % 8192;
			live[n++] = make_item(size, (unsigned char)(1 + r % 255));
		} else {
			k = r / 4 % n;
			it = live[k];
			live[k] = live[--n];
			if (r % 2 || !queue_try_put(&inbox[(self + 1 + r / 8 % (THREADS - 1)) % THREADS], it))
				check_free(&it);
		}
		while (queue_get(&inbox[self], &it, 0))
			check_free(&it);
	}
	while (n)
		check_free(&live[--n]);
	return NULL;
}

static void test_many_threads(void)
{
	struct mmkit_secret_stats before, after;
	pthread_t t[THREADS];
	struct item it;
	uintptr_t i;

	T_CASE("8 threads allocate, free and hand over secrets of every size, each checked at free");
	for (i = 0; i < THREADS; i++)
		queue_init(&inbox[i]);
	T_EQ(mmkit_secret_stats(&before), 0);
	for (i = 0; i < THREADS; i++)
		T_EQ(pthread_create(&t[i], NULL, churn, (void *)i), 0);
	for (i = 0; i < THREADS; i++)
		T_EQ(pthread_join(t[i], NULL), 0);
	/* What was sent after its receiver finished. */
	for (i = 0; i < THREADS; i++)
		while (queue_get(&inbox[i], &it, 0))
			check_free(&it);
	T_EQ(mmkit_secret_stats(&after), 0);
	T_EQ(after.allocs_live, before.allocs_live);
	T_EQ(after.bytes_live, before.bytes_live);
}

static void suite(void)
{
	test_cross_free();
	test_cross_abort();
	test_exit_quarantine();
	test_many_threads();
}

int main(void)
{
	t_secret_backends(suite);
	return T_EXIT_PASS;
}
