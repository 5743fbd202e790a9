// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Per-thread caches of free pooled slots: the fast path of the secret
 * allocator, which takes no lock.
 *
 * One lock for everything made a second thread multiply the cost of each
 * allocation six times, the lock's cache line bouncing between cores.  A
 * thread now holds up to a class's cache_max free slots of each size class,
 * taken from a chunk under S.lock in one batch (secret__pool_take) and
 * given back half at a time when the cache is full, so the lock is taken
 * once per many operations.  A slot freed by another thread than the one
 * that allocated it goes to the freeing thread's cache: a slot belongs to
 * no thread, only to its chunk, so a cross-thread free is as cheap as any
 * and a producer/consumer pair moves slots back through the chunk in
 * batches.  Everything a thread writes outside the lock is its own: its
 * cache, and the sizes[] entries and bytes of the slots it holds.
 *
 * The guarantees stay where they were: a slot is checked (canary, double
 * free, bad pointer) and wiped when freed, before it is cached; a cached
 * slot is marked freed, so freeing it again is still a double free, and
 * still all zero when handed out again, or a stale pointer wrote it.  A
 * freed slot is not handed out again at once: the last S.cls[k].quarantine
 * a thread freed of a class wait at the back of its ring (secret.h) while
 * the chunks have others, so that a stale pointer reads zeros, not the
 * next secret.  A chunk is mapped for that while the lock limit leaves
 * room; beyond it, or when mapping fails, the quarantine gives way rather
 * than fail.  The live
 * counts of the statistics are S's plus each cache's own, so they stay
 * exact.  A thread's cache goes back to the chunks when the thread exits
 * (the key's destructor), so empty chunks can be released, all but its
 * quarantine, held in its chunks (secret__pool_hold); after fork()
 * the child forgets the caches of the threads it does not have.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "secret.h"

/* Initial-exec: one load from the thread pointer, no call, on the fast path. */
static __thread struct thread_cache *my_cache __attribute__((tls_model("initial-exec")));

static void relaxed_add(unsigned long long *at, unsigned long long n)
{
	__atomic_store_n(at, __atomic_load_n(at, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
}

/* Slot @i of @tc's ring of class @k, from the oldest. */
static inline struct cached_slot *ring_at(struct thread_cache *tc, unsigned int k, unsigned int i)
{
	return &tc->slot[k][(tc->head[k] + i) & (CACHE_RING - 1)];
}

/* Gives the @n oldest of @tc's slots of class @k back to their chunks; S.lock held. */
static void ring_give(struct thread_cache *tc, unsigned int k, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		secret__pool_give(ring_at(tc, k, i), 1);
	tc->head[k] += n;
	tc->n[k] -= n;
}

/*
 * Gives @tc's slots back and folds its counts into S's; S.lock held.  The
 * freed slots of its quarantine (the back of each ring) stay held in
 * their chunks (secret__pool_hold), the others are freed there.
 */
static void cache_drain(struct thread_cache *tc)
{
	unsigned int k, held;

	for (k = 0; k < NCLASSES; k++) {
		for (held = 0; held < tc->n[k] && held < S.cls[k].quarantine &&
			       ring_at(tc, k, tc->n[k] - 1 - held)->freed; held++)
			;
		ring_give(tc, k, tc->n[k] - held);
		for (; tc->n[k]; tc->n[k]--, tc->head[k]++)
			secret__pool_hold(ring_at(tc, k, 0), 1);
	}
	secret__pool_disown(tc->chunk);
	S.allocs_live += tc->allocs;
	S.bytes_live += tc->bytes;
	__atomic_store_n(&tc->allocs, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&tc->bytes, 0, __ATOMIC_RELAXED);
}

static void cache_unlink(struct thread_cache *tc)
{
	if (tc->prev)
		tc->prev->next = tc->next;
	else
		S.caches = tc->next;
	if (tc->next)
		tc->next->prev = tc->prev;
}

/* The key's destructor: the exiting thread's slots go back to their chunks. */
static void thread_exit(void *arg)
{
	struct thread_cache *tc = arg;

	pthread_mutex_lock(&S.lock);
	cache_drain(tc);
	cache_unlink(tc);
	pthread_mutex_unlock(&S.lock);
	my_cache = NULL;
	free(tc);
}

int secret__cache_init(void)
{
	int ret;

	if (S.cache_key_done)
		return 0;
	ret = -pthread_key_create(&S.cache_key, thread_exit);
	S.cache_key_done = !ret;
	return ret;
}

/* This thread's cache, made on first use; NULL if memory is short. */
static struct thread_cache *cache_get(void)
{
	struct thread_cache *tc = my_cache;

	if (tc)
		return tc;
	tc = mmkit__calloc(1, sizeof(*tc));
	if (!tc)
		return NULL;
	/* Without the destructor the slots would be lost at thread exit: no cache then. */
	if (pthread_setspecific(S.cache_key, tc)) {
		free(tc);
		return NULL;
	}
	pthread_mutex_lock(&S.lock);
	tc->next = S.caches;
	if (S.caches)
		S.caches->prev = tc;
	S.caches = tc;
	pthread_mutex_unlock(&S.lock);
	my_cache = tc;
	return tc;
}

/*
 * Puts fresh slots at the front of @tc's ring of class @k, which holds
 * only its quarantine: 0, -errno, or 1 for the locked path.  A new chunk
 * is mapped while the lock limit leaves room for it, or for an empty ring
 * at any cost; when none can be had, the quarantine gives way (its oldest
 * slot is handed out) rather than fail, and the next S.cls[k].quarantine
 * allocations do not try again: they would take the lock for nothing.
 */
static int cache_refill(struct thread_cache *tc, unsigned int k, secret_reclaim_fn *reclaim)
{
	struct cached_slot got[CACHE_MAX];
	enum secret_backend before;
	unsigned int i, n = 0;
	int ret;

	pthread_mutex_lock(&S.lock);
	before = S.backend;
	ret = secret__pool_take(k, &tc->chunk[k], got, S.cls[k].cache_max, &n, reclaim,
				!tc->n[k] || secret__lock_roomy(S.chunk_len));
	/* The backend changed under it: the locked path says what that means. */
	if (ret == -ENOSYS && S.backend != before)
		ret = 1;
	pthread_mutex_unlock(&S.lock);
	/* The patterns are computed outside the lock, and only once per slot taken. */
	tc->head[k] -= n;
	for (i = 0; i < n; i++) {
		got[i].canary = secret__canary_pattern(got[i].chunk->data +
						       (size_t)got[i].idx * got[i].chunk->slot);
		*ring_at(tc, k, i) = got[i];
	}
	tc->n[k] += n;
	if (ret < 0 && tc->n[k]) {
		tc->wait[k] = S.cls[k].quarantine;
		return 0;
	}
	return ret;
}

int secret__cache_alloc(void **p, size_t size, unsigned int flags, secret_reclaim_fn *reclaim)
{
	enum secret_backend backend = __atomic_load_n(&S.backend, __ATOMIC_RELAXED);
	unsigned int k = secret__class_of(size);
	struct thread_cache *tc;
	struct cached_slot *s;
	char *slot;
	int ret;

	/* The locked path refuses what the backend does not allow, or announces the fallback. */
	if (backend != BACKEND_SECRETMEM &&
	    (backend != BACKEND_MLOCK || (flags & MMKIT_SECRET_REQUIRE_SECRETMEM) ||
	     (!(flags & MMKIT_SECRET_QUIET) && !__atomic_load_n(&S.noticed, __ATOMIC_RELAXED))))
		return 1;
	tc = cache_get();
	if (!tc)
		return 1;
	if (tc->n[k] <= S.cls[k].quarantine) {
		if (tc->n[k] && tc->wait[k]) {
			tc->wait[k]--;
		} else {
			ret = cache_refill(tc, k, reclaim);
			if (ret)
				return ret;
		}
	}
	s = ring_at(tc, k, 0);
	tc->head[k]++;
	tc->n[k]--;
	slot = s->chunk->data + (size_t)s->idx * s->chunk->slot;
	secret__slot_unused(slot, s->chunk->slot);
	s->chunk->sizes[s->idx] = (uint16_t)size;
	secret__pattern_fill((unsigned char *)slot + size, s->chunk->slot - size, s->canary);
	relaxed_add(&tc->allocs, 1);
	relaxed_add(&tc->bytes, size);
	*p = slot;
	return 0;
}

/*
 * Gives the oldest of a full ring back to the chunks: half the cache's
 * size, each freed before all the quarantine.
 */
static void cache_spill(struct thread_cache *tc, unsigned int k)
{
	pthread_mutex_lock(&S.lock);
	ring_give(tc, k, S.cls[k].cache_max / 2);
	pthread_mutex_unlock(&S.lock);
}

int secret__cache_free(void *p)
{
	struct chunk *c = secret__chunk_of(p);
	struct thread_cache *tc;
	struct cached_slot *s;
	unsigned int idx;
	uint64_t canary;
	size_t size;

	/* Dead chunks of a fork child, and anything not pooled, are for the locked path. */
	if (!c || c->state != CHUNK_ACTIVE)
		return 1;
	tc = cache_get();
	if (!tc)
		return 1;
	idx = secret__slot_check(c, p, &size);
	canary = secret__canary_pattern(p);
	if (!secret__pattern_ok((unsigned char *)p + size, c->slot - size, canary))
		secret__die(p, "damaged canary: something wrote past the end of this secret");
	explicit_bzero(p, c->slot);
	c->sizes[idx] = SLOT_FREED;
	relaxed_add(&tc->allocs, -1ULL);
	relaxed_add(&tc->bytes, -(unsigned long long)size);
	if (tc->n[c->cls] == S.cls[c->cls].cache_max + S.cls[c->cls].quarantine)
		cache_spill(tc, c->cls);
	s = ring_at(tc, c->cls, tc->n[c->cls]++);
	s->chunk = c;
	s->idx = idx;
	s->freed = 1;
	s->canary = canary;
	return 0;
}

void secret__cache_counts(unsigned long long *allocs, unsigned long long *bytes)
{
	struct thread_cache *tc;

	*allocs = *bytes = 0;
	for (tc = S.caches; tc; tc = tc->next) {
		*allocs += __atomic_load_n(&tc->allocs, __ATOMIC_RELAXED);
		*bytes += __atomic_load_n(&tc->bytes, __ATOMIC_RELAXED);
	}
}

void secret__cache_forget(void)
{
	struct thread_cache *tc, *next;

	for (tc = S.caches; tc; tc = next) {
		next = tc->next;
		if (tc != my_cache)
			free(tc);
	}
	S.caches = my_cache;
	if (!my_cache)
		return;
	/* Its slots were in chunks the child no longer has. */
	memset(my_cache, 0, sizeof(*my_cache));
}
