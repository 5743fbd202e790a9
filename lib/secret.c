// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Secret memory: a pooled memfd_secret(2) allocator with guard pages,
 * canaries and an announced fallback.
 *
 * One memfd_secret region per secret is slow (each mapping removes pages
 * from the kernel's direct map and flushes the kernel TLB, each unmap puts
 * them back) and costs a VMA each, so small secrets share guarded chunks
 * (secret-pool.c); only secrets and canaries take locked pages, which is
 * what lets 100,000 32-byte secrets fit the default 8 MiB RLIMIT_MEMLOCK.
 * Big secrets get pages of their own (secret-span.c).  Each thread
 * allocates and frees pooled secrets through a cache of its own, without
 * the lock (secret-cache.c).
 *
 * After fork() the child starts with an empty allocator: the parent's
 * secrets become PROT_NONE in the child (both backends), so touching them
 * faults; freeing them there is allowed and does nothing.  A child made
 * without the atfork handlers (a raw clone) has holes there instead
 * (MADV_DONTFORK) or, with the fallback, zero pages (MADV_WIPEONFORK).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "names.h"
#include "secret.h"

static void atfork_prepare(void);
static void atfork_parent(void);
static void atfork_child(void);

MMKIT__ATFORK_HANDLERS(secret_fork, atfork_prepare, atfork_parent, atfork_child)

static void init(void)
{
	S.page = sys_page_size();
	secret__pool_init();
}

/*
 * The parts of the set-up that can fail are tried again at the next call
 * until they succeed: a passing failure (getrandom, memory for the fork
 * handlers, descriptors for the first memfd_secret) must not leave the
 * allocator unusable, or on the fallback, for the process.
 */
static int ensure_init(void)
{
	int ret = 0;

	/* Done implies init() ran: every call after the first stops here. */
	if (__atomic_load_n(&S.init_done, __ATOMIC_ACQUIRE))
		return 0;
	pthread_once(&S.once, init);
	/* Not under S.lock, which the handlers take (util.c says why). */
	ret = mmkit__atfork_register(&S.atfork_state, secret_fork_prepare, secret_fork_parent,
				     secret_fork_child);
	if (ret)
		return ret;
	pthread_mutex_lock(&S.lock);
	if (!S.init_done) {
		if (!S.backend_done) {
			ret = secret__choose_backend();
			S.backend_done = !ret;
		}
		if (!ret)
			ret = secret__cache_init();
		if (!ret)
			ret = sys_getrandom(&S.canary_key, sizeof(S.canary_key));
		if (!ret)
			__atomic_store_n(&S.init_done, 1, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&S.lock);
	return ret;
}

static void atfork_prepare(void)
{
	pthread_mutex_lock(&S.lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&S.lock);
}

/*
 * The child has no locked or secret pages of its own (mlock is not
 * inherited, memfd_secret mappings were not copied): it forgets them all,
 * leaving PROT_NONE where the parent's secrets are.
 */
static void atfork_child(void)
{
	secret__cache_forget();
	secret__pool_forget();
	secret__spans_forget();
	S.allocs_live = S.bytes_live = 0;
	S.pages_mapped = S.bytes_locked = 0;
	pthread_mutex_unlock(&S.lock);
}

/*
 * What a mapping over the lock limit may take back: the empty chunks and
 * the freed spans kept for reuse; when they are gone, the chunks only the
 * exited threads' quarantine keeps (the call after one that released
 * nothing).  Handed down to secret-mem.c, which does the mapping, so that
 * calls go one way.
 */
static unsigned int reclaim_idle(void)
{
	unsigned int n = secret__pool_trim(0) + secret__span_trim();

	return n ? n : secret__pool_trim(1);
}

static int backend_allowed(unsigned int flags)
{
	static const char notice[] = "mmkit: secret memory: ";
	static const char hint[] = " (MMKIT_SECRET_REQUIRE=1 refuses this)\n";

	if (S.backend == BACKEND_NONE ||
	    (S.backend == BACKEND_MLOCK && (flags & MMKIT_SECRET_REQUIRE_SECRETMEM))) {
		snprintf(S.last_error, sizeof(S.last_error), "memfd_secret required: %.200s", S.reason);
		mmkit__error_detail(-ENOSYS, "%s", S.last_error);
		return -ENOSYS;
	}
	if (S.backend == BACKEND_MLOCK && !(flags & MMKIT_SECRET_QUIET) && !S.noticed) {
		/* The threads' caches read it without the lock. */
		__atomic_store_n(&S.noticed, 1, __ATOMIC_RELAXED);
		sys_write(2, notice, sizeof(notice) - 1);
		sys_write(2, S.reason, strlen(S.reason));
		sys_write(2, hint, sizeof(hint) - 1);
	}
	return 0;
}

static int secret_alloc(void **p, size_t size, unsigned int flags)
{
	const unsigned int own_pages = MMKIT_SECRET_PAGES | MMKIT_SECRET_END_AT_GUARD;
	enum secret_backend before;
	int pooled, ret;

	if (!p || !size ||
	    (flags & ~(MMKIT_SECRET_REQUIRE_SECRETMEM | MMKIT_SECRET_QUIET | own_pages))) {
		mmkit__error_detail(-EINVAL, "%s", !p ? "p is NULL" : !size ? "size 0" : "unknown flags");
		return -EINVAL;
	}
	ret = ensure_init();
	if (ret)
		return ret;
	/* Beyond this, the guard pages and rounding could not be represented. */
	if (size > PTRDIFF_MAX - 4 * S.page) {
		mmkit__error_detail(-ENOMEM, "size %zu: no mapping can be that large", size);
		return -ENOMEM;
	}
	pooled = size <= MMKIT_SECRET_POOL_MAX && !(flags & own_pages);
	if (pooled) {
		ret = secret__cache_alloc(p, size, flags, reclaim_idle);
		if (ret <= 0)
			return ret;
	}
	pthread_mutex_lock(&S.lock);
	do {
		before = S.backend;
		ret = backend_allowed(flags);
		if (ret)
			break;
		if (pooled)
			ret = secret__pool_alloc(p, size, reclaim_idle);
		else
			ret = secret__span_alloc(p, size, flags & MMKIT_SECRET_END_AT_GUARD,
						 !!(flags & own_pages), reclaim_idle);
	} while (ret == -ENOSYS && S.backend != before);
	if (!ret) {
		S.allocs_live++;
		S.bytes_live += size;
	}
	pthread_mutex_unlock(&S.lock);
	return ret;
}

MMKIT_EXPORT int mmkit_secret_alloc(void **p, size_t size, unsigned int flags)
{
	return MMKIT__CALL(secret_alloc(p, size, flags));
}

/*
 * For a caller whose every call costs more than an allocation (a binding
 * that crosses into C for each one): many secrets in one call.  It stops
 * at the first failure and keeps what it got, so that a caller near
 * RLIMIT_MEMLOCK still gets the secrets that fit; *@got tells how many.
 */
static int secret_alloc_many(void **p, size_t n, size_t size, unsigned int flags, size_t *got)
{
	int ret = 0;

	if (!p || !n || n > INT_MAX) {
		mmkit__error_detail(-EINVAL, "%s", !p ? "p is NULL" : !n ? "n is 0" : "n is above INT_MAX");
		return -EINVAL;
	}
	for (*got = 0; *got < n; ++*got) {
		ret = secret_alloc(&p[*got], size, flags);
		if (ret)
			break;
	}
	memset(p + *got, 0, (n - *got) * sizeof(*p));
	return ret;
}

MMKIT_EXPORT int mmkit_secret_alloc_many(void **p, size_t n, size_t size, unsigned int flags)
{
	size_t got = 0;
	int ret;

	/* The reason of a short count's failure stays the thread's last error. */
	mmkit__error_begin();
	ret = mmkit__error_end(__func__, secret_alloc_many(p, n, size, flags, &got));
	return got ? (int)got : ret;
}

/*
 * The pages of a span may carry registry names (mmkit_name() of an mlock
 * secret, where the kernel does not name VMAs): they go before the span
 * is cached or unmapped, or the next secret there, or whatever is mapped
 * there next, would show them.  Outside S.lock: a fork takes the
 * registry's lock before S.lock when the registry began last.  The
 * caller owns @p, so the span is still there when it frees it.
 */
static void span_names_forget(void *p)
{
	struct span *sp;
	uintptr_t start = 0;
	size_t len = 0;

	if (!mmkit__registry_named())
		return;
	pthread_mutex_lock(&S.lock);
	sp = secret__chunk_of(p) ? NULL : secret__span_find(p);
	if (sp) {
		start = (uintptr_t)sp->base + S.page;
		len = sp->pages * S.page;
	}
	pthread_mutex_unlock(&S.lock);
	/* Best effort, as a free cannot fail: without memory the names stay. */
	if (len)
		mmkit__registry_moved(start, len, 0, 0);
}

MMKIT_EXPORT void mmkit_secret_free(void *p)
{
	struct chunk *c;
	struct span *sp;

	if (!p)
		return;
	if (ensure_init())
		secret__die(p, "invalid pointer: the allocator never started");
	if (!secret__cache_free(p))
		return;
	span_names_forget(p);
	pthread_mutex_lock(&S.lock);
	c = secret__chunk_of(p);
	if (c) {
		secret__pool_free(c, p);
	} else {
		sp = secret__span_find(p);
		if (sp)
			secret__span_free(sp);
		else if (secret__span_cached(p))
			secret__die(p, "double free: this secret was already freed");
		else
			secret__die(p, "invalid pointer: not a live secret (never allocated here, or freed long ago)");
	}
	pthread_mutex_unlock(&S.lock);
}

static int secret_protect(void *p, int access)
{
	static const int prot[] = {
		[MMKIT_SECRET_NOACCESS] = PROT_NONE,
		[MMKIT_SECRET_READONLY] = PROT_READ,
		[MMKIT_SECRET_READWRITE] = PROT_READ | PROT_WRITE,
	};
	struct span *sp;
	int ret;

	if (!p || access < MMKIT_SECRET_NOACCESS || access > MMKIT_SECRET_READWRITE)
		return -EINVAL;
	ret = ensure_init();
	if (ret)
		return ret;
	pthread_mutex_lock(&S.lock);
	sp = secret__span_find(p);
	if (!sp || sp->dead) {
		mmkit__error_detail(-EINVAL,
				    "%p is not a live secret with pages of its own (MMKIT_SECRET_PAGES)", p);
		ret = -EINVAL;
	} else {
		ret = sys_mprotect(sp->base + S.page, sp->pages * S.page, prot[access]);
		if (!ret)
			sp->access = access;
	}
	pthread_mutex_unlock(&S.lock);
	return ret;
}

MMKIT_EXPORT int mmkit_secret_protect(void *p, int access)
{
	return MMKIT__CALL(secret_protect(p, access));
}

static int secret_size(const void *p, size_t *size)
{
	struct chunk *c;
	struct span *sp;
	size_t n = 0;
	int ret;

	if (!p || !size)
		return -EINVAL;
	ret = ensure_init();
	if (ret)
		return ret;
	/*
	 * A pooled secret in an active chunk is asked about as the threads'
	 * caches free it, without the lock: the OpenSSL shim asks before
	 * every free, and the lock serialised its threads there.
	 */
	c = secret__chunk_of(p);
	if (c && c->state == CHUNK_ACTIVE) {
		n = secret__pool_size(c, p);
		if (!n)
			return -EINVAL;
		*size = n;
		return 0;
	}
	/* The chunk a pointer lies in never changes: only its state, under the lock. */
	pthread_mutex_lock(&S.lock);
	if (c) {
		n = secret__pool_size(c, p);
		/* In the pool's memory: freed, or not the start of a secret. */
		ret = n ? 0 : -EINVAL;
	} else {
		sp = secret__span_find(p);
		if (sp)
			n = sp->size;
		ret = sp ? 0 : secret__span_cached(p) ? -EINVAL : -ENOENT;
	}
	pthread_mutex_unlock(&S.lock);
	if (!ret)
		*size = n;
	return ret;
}

MMKIT_EXPORT int mmkit_secret_size(const void *p, size_t *size)
{
	return MMKIT__CALL(secret_size(p, size));
}

static int secret_reserve(size_t bytes)
{
	enum secret_backend before;
	size_t want, off, kept;
	struct chunk *c;
	int ret;

	ret = ensure_init();
	if (ret)
		return ret;
	if (bytes > SIZE_MAX - S.page) {
		mmkit__error_detail(-ENOMEM, "%zu bytes: no mapping can be that large", bytes);
		return -ENOMEM;
	}
	want = (bytes + S.page - 1) & ~(S.page - 1);
	pthread_mutex_lock(&S.lock);
	/* Raised first: a mapping over the lock limit must not trim what was just reserved. */
	kept = S.keep;
	if (want > S.keep)
		S.keep = want;
	ret = backend_allowed(MMKIT_SECRET_QUIET);
	if (!ret)
		ret = secret__backable(want);
	while (!ret && S.cached_bytes < want) {
		before = S.backend;
		ret = secret__chunk_map(&c, reclaim_idle);
		if (ret == -ENOSYS && S.backend != before) {
			ret = backend_allowed(MMKIT_SECRET_QUIET);
			continue;
		}
		/* Fault every page in now, so no allocation pays for it. */
		for (off = 0; !ret && off < c->len; off += S.page)
			*(volatile char *)(c->data + off) = 0;
	}
	if (ret)
		S.keep = kept;
	pthread_mutex_unlock(&S.lock);
	return ret;
}

MMKIT_EXPORT int mmkit_secret_reserve(size_t bytes)
{
	return MMKIT__CALL(secret_reserve(bytes));
}

static int secret_stats(struct mmkit_secret_stats *st)
{
	static const char *const names[] = {
		[BACKEND_SECRETMEM] = "memfd_secret",
		[BACKEND_MLOCK] = "mlock",
		[BACKEND_NONE] = "none",
	};
	unsigned long long thread_allocs, thread_bytes;
	struct mmkit_memlock m;
	int ret;

	if (!st)
		return -EINVAL;
	ret = ensure_init();
	if (!ret)
		ret = mmkit_memlock_check(NULL, 0, &m);
	if (ret)
		return ret;
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&S.lock);
	snprintf(st->backend, sizeof(st->backend), "%s", names[S.backend]);
	snprintf(st->reason, sizeof(st->reason), "%s", S.reason);
	snprintf(st->last_error, sizeof(st->last_error), "%s", S.last_error);
	secret__cache_counts(&thread_allocs, &thread_bytes);
	st->allocs_live = S.allocs_live + thread_allocs;
	st->bytes_live = S.bytes_live + thread_bytes;
	st->pages_mapped = S.pages_mapped;
	st->pages_cached = secret__pool_empty_pages() + S.span_cache_pages;
	st->bytes_locked = S.bytes_locked;
	st->enomem = S.enomem;
	st->fallback = S.backend == BACKEND_MLOCK;
	pthread_mutex_unlock(&S.lock);
	st->memlock_limit = m.limit;
	st->memlock_exempt = m.exempt;
	return 0;
}

MMKIT_EXPORT int mmkit_secret_stats(struct mmkit_secret_stats *st)
{
	return MMKIT__CALL(secret_stats(st));
}

int mmkit__probe_secret(struct mmkit_feature *f)
{
	struct mmkit_memlock m = { 0 };
	enum secret_backend backend;
	char reason[sizeof(S.reason)];
	int ret = ensure_init();

	if (ret) {
		mmkit__feature_set(f, MMKIT_STATUS_UNSUPPORTED, "none", "secret memory: %s",
				   secret__errname(-ret));
		return 0;
	}
	mmkit_memlock_check(NULL, 0, &m);
	/* Another thread's allocation may fall back and rewrite both meanwhile. */
	pthread_mutex_lock(&S.lock);
	backend = S.backend;
	memcpy(reason, S.reason, sizeof(reason));
	pthread_mutex_unlock(&S.lock);
	if (backend == BACKEND_SECRETMEM && (m.exempt || m.limit == MMKIT_MEMLOCK_UNLIMITED))
		mmkit__feature_set(f, MMKIT_STATUS_NATIVE, "memfd_secret",
				   "%s; RLIMIT_MEMLOCK does not apply (%s)", reason,
				   m.exempt ? "CAP_IPC_LOCK" : "unlimited");
	else if (backend == BACKEND_SECRETMEM)
		mmkit__feature_set(f, MMKIT_STATUS_NATIVE, "memfd_secret",
				   "%s; RLIMIT_MEMLOCK %llu KiB bounds it", reason, m.limit / 1024);
	else if (backend == BACKEND_MLOCK)
		mmkit__feature_set(f, MMKIT_STATUS_FALLBACK, "mlock", "%s", reason);
	else
		mmkit__feature_set(f, MMKIT_STATUS_UNSUPPORTED, "none", "%s", reason);
	/* The reason gives RLIMIT_MEMLOCK, which may change: asked again. */
	return 0;
}
