// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Secret memory, misuse: one byte past a page-granular secret faults on
 * the guard page; a damaged canary, a double free and a pointer that was
 * never handed out abort at free with a message naming the problem; so do
 * slot numbers and sizes of the bookkeeping (ordinary memory) damaged by a
 * stray write.  Each misuse happens in a child whose stderr is kept; both
 * backends.
 */
#include <stdint.h>
#include <sys/syscall.h>

#include "harness.h"
#include "secret-backends.h"
#include "mmkit.h"
#include "secret.h"

struct outcome {
	int status;
	char message[1024];
};

static void *secret(size_t size, unsigned int flags)
{
	void *p = NULL;
	int ret = mmkit_secret_alloc(&p, size, flags | MMKIT_SECRET_QUIET);

	if (ret)
		T_FAIL("mmkit_secret_alloc(%zu, %#x): %s", size, flags, strerror(-ret));
	return p;
}

/* Runs @fn in a child with its stderr captured. */
static void misuse(void (*fn)(void *), void *arg, struct outcome *o)
{
	char path[] = "/tmp/mmkit-secret-abort-XXXXXX";
	int fd = mkstemp(path), saved = dup(2);
	ssize_t n;

	T_ASSERT(fd >= 0 && saved >= 0);
	unlink(path);
	fflush(NULL);
	dup2(fd, 2);
	o->status = t_in_child(fn, arg);
	dup2(saved, 2);
	close(saved);
	n = pread(fd, o->message, sizeof(o->message) - 1, 0);
	o->message[n > 0 ? n : 0] = '\0';
	close(fd);
}

static void expect_abort(void (*fn)(void *), void *arg, const char *words)
{
	struct outcome o;

	misuse(fn, arg, &o);
	if (!WIFSIGNALED(o.status) || WTERMSIG(o.status) != SIGABRT)
		T_FAIL("expected SIGABRT, got %s %d; stderr: %s", WIFEXITED(o.status) ? "exit" : "signal",
		       WIFEXITED(o.status) ? WEXITSTATUS(o.status) : WTERMSIG(o.status), o.message);
	if (!strstr(o.message, words))
		T_FAIL("the message does not say \"%s\": %s", words, o.message);
	printf("    %s", o.message);
}

static void expect_segv(void (*fn)(void *), void *arg)
{
	struct outcome o;

	misuse(fn, arg, &o);
	if (!WIFSIGNALED(o.status) || WTERMSIG(o.status) != SIGSEGV)
		T_FAIL("expected SIGSEGV, got %s %d; stderr: %s", WIFEXITED(o.status) ? "exit" : "signal",
		       WIFEXITED(o.status) ? WEXITSTATUS(o.status) : WTERMSIG(o.status), o.message);
}

static void past_end(void *arg)
{
	size_t size = (size_t)(uintptr_t)arg;
	unsigned char *p = secret(size, 0);

	/* The sanitizers' own SIGSEGV handler would turn the fault into an exit. */
	signal(SIGSEGV, SIG_DFL);
	memset(p, 1, size);
	p[size] = 1;
}

static void before_start(void *arg)
{
	unsigned char *p = secret((size_t)(uintptr_t)arg, 0);

	signal(SIGSEGV, SIG_DFL);
	p[-1] = 1;
}

static void test_guard_pages(void)
{
	T_CASE("one byte past (or before) a page-granular secret hits a guard page");
	expect_segv(past_end, (void *)(uintptr_t)4096);
	expect_segv(past_end, (void *)(uintptr_t)8192);
	expect_segv(past_end, (void *)(uintptr_t)(3 * 4096 + 16));
	expect_segv(before_start, (void *)(uintptr_t)4096);
}

static void overflow_then_free(void *arg)
{
	size_t size = (size_t)(uintptr_t)arg;
	unsigned char *p = secret(size, 0);

	memset(p, 1, size);
	/* The classic: a string terminator one byte too far. */
	p[size] = 0;
	mmkit_secret_free(p);
}

static void underflow_then_free(void *arg)
{
	unsigned char *p = secret((size_t)(uintptr_t)arg, 0);

	p[-1] = 0x42;
	mmkit_secret_free(p);
}

static void test_canaries(void)
{
	static const size_t sizes[] = { 1, 8, 32, 40, 100, 2040, 2041, 5000 };
	size_t i;

	T_CASE("a damaged canary aborts at free: pooled and page-granular secrets");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		expect_abort(overflow_then_free, (void *)(uintptr_t)sizes[i], "damaged canary");
	expect_abort(underflow_then_free, (void *)(uintptr_t)5000, "damaged canary");
}

static void double_free(void *arg)
{
	void *p = secret((size_t)(uintptr_t)arg, 0);
	void *keep = secret((size_t)(uintptr_t)arg, 0);

	mmkit_secret_free(p);
	mmkit_secret_free(p);
	mmkit_secret_free(keep);
}

static void free_stack(void *arg)
{
	char local[64];

	(void)arg;
	secret(32, 0);
	mmkit_secret_free(local);
}

static void free_inside(void *arg)
{
	char *p = secret((size_t)(uintptr_t)arg, 0);

	mmkit_secret_free(p + 16);
}

static void free_never_allocated(void *arg)
{
	char *p = secret(32, 0);

	(void)arg;
	/* The next slot of the same chunk was never handed out. */
	mmkit_secret_free(p + 48);
}

static void test_bad_frees(void)
{
	T_CASE("double free, foreign and interior pointers abort, naming the problem");
	expect_abort(double_free, (void *)(uintptr_t)32, "double free");
	expect_abort(double_free, (void *)(uintptr_t)6000, "double free");
	expect_abort(free_stack, NULL, "invalid pointer");
	expect_abort(free_inside, (void *)(uintptr_t)64, "invalid pointer");
	expect_abort(free_inside, (void *)(uintptr_t)6000, "invalid pointer");
	expect_abort(free_never_allocated, NULL, "invalid pointer");
}

/* A stray write makes the free-slot summary name a bitmap word past the chunk. */
static void bad_free_slot(void *arg)
{
	char *p = secret(32, 0), *q = NULL;
	struct chunk *c = secret__chunk_of(p);
	unsigned int i;

	(void)arg;
	T_ASSERT(c && c->nfree < c->nslots);
	c->free_sum[0] = 1ULL << 63;
	/* Past this thread's cached slots, the chunk's bitmap is searched again. */
	for (i = 0; i <= CACHE_MAX; i++)
		q = secret(32, 0);
	/* Would be handed out far past the chunk, its canary written there. */
	printf("handed out %p, chunk at %p\n", (void *)q, (void *)c->data);
}

/* A stray write makes a live slot's recorded size larger than the slot. */
static void bad_slot_size(void *arg)
{
	char *p = secret(32, 0);
	struct chunk *c = secret__chunk_of(p);

	(void)arg;
	T_ASSERT(c && c->sizes[0] == 32);
	c->sizes[0] = 0xffff;
	mmkit_secret_free(p);
}

/* A stray write makes a chunk count more free slots than it has. */
static void bad_slot_count(void *arg)
{
	char *p = secret(32, 0);
	struct chunk *c = secret__chunk_of(p);
	unsigned int i;

	(void)arg;
	c->nfree = 0x10000;
	/* Past this thread's cached slots, the chunk is asked for more. */
	for (i = 0; i <= CACHE_MAX; i++)
		secret(32, 0);
}

/* A stray write makes a span's recorded size reach past its pages. */
static void bad_span_size(void *arg)
{
	char *p = secret(6000, 0);
	struct span *sp = secret__span_find(p);

	(void)arg;
	T_ASSERT(sp && sp->size == 6000);
	sp->size = (size_t)1 << 40;
	mmkit_secret_free(p);
}

static void test_damaged_bookkeeping(void)
{
	T_CASE("slot numbers, counts and sizes read back are checked: damage aborts");
	expect_abort(bad_free_slot, NULL, "bookkeeping");
	expect_abort(bad_slot_size, NULL, "bookkeeping");
	expect_abort(bad_slot_count, NULL, "bookkeeping");
	expect_abort(bad_span_size, NULL, "bookkeeping");
}

static void suite(void)
{
	test_guard_pages();
	test_canaries();
	test_bad_frees();
	test_damaged_bookkeeping();
}

int main(void)
{
	t_secret_backends(suite);
	return T_EXIT_PASS;
}
