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

static void test_cross_free(void)
{
	static struct queue ab, ba;
	static struct pair a = { &ab, &ba, 0xa5, { 0 } }, b = { &ba, &ab, 0x5a, { 0 } };
	struct mmkit_secret_stats before, after;
	pthread_t ta, tb;
	int i;

	T_CASE("two threads free each other's secrets: checked, wiped, counted, slots back in their chunks");
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
	/* Both threads exited: their caches went back to the chunks, none is left registered. */
	pthread_mutex_lock(&S.lock);
	T_ASSERT(S.caches == NULL);
	for (i = 0; i < HANDED; i++) {
		T_ASSERT(a.chunk[i] && b.chunk[i]);
		T_ASSERT(a.chunk[i]->state != CHUNK_ACTIVE || a.chunk[i]->nfree == a.chunk[i]->nslots);
		T_ASSERT(b.chunk[i]->state != CHUNK_ACTIVE || b.chunk[i]->nfree == b.chunk[i]->nslots);
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
	test_many_threads();
}

int main(void)
{
	t_secret_backends(suite);
	return T_EXIT_PASS;
}
