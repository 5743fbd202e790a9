// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Secret memory, pointers kept past their free (both backends):
 *   - a page secret's pages fault once it is freed, whether its span is
 *     kept for reuse (PROT_NONE) or unmapped: a read or a write of a stale
 *     pointer is a SIGSEGV, not zeros;
 *   - a pooled secret's slot is not handed out again at once: the next
 *     16 allocations of its size class in the thread (8 of 2 KiB) get
 *     other slots, so a stale pointer reads zeros, not the next secret;
 *     when the chunks have no other slot, the quarantine gives way (the
 *     allocation does not fail), under a one-page RLIMIT_MEMLOCK budget;
 *     also once the thread's chunk is full (a new chunk is mapped rather
 *     than the quarantine give way), and keeping it costs the fast path no
 *     lock (S.lock is counted);
 *   - a write through a stale pointer to a slot, anywhere in it, or to a
 *     freed span that is not a page secret, is found when it is handed out
 *     again (it must be all zero): the allocation aborts.
 * What cannot fault: a pooled slot lies among live ones on the same page,
 * a span other than a page secret's stays accessible while cached.
 */
#include <dlfcn.h>
#include <stdint.h>
#include <sys/resource.h>

#include "harness.h"
#include "secret-backends.h"
#include "mmkit.h"
#include "secret.h"

#define QUARANTINE	16

static size_t page;
static unsigned long s_lock_taken;

#ifdef MMKIT_STATIC
/* A static build has no RTLD_NEXT: glibc's own name for the call. */
int __pthread_mutex_lock(pthread_mutex_t *m);
#endif

/* Counts the library's S.lock acquisitions: the fast path must take none. */
int pthread_mutex_lock(pthread_mutex_t *m)
{
	static int (*real)(pthread_mutex_t *);

#ifdef MMKIT_STATIC
	real = __pthread_mutex_lock;
#else
	if (!real)
		real = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
#endif
	if (m == &S.lock)
		__atomic_add_fetch(&s_lock_taken, 1, __ATOMIC_RELAXED);
	return real(m);
}

static void *secret(size_t size, unsigned int flags)
{
	void *p = NULL;
	int ret = mmkit_secret_alloc(&p, size, MMKIT_SECRET_QUIET | flags);

	if (ret)
		T_FAIL("mmkit_secret_alloc(%zu, %#x): %s", size, flags, mmkit_last_error());
	return p;
}

struct stale {
	size_t size;
	int write;
};

/* Frees a page secret of st->size bytes, then reads or writes it. */
static void touch_freed(void *arg)
{
	const struct stale *st = arg;
	volatile unsigned char *p = secret(st->size, MMKIT_SECRET_PAGES);

	signal(SIGSEGV, SIG_DFL);
	p[0] = 0x5a;
	p[st->size - 1] = 0x5a;
	mmkit_secret_free((void *)p);
	if (st->write)
		p[st->size - 1] = 1;
	else
		(void)p[0];
}

static void page_secrets(void)
{
	/* One page (kept for reuse at free), five, and 1 MiB (unmapped at free). */
	static const size_t sizes[] = { 100, 5 * 4096 - 100, 1 << 20 };
	struct stale st;
	size_t i;
	int status;

	T_CASE("a freed page secret faults: read or write, kept for reuse or unmapped");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		for (st.write = 0; st.write < 2; st.write++) {
			st.size = sizes[i];
			status = t_in_child(touch_freed, &st);
			if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGSEGV)
				T_FAIL("a %s of a freed %zu-byte page secret did not fault (status %#x)",
				       st.write ? "write" : "read", st.size, status);
		}
	/* Reused, the pages are readable and writable again. */
	{
		unsigned char *p = secret(100, MMKIT_SECRET_PAGES), *q;

		mmkit_secret_free(p);
		q = secret(100, MMKIT_SECRET_PAGES);
		memset(q, 1, 100);
		t_expect_bytes(q, 100, 1);
		mmkit_secret_free(q);
	}
}

static void pooled_secrets(void)
{
	/* Above 1 KiB, a thread holds fewer slots: 16 KiB of each class. */
	static const struct { size_t size, held; } cases[] = {
		{ 32, QUARANTINE }, { 100, QUARANTINE }, { 1000, QUARANTINE }, { 2000, 8 },
	};
	unsigned char *p, *q[QUARANTINE];
	size_t i, j, size;

	T_CASE("a freed pooled slot is not handed out again by the next 16 allocations (8 of 2 KiB)");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		size = cases[i].size;
		p = secret(size, 0);
		memset(p, 0x77, size);
		mmkit_secret_free(p);
		for (j = 0; j < cases[i].held; j++) {
			q[j] = secret(size, 0);
			memset(q[j], 0x33, size);
			if (q[j] == p)
				T_FAIL("a freed %zu-byte secret's slot came back at allocation %zu of %zu",
				       size, j + 1, cases[i].held);
		}
		/* The stale pointer reads what free left: zeros, not a live secret. */
		t_expect_bytes(p, size, 0);
		for (j = 0; j < cases[i].held; j++)
			mmkit_secret_free(q[j]);
	}
}

/*
 * With 1 to 3000 32-byte secrets live (one chunk full and more), a freed
 * slot is not among the next 16 allocations, and 200 free and alloc pairs
 * take S.lock at most once per 16 allocations.
 */
static void full_chunk(void *arg)
{
	static unsigned char *live[3000];
	unsigned char *p, *q[QUARANTINE];
	unsigned long taken;
	size_t n, j;

	(void)arg;
	for (n = 0; n < sizeof(live) / sizeof(live[0]); n++) {
		live[n] = secret(32, 0);
		p = secret(32, 0);
		mmkit_secret_free(p);
		for (j = 0; j < QUARANTINE; j++) {
			q[j] = secret(32, 0);
			if (q[j] == p)
				T_FAIL("with %zu secrets live, a freed slot came back at allocation %zu",
				       n + 1, j + 1);
		}
		for (j = 0; j < QUARANTINE; j++)
			mmkit_secret_free(q[j]);
		taken = __atomic_load_n(&s_lock_taken, __ATOMIC_RELAXED);
		for (j = 0; j < 200; j++)
			mmkit_secret_free(secret(32, 0));
		taken = __atomic_load_n(&s_lock_taken, __ATOMIC_RELAXED) - taken;
		if (taken > 200 / QUARANTINE)
			T_FAIL("with %zu secrets live, 200 free and alloc pairs took the lock %lu times",
			       n + 1, taken);
	}
	for (n = 0; n < sizeof(live) / sizeof(live[0]); n++)
		mmkit_secret_free(live[n]);
}

struct stale_write {
	size_t size;		/* of the secret freed, then written */
	size_t at;		/* where, past its end for a slot */
	size_t next;		/* the size allocated until the memory comes back */
	unsigned int flags;
};

/* Writes through a stale pointer, then allocates until its memory comes back. */
static void write_freed(void *arg)
{
	const struct stale_write *w = arg;
	unsigned char *p = secret(w->size, w->flags), *q;
	void *pushed[QUARANTINE + 1];
	int i;

	mmkit_secret_free(p);
	p[w->at] = 1;
	/* Frees of the class after it push it out of the quarantine. */
	for (i = 0; i <= QUARANTINE; i++)
		pushed[i] = secret(w->next, w->flags);
	for (i = 0; i <= QUARANTINE; i++)
		mmkit_secret_free(pushed[i]);
	for (i = 0; i < 100000; i++) {
		q = secret(w->next, w->flags);
		if (q == p)
			T_FAIL("%zu bytes freed, written at %zu, came back for %zu bytes", w->size,
			       w->at, w->next);
	}
}

static void stale_write(void)
{
	/* In the secret; past the next owner's size (the same 48-byte slot); a span. */
	static const struct stale_write cases[] = {
		{ 32, 5, 32, 0 }, { 40, 36, 25, 0 }, { 4096, 4000, 4096, 0 },
		{ 3 * 4096, 2 * 4096 + 7, 3 * 4096, 0 },
	};
	size_t i;
	int status;

	T_CASE("a write into a freed slot, or span not of a page secret, aborts when handed out again");
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		status = t_in_child(write_freed, (void *)&cases[i]);
		if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGABRT)
			T_FAIL("a stale write at %zu of a freed %zu-byte secret went unnoticed (status %#x)",
			       cases[i].at, cases[i].size, status);
	}
}

/*
 * Under a limit with room for one page of 32-byte secrets, freeing and
 * allocating one again never fails: the quarantine gives way.
 */
static void tight(void *arg)
{
	struct rlimit rl;
	struct mmkit_memlock m;
	unsigned char *p[4096];
	size_t n, i;
	int ret = 0;

	(void)arg;
	t_become_nobody();
	T_EQ(mmkit_memlock_check(NULL, 0, &m), 0);
	rl.rlim_cur = rl.rlim_max = m.locked + page;
	T_EQ(setrlimit(RLIMIT_MEMLOCK, &rl), 0);
	for (n = 0; n < 4096 && !ret; n++)
		ret = mmkit_secret_alloc((void **)&p[n], 32, MMKIT_SECRET_QUIET);
	T_EQ(ret, -ENOMEM);
	n--;
	T_ASSERT(n > 0);
	for (i = 0; i < 10 * QUARANTINE; i++) {
		mmkit_secret_free(p[i % n]);
		ret = mmkit_secret_alloc((void **)&p[i % n], 32, MMKIT_SECRET_QUIET);
		if (ret)
			T_FAIL("with %zu secrets live at the limit, free then alloc failed: %s", n,
			       mmkit_last_error());
	}
	for (i = 0; i < n; i++)
		mmkit_secret_free(p[i]);
}

static void suite(void)
{
	page_secrets();
	pooled_secrets();
	T_CASE("a full chunk: a freed slot waits all the same, and the fast path takes no lock");
	T_CHILD_OK(t_in_child(full_chunk, NULL));
	stale_write();
	if (t_is_root()) {
		T_CASE("at the lock limit, a freed slot is reused rather than fail");
		T_CHILD_OK(t_in_child(tight, NULL));
	}
}

int main(void)
{
	page = (size_t)sysconf(_SC_PAGESIZE);
	t_secret_backends(suite);
	return T_EXIT_PASS;
}
