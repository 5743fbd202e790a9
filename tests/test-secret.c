// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Secret memory, the API: round trip, alignment, sizes 1 B .. 1 MiB, bad
 * sizes and flags, wiping at free, protection of page-granular secrets,
 * reserve, stats, the fallback notice and the REQUIRE switches, threads.
 * Every case runs on both backends: each in its own child, which picks the
 * backend from MMKIT_SECRET_BACKEND before its first call.  A seccomp
 * filter stands in for a kernel that refuses memfd_secret, at start or
 * only later.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>

#include "harness.h"
#include "secret-backends.h"
#include "feature.h"
#include "mmkit.h"

#define KIB	1024UL
#define MIB	(1024UL * 1024)


static void *secret(size_t size, unsigned int flags)
{
	void *p = NULL;
	int ret = mmkit_secret_alloc(&p, size, flags);

	if (ret)
		T_FAIL("mmkit_secret_alloc(%zu, %#x): %s", size, flags, strerror(-ret));
	return p;
}

/* Must come first: the notice is printed once per process. */
static void test_notice(void)
{
	char path[] = "/tmp/mmkit-secret-notice-XXXXXX";
	char buf[1024] = "";
	int fd = mkstemp(path), saved = dup(2);
	void *a, *b, *c;
	ssize_t n;

	T_CASE("the fallback notice: once, on stderr, not with MMKIT_SECRET_QUIET");
	T_ASSERT(fd >= 0 && saved >= 0);
	unlink(path);
	dup2(fd, 2);
	a = secret(16, MMKIT_SECRET_QUIET);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	T_EQ(n, 0);
	b = secret(16, 0);
	c = secret(16, 0);
	dup2(saved, 2);
	n = pread(fd, buf, sizeof(buf) - 1, 0);
	T_ASSERT(n >= 0);
	buf[n] = '\0';
	if (!strcmp(backend, "mlock")) {
		T_ASSERT(strstr(buf, "mmkit: secret memory: MMKIT_SECRET_BACKEND=mlock"));
		T_ASSERT(strstr(buf, "mlock+MADV_DONTDUMP+MADV_WIPEONFORK"));
		T_ASSERT(!strstr(strstr(buf, "mmkit: secret") + 1, "mmkit: secret"));
	} else {
		T_EQ(n, 0);
	}
	mmkit_secret_free(a);
	mmkit_secret_free(b);
	mmkit_secret_free(c);
	close(fd);
	close(saved);
}

static void test_round_trip(void)
{
	unsigned char *p = secret(32, 0);
	int i;

	T_CASE("round trip: 32 bytes written and read back, zeroed when new");
	t_expect_bytes(p, 32, 0);
	for (i = 0; i < 32; i++)
		p[i] = (unsigned char)(i * 7 + 1);
	for (i = 0; i < 32; i++)
		T_EQ(p[i], (unsigned char)(i * 7 + 1));
	mmkit_secret_free(p);
}

static void test_alignment(void)
{
	static const size_t sizes[] = { 1, 7, 8, 9, 15, 16, 17, 31, 33, 100, 2040, 2041, 3000, 4095, 4097, 12345 };
	void *p[sizeof(sizes) / sizeof(sizes[0])];
	size_t i;

	T_CASE("alignment: every secret 16-byte aligned, pooled or paged");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		p[i] = secret(sizes[i], 0);
		T_EQ((uintptr_t)p[i] % 16, 0);
	}
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		void *q = secret(sizes[i], MMKIT_SECRET_PAGES);

		T_EQ((uintptr_t)q % 16, 0);
		mmkit_secret_free(q);
		mmkit_secret_free(p[i]);
	}
}

static void test_sizes(void)
{
	unsigned char *p[64];
	size_t size[64], n = 0, i, s;

	T_CASE("sizes 1 B .. 1 MiB: all live at once, zeroed, filled, intact");
	for (s = 1; s <= MIB; s *= 2) {
		size_t v[3] = { s - 1, s, s + 1 }, j;

		for (j = 0; j < 3; j++) {
			if (!v[j] || v[j] > MIB)
				continue;
			size[n] = v[j];
			p[n] = secret(v[j], 0);
			t_expect_bytes(p[n], size[n], 0);
			memset(p[n], (int)(n + 1), size[n]);
			n++;
		}
	}
	for (i = 0; i < n; i++)
		t_expect_bytes(p[i], size[i], (unsigned char)(i + 1));
	for (i = 0; i < n; i++)
		mmkit_secret_free(p[i]);
}

static void test_bad_input(void)
{
	static const size_t huge[] = {
		SIZE_MAX, SIZE_MAX - 4095, (size_t)PTRDIFF_MAX + 1, (size_t)PTRDIFF_MAX,
		(size_t)1 << 62, (size_t)1 << 50,
	};
	void *p = (void *)&p;
	size_t i;

	T_CASE("size 0, NULL, unknown flags: -EINVAL; sizes too big to map: -ENOMEM");
	T_EQ(mmkit_secret_alloc(&p, 0, 0), -EINVAL);
	T_EQ(mmkit_secret_alloc(NULL, 32, 0), -EINVAL);
	T_EQ(mmkit_secret_alloc(&p, 32, 0x100), -EINVAL);
	for (i = 0; i < sizeof(huge) / sizeof(huge[0]); i++) {
		T_EQ(mmkit_secret_alloc(&p, huge[i], 0), -ENOMEM);
		T_EQ(mmkit_secret_alloc(&p, huge[i], MMKIT_SECRET_PAGES), -ENOMEM);
	}
	T_ASSERT(p == (void *)&p);
	mmkit_secret_free(NULL);
	T_EQ(mmkit_secret_stats(NULL), -EINVAL);
	T_EQ(mmkit_secret_protect(NULL, MMKIT_SECRET_READONLY), -EINVAL);
}

static void size_in_child(void *arg)
{
	size_t n = 0;

	/* The parent's secret is PROT_NONE here, but still this allocator's. */
	if (mmkit_secret_size(arg, &n) || n != 100)
		T_FAIL("inherited secret: size %zu", n);
}

static void test_size(void)
{
	static const size_t sizes[] = { 1, 100, 2040, 2041, 70000 };
	void *p[5], *paged;
	size_t i, n = 0;
	int local;

	T_CASE("mmkit_secret_size: the size asked for; -EINVAL freed or inside; -ENOENT not ours");
	for (i = 0; i < 5; i++)
		p[i] = secret(sizes[i], 0);
	paged = secret(24, MMKIT_SECRET_PAGES);
	for (i = 0; i < 5; i++) {
		T_EQ(mmkit_secret_size(p[i], &n), 0);
		T_EQ(n, sizes[i]);
		/* Inside a pooled secret: the pool's memory; inside a span: not recognised. */
		T_EQ(mmkit_secret_size((char *)p[i] + 16, &n), sizes[i] <= MMKIT_SECRET_POOL_MAX ? -EINVAL : -ENOENT);
	}
	T_EQ(mmkit_secret_size(paged, &n), 0);
	T_EQ(n, 24);
	T_EQ(mmkit_secret_size(&local, &n), -ENOENT);
	T_EQ(mmkit_secret_size(NULL, &n), -EINVAL);
	T_EQ(mmkit_secret_size(p[0], NULL), -EINVAL);
	T_CHILD_OK(t_in_child(size_in_child, p[1]));
	for (i = 0; i < 5; i++)
		mmkit_secret_free(p[i]);
	mmkit_secret_free(paged);
	/* Freed: still the allocator's memory (pooled, or a cached span). */
	for (i = 0; i < 5; i++)
		T_EQ(mmkit_secret_size(p[i], &n), -EINVAL);
	T_EQ(mmkit_secret_size(paged, &n), -EINVAL);
}

static void test_wiped(void)
{
	unsigned char *p, *q;

	T_CASE("freed memory is zero: read through the pool before reuse");
	/* A second chunk-mate keeps the chunk (and so the freed slot) mapped. */
	q = secret(32, 0);
	p = secret(32, 0);
	memset(p, 0xff, 32);
	mmkit_secret_free(p);
	/* The slot is 48 bytes: the secret and its canary. */
	t_expect_bytes(p, 48, 0);
	mmkit_secret_free(q);

	/*
	 * Freed spans are kept for reuse, oldest first, PROT_NONE meanwhile
	 * (test-secret-stale); test-secret-free reads one back.
	 */
	p = secret(5000, 0);
	memset(p, 0xee, 5000);
	mmkit_secret_free(p);
	p = secret(5000, 0);
	t_expect_bytes(p, 5000, 0);
	mmkit_secret_free(p);
}

static void write_readonly(void *arg)
{
	unsigned char *p = secret(64, MMKIT_SECRET_PAGES);

	signal(SIGSEGV, SIG_DFL);
	memset(p, 0x5a, 64);
	T_EQ(mmkit_secret_protect(p, MMKIT_SECRET_READONLY), 0);
	t_expect_bytes(p, 64, 0x5a);
	if (arg)
		*(volatile unsigned char *)p = 1;
	T_EQ(mmkit_secret_protect(p, MMKIT_SECRET_NOACCESS), 0);
	if (!arg)
		(void)*(volatile unsigned char *)p;
}

static void test_protect(void)
{
	unsigned char *p, *pooled;
	int status;

	T_CASE("page-granular secrets: read-only and no-access fault, read-write restores");
	status = t_in_child(write_readonly, (void *)1);
	T_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
	status = t_in_child(write_readonly, NULL);
	T_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);

	p = secret(100, MMKIT_SECRET_PAGES);
	pooled = secret(100, 0);
	memset(p, 1, 100);
	T_EQ(mmkit_secret_protect(p, MMKIT_SECRET_NOACCESS), 0);
	T_EQ(mmkit_secret_protect(p, MMKIT_SECRET_READWRITE), 0);
	t_expect_bytes(p, 100, 1);
	T_EQ(mmkit_secret_protect(p, 3), -EINVAL);
	T_EQ(mmkit_secret_protect(p + 1, MMKIT_SECRET_READONLY), -EINVAL);
	T_EQ(mmkit_secret_protect(pooled, MMKIT_SECRET_READONLY), -EINVAL);
	/* Freeing a protected secret unprotects, checks and wipes it. */
	T_EQ(mmkit_secret_protect(p, MMKIT_SECRET_NOACCESS), 0);
	mmkit_secret_free(p);
	mmkit_secret_free(pooled);
}

/* A write at *arg, then a free: of the secret arg points into (a span of one page). */
static void poke_end_at_guard(void *arg)
{
	ptrdiff_t at = (ptrdiff_t)(intptr_t)arg;
	unsigned char *p = secret(100, MMKIT_SECRET_END_AT_GUARD);

	signal(SIGSEGV, SIG_DFL);
	p[at] = 0;
	mmkit_secret_free(p);
}

static void test_end_at_guard(void)
{
	static const size_t sizes[] = { 1, 15, 17, 100, 4079, 4080, 4081, 4096, 70001 };
	size_t page = (size_t)sysconf(_SC_PAGESIZE), i, n;
	unsigned char *p;
	int status;

	T_CASE("MMKIT_SECRET_END_AT_GUARD: the secret ends at the guard page, 16 canary bytes before");
	for (i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		/* A pooled secret of the size first: this thread's cache has slots then. */
		mmkit_secret_free(secret(sizes[i], 0));
		p = secret(sizes[i], MMKIT_SECRET_END_AT_GUARD);
		T_EQ((uintptr_t)(p + sizes[i]) % page, 0);
		t_expect_bytes(p, sizes[i], 0);
		memset(p, 0x77, sizes[i]);
		T_EQ(mmkit_secret_size(p, &n), 0);
		T_EQ(n, sizes[i]);
		/* Page-granular without MMKIT_SECRET_PAGES. */
		T_EQ(mmkit_secret_protect(p, MMKIT_SECRET_READONLY), 0);
		t_expect_bytes(p, sizes[i], 0x77);
		mmkit_secret_free(p);
	}
	T_EQ(mmkit_secret_alloc((void **)&p, 0, MMKIT_SECRET_END_AT_GUARD), -EINVAL);
	T_EQ(mmkit_secret_alloc((void **)&p, SIZE_MAX - 1, MMKIT_SECRET_END_AT_GUARD), -ENOMEM);
	/* One byte past the end is the guard page; one before the data page too. */
	status = t_in_child(poke_end_at_guard, (void *)(intptr_t)100);
	T_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
	status = t_in_child(poke_end_at_guard, (void *)(intptr_t)(100 - (ptrdiff_t)page - 1));
	T_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV);
	/* The canary just before the secret: free aborts. */
	status = t_in_child(poke_end_at_guard, (void *)(intptr_t)-1);
	T_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
	status = t_in_child(poke_end_at_guard, (void *)(intptr_t)-16);
	T_ASSERT(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT);
}

static void test_stats_probe(void)
{
	struct mmkit_secret_stats st, st2;
	struct mmkit_features f;
	void *a, *b;

	T_CASE("stats and probe name the backend and count what is live");
	T_EQ(mmkit_secret_stats(&st), 0);
	a = secret(32, 0);
	b = secret(10000, 0);
	T_EQ(mmkit_secret_stats(&st2), 0);
	T_EQ(st2.allocs_live, st.allocs_live + 2);
	T_EQ(st2.bytes_live, st.bytes_live + 10032);
	T_ASSERT(st2.pages_mapped >= 3 + 15);
	T_ASSERT(st2.bytes_locked >= st2.pages_mapped * 4096 - st2.pages_cached * 4096);
	T_ASSERT(!strcmp(st2.backend, backend));
	T_EQ(st2.fallback, !strcmp(backend, "mlock"));
	T_ASSERT(st2.memlock_limit > 0);
	T_EQ(mmkit_probe(&f), 0);
	T_ASSERT(!strcmp(f.feature[MMKIT_FEATURE_SECRET].backend, backend));
	T_EQ(f.feature[MMKIT_FEATURE_SECRET].status,
	     !strcmp(backend, "mlock") ? MMKIT_STATUS_FALLBACK : MMKIT_STATUS_NATIVE);
	printf("    probe: %s\n", f.feature[MMKIT_FEATURE_SECRET].reason);
	mmkit_secret_free(a);
	mmkit_secret_free(b);
	T_EQ(mmkit_secret_stats(&st2), 0);
	T_EQ(st2.allocs_live, st.allocs_live);
	T_EQ(st2.bytes_live, st.bytes_live);
}

static void test_require_flag(void)
{
	void *p = NULL;
	int ret = mmkit_secret_alloc(&p, 32, MMKIT_SECRET_REQUIRE_SECRETMEM);

	T_CASE("MMKIT_SECRET_REQUIRE_SECRETMEM: -ENOSYS on the fallback only");
	if (!strcmp(backend, "mlock")) {
		struct mmkit_secret_stats st;

		T_EQ(ret, -ENOSYS);
		T_EQ(mmkit_secret_stats(&st), 0);
		T_ASSERT(strstr(st.last_error, "memfd_secret required"));
		return;
	}
	T_EQ(ret, 0);
	mmkit_secret_free(p);
}

static void test_reserve(void)
{
	struct mmkit_secret_stats a, b;
	void *p[1000];
	int i;

	T_CASE("reserve: chunks mapped and charged up front, then used without mapping");
	T_EQ(mmkit_secret_reserve(256 * KIB), 0);
	T_EQ(mmkit_secret_stats(&a), 0);
	T_ASSERT(a.pages_cached * 4096 >= 256 * KIB);
	for (i = 0; i < 1000; i++)
		p[i] = secret(100, 0);
	T_EQ(mmkit_secret_stats(&b), 0);
	T_EQ(b.pages_mapped, a.pages_mapped);
	for (i = 0; i < 1000; i++)
		mmkit_secret_free(p[i]);
	T_EQ(mmkit_secret_stats(&b), 0);
	T_EQ(b.pages_mapped, a.pages_mapped);
}

#define THREADS		4
#define ITERATIONS	20000
#define LIVE		64

static void *thread_main(void *arg)
{
	unsigned int seed = (unsigned int)(uintptr_t)arg * 2654435761u + 1;
	unsigned char *p[LIVE] = { 0 };
	size_t size[LIVE] = { 0 };
	unsigned char tag[LIVE];
	int i;

	for (i = 0; i < ITERATIONS; i++) {
		int k = rand_r(&seed) % LIVE;

		if (p[k]) {
			t_expect_bytes(p[k], size[k], tag[k]);
			mmkit_secret_free(p[k]);
		}
		size[k] = (size_t)(rand_r(&seed) % 8 ? rand_r(&seed) % 200 + 1 : rand_r(&seed) % 9000 + 1);
		p[k] = secret(size[k], 0);
		t_expect_bytes(p[k], size[k], 0);
		tag[k] = (unsigned char)((uintptr_t)arg * 16 + (unsigned int)i % 16 + 1);
		memset(p[k], tag[k], size[k]);
	}
	for (i = 0; i < LIVE; i++)
		if (p[i]) {
			t_expect_bytes(p[i], size[i], tag[i]);
			mmkit_secret_free(p[i]);
		}
	return NULL;
}

static void test_threads(void)
{
	struct mmkit_secret_stats st;
	pthread_t t[THREADS];
	unsigned long long live;
	uintptr_t i;

	T_CASE("threads allocate, fill, check and free concurrently");
	T_EQ(mmkit_secret_stats(&st), 0);
	live = st.allocs_live;
	for (i = 0; i < THREADS; i++)
		T_EQ(pthread_create(&t[i], NULL, thread_main, (void *)i), 0);
	for (i = 0; i < THREADS; i++)
		T_EQ(pthread_join(t[i], NULL), 0);
	T_EQ(mmkit_secret_stats(&st), 0);
	T_EQ(st.allocs_live, live);
}

static int named_fn(const struct mmkit_region *r, void *arg)
{
	size_t *bytes = arg;

	if (!strcmp(r->name, "secret-named"))
		*bytes += r->end - r->start;
	return 0;
}

/*
 * A span of the mlock backend named in the registry (where the kernel
 * does not name VMAs) loses its name when freed: the span cache keeps its
 * pages mapped for the next secret, which would show the name.
 */
static void test_name_freed(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), bytes = 0;
	struct mmkit_features f;
	unsigned char *p, *start;
	int ret;

	T_CASE("a named span loses its registry name when freed");
	T_EQ(mmkit_probe(&f), 0);
	p = secret(5000, 0);
	start = (unsigned char *)((uintptr_t)p & ~(uintptr_t)(page - 1));
	ret = mmkit_name(start, 2 * page, "secret-named");
	if (f.feature[MMKIT_FEATURE_NAMES].status != MMKIT_STATUS_FALLBACK || ret) {
		printf("    (not in the registry: %s)\n", ret ? strerror(-ret) : "the kernel names VMAs");
		mmkit_secret_free(p);
		return;
	}
	T_EQ(mmkit_regions(0, named_fn, &bytes), 0);
	T_EQ(bytes, 2 * page);
	mmkit_secret_free(p);
	bytes = 0;
	T_EQ(mmkit_regions(0, named_fn, &bytes), 0);
	T_EQ(bytes, 0);
}

static void suite(void)
{
	test_notice();
	test_round_trip();
	test_alignment();
	test_sizes();
	test_bad_input();
	test_size();
	test_wiped();
	test_name_freed();
	test_protect();
	test_end_at_guard();
	test_stats_probe();
	test_require_flag();
	test_reserve();
	test_threads();
	/* t_in_child() ends the child with _exit(): flush what it printed. */
}

static void run_forbidden(void *arg)
{
	struct mmkit_secret_stats st;
	struct mmkit_features f;
	void *p = NULL;

	(void)arg;
	setenv("MMKIT_SECRET_BACKEND", "mlock", 1);
	setenv("MMKIT_SECRET_REQUIRE", "1", 1);
	T_CASE("MMKIT_SECRET_REQUIRE=1 without memfd_secret: -ENOSYS, probe says unsupported");
	T_EQ(mmkit_secret_alloc(&p, 32, 0), -ENOSYS);
	T_EQ(mmkit_secret_alloc(&p, 32, MMKIT_SECRET_PAGES), -ENOSYS);
	T_EQ(mmkit_secret_reserve(4096), -ENOSYS);
	T_EQ(mmkit_secret_stats(&st), 0);
	T_ASSERT(!strcmp(st.backend, "none"));
	T_ASSERT(strstr(st.reason, "MMKIT_SECRET_REQUIRE=1"));
	T_EQ(mmkit_probe(&f), 0);
	T_EQ(f.feature[MMKIT_FEATURE_SECRET].status, MMKIT_STATUS_UNSUPPORTED);
	fflush(NULL);
}

/* Makes memfd_secret(2) fail with @err in this process from now on. */
static void refuse_memfd_secret(int err)
{
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_memfd_secret, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned int)err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		T_FAIL("seccomp: %s", strerror(errno));
}

static void refused_at_start(void *arg)
{
	struct mmkit_secret_stats st;
	struct mmkit_features f;
	void *p;

	(void)arg;
	T_CASE("memfd_secret refused at start (ENOSYS): the fallback, with the reason");
	refuse_memfd_secret(ENOSYS);
	p = secret(32, MMKIT_SECRET_QUIET);
	T_EQ(mmkit_secret_stats(&st), 0);
	T_ASSERT(!strcmp(st.backend, "mlock") && st.fallback);
	T_ASSERT(strstr(st.reason, "memfd_secret: ENOSYS"));
	T_ASSERT(strstr(st.reason, "secretmem.enable=1"));
	T_EQ(mmkit_probe(&f), 0);
	T_EQ(f.feature[MMKIT_FEATURE_SECRET].status, MMKIT_STATUS_FALLBACK);
	printf("    probe: %s\n", f.feature[MMKIT_FEATURE_SECRET].reason);
	mmkit_secret_free(p);
	fflush(NULL);
}

static int probing_stop;		/* read and written atomically */

/*
 * Probes while the main thread falls back: each answer must be one state,
 * the backend and its reason read together (under the allocator's lock).
 */
static void *probe_while_falling_back(void *arg)
{
	struct mmkit_feature f, *s = &f;

	(void)arg;
	/* mmkit_probe() probes once per process: the secret probe itself, again and again. */
	while (!__atomic_load_n(&probing_stop, __ATOMIC_ACQUIRE)) {
		memset(&f, 0, sizeof(f));
		mmkit__probe_secret(&f);
		if (s->status == MMKIT_STATUS_NATIVE ? strstr(s->reason, "refused") != NULL :
		    !strstr(s->reason, "refused after working"))
			return "probe: the backend and its reason disagree";
	}
	return NULL;
}

static void refused_later(void *arg)
{
	struct mmkit_secret_stats st;
	unsigned char *old, *fresh;
	pthread_t prober;
	void *q, *why;

	T_CASE(arg ? "memfd_secret refused later, fallback forbidden: -ENOSYS, old secrets fine"
		   : "memfd_secret refused later (EPERM): falls back once, for good; old secrets fine");
	if (arg)
		setenv("MMKIT_SECRET_REQUIRE", "1", 1);
	old = secret(32, 0);
	memset(old, 7, 32);
	T_EQ(mmkit_secret_stats(&st), 0);
	T_ASSERT(!strcmp(st.backend, "memfd_secret"));
	__atomic_store_n(&probing_stop, 0, __ATOMIC_RELEASE);
	T_EQ(pthread_create(&prober, NULL, probe_while_falling_back, NULL), 0);
	/* The filter is this thread's: the prober keeps memfd_secret, and never maps. */
	refuse_memfd_secret(EPERM);
	/* Another size class needs a new chunk, so a new memfd_secret. */
	if (arg) {
		T_EQ(mmkit_secret_alloc(&q, 500, MMKIT_SECRET_QUIET), -ENOSYS);
		T_EQ(mmkit_secret_stats(&st), 0);
		T_ASSERT(!strcmp(st.backend, "none"));
	} else {
		fresh = secret(500, MMKIT_SECRET_QUIET);
		memset(fresh, 8, 500);
		T_EQ(mmkit_secret_stats(&st), 0);
		T_ASSERT(!strcmp(st.backend, "mlock"));
		T_EQ(mmkit_secret_alloc(&q, 500, MMKIT_SECRET_REQUIRE_SECRETMEM), -ENOSYS);
		t_expect_bytes(fresh, 500, 8);
		mmkit_secret_free(fresh);
	}
	__atomic_store_n(&probing_stop, 1, __ATOMIC_RELEASE);
	T_EQ(pthread_join(prober, &why), 0);
	if (why)
		T_FAIL("%s", (const char *)why);
	printf("    %s\n", st.reason);
	T_ASSERT(strstr(st.reason, "refused after working: EPERM"));
	t_expect_bytes(old, 32, 7);
	mmkit_secret_free(old);
	fflush(NULL);
}

int main(void)
{
	T_CHILD_OK(t_in_child(run_forbidden, NULL));
	t_secret_backends(suite);
	T_CHILD_OK(t_in_child(refused_at_start, NULL));
	T_CHILD_OK(t_in_child(refused_later, NULL));
	T_CHILD_OK(t_in_child(refused_later, (void *)1));
	return T_EXIT_PASS;
}
