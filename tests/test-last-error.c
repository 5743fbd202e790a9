// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit_last_error(): every call that returns a negative errno leaves a
 * message naming itself, with the library's own reason where it has one
 * (the RLIMIT_MEMLOCK figures, a bad name's character, the refpage backend
 * that is missing); a success leaves it alone; errno is never touched; a
 * detail recorded by one call never explains another's failure; each
 * thread sees its own failures only.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "harness.h"
#include "mmkit.h"

#define KIB	1024ULL

/* @ret is @err, errno is untouched, the message is "@op: ..." and holds @want. */
#define EXPECT_FAILURE(call, err, op, want) do {			\
	int ret_;							\
	errno = 4321;							\
	ret_ = (call);							\
	if (errno != 4321)						\
		T_FAIL("%s changed errno to %d", #call, errno);	\
	expect_message(#call, ret_, err, op, want);			\
	if (errno != 4321)						\
		T_FAIL("mmkit_last_error() changed errno to %d", errno); \
} while (0)

static void expect_message(const char *what, int ret, int err, const char *op, const char *want)
{
	const char *msg = mmkit_last_error();
	size_t n = strlen(op);

	if (ret != err)
		T_FAIL("%s returned %d, expected %d (%s)", what, ret, err, msg);
	T_ASSERT(msg);
	if (strncmp(msg, op, n) || strncmp(msg + n, ": ", 2) || !msg[n + 2])
		T_FAIL("%s: message \"%s\" does not start with \"%s: \" and a reason", what, msg, op);
	if (want && !strstr(msg, want))
		T_FAIL("%s: message \"%s\" lacks \"%s\"", what, msg, want);
}

static int stop_at_first(const struct mmkit_region *r, void *arg)
{
	(void)r;
	(void)arg;
	return -ECANCELED;
}

/* Every public call that returns -errno, failing on bad input. */
static void test_every_call(void)
{
	struct mmkit_refpage *rp = NULL;
	struct mmkit_memlock m;
	size_t size;
	void *p;

	T_CASE("every call's EINVAL names the call and keeps errno");
	EXPECT_FAILURE(mmkit_probe(NULL), -EINVAL, "mmkit_probe", "Invalid argument");
	EXPECT_FAILURE(mmkit_name_valid("a[b"), -EINVAL, "mmkit_name_valid",
		       "character 0x5b at offset 1");
	EXPECT_FAILURE(mmkit_name((void *)1, 4096, "x"), -EINVAL, "mmkit_name",
		       "address 0x1 is not page aligned");
	EXPECT_FAILURE(mmkit_regions(-1, stop_at_first, NULL), -EINVAL, "mmkit_regions",
		       "pid -1 is negative");
	EXPECT_FAILURE(mmkit_memlock_check(NULL, 0, NULL), -EINVAL, "mmkit_memlock_check", NULL);
	EXPECT_FAILURE(mmkit_memlock_check_all(0, &m), -EINVAL, "mmkit_memlock_check_all", "flags 0");
	/* An empty buffer (a binding's) costs nothing: the current state, as for NULL. */
	T_EQ(mmkit_memlock_check(&m, 0, &m), 0);
	T_EQ(m.needed, 0);
	EXPECT_FAILURE(mmkit_lock(&m, 0, 0), -EINVAL, "mmkit_lock", "length 0");
	EXPECT_FAILURE(mmkit_lock(&m, sizeof(m), 0x8), -EINVAL, "mmkit_lock", "flags 0x8");
	EXPECT_FAILURE(mmkit_unlock(&m, 0), -EINVAL, "mmkit_unlock", "length 0");
	EXPECT_FAILURE(mmkit_unlock(&m, SIZE_MAX), -EINVAL, "mmkit_unlock",
		       "wraps around the address space");
	EXPECT_FAILURE(mmkit_lockall(0), -EINVAL, "mmkit_lockall", "flags 0");
	EXPECT_FAILURE(mmkit_pac_get_enabled_keys(NULL), -EINVAL, "mmkit_pac_get_enabled_keys", NULL);
	EXPECT_FAILURE(mmkit_pac_set_enabled_keys(~0UL, 0), -EINVAL, "mmkit_pac_set_enabled_keys",
		       "outside MMKIT_PAC_ALL_KEYS");
	EXPECT_FAILURE(mmkit_secret_alloc(&p, 0, 0), -EINVAL, "mmkit_secret_alloc", "size 0");
	EXPECT_FAILURE(mmkit_secret_alloc_many(&p, 1, 0, 0), -EINVAL, "mmkit_secret_alloc_many",
		       "size 0");
	EXPECT_FAILURE(mmkit_secret_stats(NULL), -EINVAL, "mmkit_secret_stats", NULL);
	EXPECT_FAILURE(mmkit_secret_protect(NULL, MMKIT_SECRET_READONLY), -EINVAL,
		       "mmkit_secret_protect", NULL);
	EXPECT_FAILURE(mmkit_secret_size(NULL, &size), -EINVAL, "mmkit_secret_size", NULL);
	EXPECT_FAILURE(mmkit_secret_reserve(SIZE_MAX), -ENOMEM, "mmkit_secret_reserve", NULL);
	EXPECT_FAILURE(mmkit_refpage_create(&rp, "abc", 3, 0), -EINVAL, "mmkit_refpage_create",
		       "pattern size 3");
	EXPECT_FAILURE(mmkit_refpage_map(NULL, 4096, PROT_READ, &p), -EINVAL, "mmkit_refpage_map",
		       NULL);
	EXPECT_FAILURE(mmkit_refpage_attach(NULL, &m, 4096), -EINVAL, "mmkit_refpage_attach", NULL);
	EXPECT_FAILURE(mmkit_refpage_unmap(NULL, &m, 4096), -EINVAL, "mmkit_refpage_unmap", NULL);
	EXPECT_FAILURE(mmkit_refpage_remap(NULL, &m, 4096, 8192, &p), -EINVAL,
		       "mmkit_refpage_remap", NULL);
	EXPECT_FAILURE(mmkit_refpage_backend_available(0, NULL, 0), -EINVAL,
		       "mmkit_refpage_backend_available", NULL);
	EXPECT_FAILURE(mmkit_refpage_stats(NULL), -EINVAL, "mmkit_refpage_stats", NULL);
	EXPECT_FAILURE(mmkit_refpage_backend_flag("floppy"), -EINVAL, "mmkit_refpage_backend_flag",
		       "floppy: no such backend");
	EXPECT_FAILURE(mmkit_refpage_backend_flag(NULL), -EINVAL, "mmkit_refpage_backend_flag", NULL);
}

static void test_reasons(void)
{
	char why[MMKIT_REASON_MAX];
	struct mmkit_refpage *rp;
	unsigned long keys;
	void *p;
	int ret;

	T_CASE("the library's own reasons: PAC, pooled protect, refpage backend, names");
	ret = mmkit_pac_get_enabled_keys(&keys);
	if (ret == -EOPNOTSUPP)
		expect_message("pac", ret, -EOPNOTSUPP, "mmkit_pac_get_enabled_keys",
#if defined(__aarch64__)
			       "PR_PAC"
#else
			       "this is not arm64"
#endif
			       );
	T_EQ(mmkit_secret_alloc(&p, 32, MMKIT_SECRET_QUIET), 0);
	EXPECT_FAILURE(mmkit_secret_protect(p, MMKIT_SECRET_READONLY), -EINVAL,
		       "mmkit_secret_protect", "pages of its own");
	mmkit_secret_free(p);
	ret = mmkit_refpage_backend_available(MMKIT_REFPAGE_BACKEND_KMOD, why, sizeof(why));
	if (ret) {
		expect_message("kmod available", ret, ret, "mmkit_refpage_backend_available", why);
		errno = 4321;
		expect_message("kmod", mmkit_refpage_create(&rp, "a", 1, MMKIT_REFPAGE_BACKEND_KMOD),
			       ret, "mmkit_refpage_create", why);
		T_EQ(errno, 4321);
	}
	EXPECT_FAILURE(mmkit_name_valid("0123456789012345678901234567890123456789"
					"0123456789012345678901234567890123456789"), -EINVAL,
		       "mmkit_name_valid", "longer than 79");
	EXPECT_FAILURE(mmkit_regions(999999999, stop_at_first, NULL), -ESRCH, "mmkit_regions",
		       "/proc/999999999");
}

/* Failures that used to say only strerror's words, where the library knows why. */
static void test_no_bare_strerror(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	struct mmkit_secret_stats st;
	struct mmkit_refpage *rp;
	char *file, *anon;
	void *p;
	int fd;

	T_CASE("refpage_map, huge secrets, naming files, holes and part of a page say why");
	T_EQ(mmkit_refpage_create(&rp, "a", 1, 0), 0);
	EXPECT_FAILURE(mmkit_refpage_map(rp, 0, PROT_READ, &p), -EINVAL, "mmkit_refpage_map",
		       "length 0: a range holds at least one byte");
	EXPECT_FAILURE(mmkit_refpage_map(rp, SIZE_MAX, PROT_READ, &p), -EINVAL, "mmkit_refpage_map",
		       "exceeds the address space");
	EXPECT_FAILURE(mmkit_refpage_map(rp, (size_t)1 << 62, PROT_READ, &p), -ENOMEM,
		       "mmkit_refpage_map", "mmap(2) of ");
	EXPECT_FAILURE(mmkit_refpage_map(rp, page, PROT_EXEC, &p), -EINVAL, "mmkit_refpage_map",
		       "prot 0x4");
	mmkit_refpage_destroy(rp);
	EXPECT_FAILURE(mmkit_secret_alloc(&p, SIZE_MAX, MMKIT_SECRET_QUIET), -ENOMEM,
		       "mmkit_secret_alloc", "no mapping can be that large");
	EXPECT_FAILURE(mmkit_secret_reserve(SIZE_MAX), -ENOMEM, "mmkit_secret_reserve",
		       "no mapping can be that large");
	errno = 4321;
	expect_message("2^62 bytes", mmkit_secret_alloc(&p, (size_t)1 << 62, MMKIT_SECRET_QUIET),
		       -ENOMEM, "mmkit_secret_alloc", NULL);
	T_EQ(errno, 4321);
	if (!strcmp(mmkit_last_error(), "mmkit_secret_alloc: Cannot allocate memory"))
		T_FAIL("a secret of 2^62 bytes fails with strerror's words only");

	EXPECT_FAILURE(mmkit_name(NULL, page, "x"), -ENOMEM, "mmkit_name",
		       "is not mapped (its mapped parts are named)");
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	T_ASSERT(fd >= 0);
	file = mmap(NULL, page, PROT_READ, MAP_PRIVATE, fd, 0);
	T_ASSERT(file != MAP_FAILED);
	close(fd);
	EXPECT_FAILURE(mmkit_name(file, page, "x"), -EBADF, "mmkit_name", "is a file mapping");
	munmap(file, page);
	T_EQ(mmkit_secret_alloc(&p, page, MMKIT_SECRET_QUIET | MMKIT_SECRET_PAGES), 0);
	T_EQ(mmkit_secret_stats(&st), 0);
	if (!strcmp(st.backend, "memfd_secret"))
		EXPECT_FAILURE(mmkit_name(p, page, "x"), -EBADF, "mmkit_name", "is a file mapping");
	mmkit_secret_free(p);

	anon = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(anon != MAP_FAILED);
	EXPECT_FAILURE(mmkit_name_pages(anon, 10, "x"), -EINVAL, "mmkit_name_pages",
		       "does not cover whole pages");
	EXPECT_FAILURE(mmkit_name_pages(anon + 10, page, "x"), -EINVAL, "mmkit_name_pages",
		       "does not cover whole pages");
	EXPECT_FAILURE(mmkit_name_pages(anon, page, "x$"), -EINVAL, "mmkit_name_pages", "0x24");
	T_EQ(mmkit_name_pages(anon + 1, 0, "x"), 0);
	T_EQ(mmkit_name_pages(anon, 2 * page, "x"), 0);
	T_EQ(mmkit_name(anon, 2 * page, NULL), 0);
	munmap(anon, 2 * page);
}

static void test_success_and_stale_detail(void)
{
	const char *before, *after;
	void *p;

	T_CASE("a success leaves the message; one call's detail never explains another");
	EXPECT_FAILURE(mmkit_name_valid("x$"), -EINVAL, "mmkit_name_valid", "0x24");
	before = mmkit_last_error();
	T_EQ(mmkit_name_valid("fine"), 0);
	T_EQ(mmkit_secret_alloc(&p, 32, MMKIT_SECRET_QUIET), 0);
	mmkit_secret_free(p);
	after = mmkit_last_error();
	T_ASSERT(after == before);
	T_ASSERT(strstr(after, "mmkit_name_valid: ") == after && strstr(after, "0x24"));
	/* mmkit_name fails with the same errno: its message must not borrow the detail. */
	T_EQ(mmkit_name_valid("y]"), -EINVAL);
	EXPECT_FAILURE(mmkit_probe(NULL), -EINVAL, "mmkit_probe", "Invalid argument");
	T_ASSERT(!strstr(mmkit_last_error(), "0x5d"));
	/* A walk stopped by its callback is not a failure of the walk. */
	T_EQ(mmkit_regions(0, stop_at_first, NULL), -ECANCELED);
	T_ASSERT(!strcmp(mmkit_last_error(), "mmkit_probe: Invalid argument"));
}

/* Over an RLIMIT_MEMLOCK of 64 KiB, unprivileged: both say the figures. */
static void limit_figures(void *arg)
{
	struct rlimit rl = { 64 * KIB, 64 * KIB };
	struct mmkit_memlock m;
	void *p[4096];
	char *big;
	int i, ret = 0;

	(void)arg;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		T_FAIL("setrlimit: %s", strerror(errno));
	if (t_is_root())
		t_become_nobody();
	T_EQ(mmkit_memlock_check(NULL, 0, &m), 0);
	T_ASSERT(!m.exempt);
	big = mmap(NULL, 1024 * KIB, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(big != MAP_FAILED);
	EXPECT_FAILURE(mmkit_lock(big, 1024 * KIB, MMKIT_LOCK_ONFAULT), -ENOMEM, "mmkit_lock",
		       "would exceed RLIMIT_MEMLOCK: limit 64 KiB");
	for (i = 0; i < 4096 && !ret; i++)
		ret = mmkit_secret_alloc(&p[i], 32, MMKIT_SECRET_QUIET | MMKIT_SECRET_PAGES);
	T_ASSERT(ret);
	expect_message("secret", ret, -ENOMEM, "mmkit_secret_alloc", "RLIMIT_MEMLOCK: limit 64 KiB");
}

static void test_limit_figures(void)
{
	T_CASE("RLIMIT_MEMLOCK failures give the figures (mmkit_lock, mmkit_secret_alloc)");
	T_CHILD_OK(t_in_child(limit_figures, NULL));
}

/* Two threads fail different calls between the same two barriers. */
static pthread_barrier_t barrier;

static void *fail_unlock(void *arg)
{
	(void)arg;
	if (mmkit_last_error()[0])
		return "a new thread's message is not empty";
	pthread_barrier_wait(&barrier);
	if (mmkit_unlock(NULL, 0) != -EINVAL)
		return "mmkit_unlock(NULL, 0) did not fail";
	pthread_barrier_wait(&barrier);
	pthread_barrier_wait(&barrier);
	return strcmp(mmkit_last_error(), "mmkit_unlock: length 0: the range holds no byte") ?
	       "the thread saw another's message" : NULL;
}

static void *fail_name(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&barrier);
	pthread_barrier_wait(&barrier);
	if (mmkit_name_valid("`") != -EINVAL)
		return "mmkit_name_valid(\"`\") did not fail";
	pthread_barrier_wait(&barrier);
	return strncmp(mmkit_last_error(), "mmkit_name_valid: ", 18) ?
	       "the thread saw another's message" : NULL;
}

static void test_threads(void)
{
	pthread_t a, b;
	void *ra, *rb;

	T_CASE("threads see their own failures only");
	T_EQ(mmkit_probe(NULL), -EINVAL);
	T_EQ(pthread_barrier_init(&barrier, NULL, 2), 0);
	T_EQ(pthread_create(&a, NULL, fail_unlock, NULL), 0);
	T_EQ(pthread_create(&b, NULL, fail_name, NULL), 0);
	T_EQ(pthread_join(a, &ra), 0);
	T_EQ(pthread_join(b, &rb), 0);
	if (ra || rb)
		T_FAIL("%s", ra ? (char *)ra : (char *)rb);
	T_ASSERT(!strcmp(mmkit_last_error(), "mmkit_probe: Invalid argument"));
	pthread_barrier_destroy(&barrier);
}

int main(void)
{
	T_ASSERT(!strcmp(mmkit_last_error(), ""));
	test_every_call();
	test_reasons();
	test_no_bare_strerror();
	test_success_and_stale_detail();
	test_limit_figures();
	test_threads();
	return T_EXIT_PASS;
}
