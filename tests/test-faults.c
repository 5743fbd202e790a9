// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Every public entry point against failing system calls.  Each scenario
 * uses a part of the API from creation to destruction; it runs with the
 * fault switch of lib/sys.c armed to fail its Nth call, for N = 1, 2, ...
 * until a run makes fewer than N calls.  After each faulted run:
 *   - the failure came back as -errno, or the library got over it (0);
 *     a crash or any other value fails;
 *   - no descriptor and no mapping is left behind: /proc/self/fd and
 *     /proc/self/maps count as before (memory leaks are LeakSanitizer's,
 *     in the ASan build);
 *   - the library still works: the scenario runs again, unarmed, and
 *     succeeds, leaving nothing behind either.
 * What the library keeps by design for the process (the registry memfd,
 * the uffd slot blocks and SIGBUS handler, the secret pool's cached
 * chunks) is made before the counts are taken: each scenario runs once
 * unarmed first.  The probe and the secret allocator's set-up are done
 * once per process; they are faulted in a fresh child for each N.
 * Each errno of fault_errnos is injected in turn; the total is printed.
 */
#include <dirent.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "mmkit.h"
#include "names.h"
#include "sys.h"
#include "harness.h"

static const int fault_errnos[] = { ENOMEM, EINTR, EIO };

/* For messages: what failed, by enum sys_fault_kind. */
static const char *const kind_names[SYS_FAULT_KINDS] = {
	"any", "mmap", "munmap", "mprotect", "madvise", "mremap", "mlock", "munlock",
	"mincore", "prctl", "rlimit", "capget", "fd_create", "open", "close", "read",
	"write", "ftruncate", "fstat", "ioctl", "access", "sigaction", "raise", "getrandom",
};

/* The call failing in the current run, for messages. */
static char failing[64];

/* The error being injected, for re-arming after a suspension. */
static int cur_err;
/* Faults injected, summed over the children (a shared page). */
static unsigned long *total_injected;
static size_t page;

/*
 * The sanitizers' allocator maps regions of its own as the test runs: in
 * their build only descriptors are counted (and LeakSanitizer sees memory);
 * the native build counts mappings, on the same paths.
 */
#ifdef __SANITIZE_ADDRESS__
static int count_maps(void)
{
	return 0;
}
#else
static int count_maps(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	int c, n = 0;

	if (!f)
		T_FAIL("fopen /proc/self/maps: %s", strerror(errno));
	while ((c = getc(f)) != EOF)
		n += c == '\n';
	fclose(f);
	return n;
}
#endif

/* 1 if all of [p, p + len) is mapped (msync fails with ENOMEM on a hole). */
static int mapped(const void *p, size_t len)
{
	return !msync((void *)((uintptr_t)p & ~(page - 1)), len, MS_ASYNC);
}

static void *raw_map(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		T_FAIL("mmap: %s", strerror(errno));
	return p;
}

/* ---------------------------------------------------------------- */
/* Scenarios: 0 on success, else the first -errno, everything undone.
 * The switch disarms itself once it fires: the clean-up after a failure
 * runs unfaulted and must succeed. */

static const char pattern[16] = "mmkit-faults-16";

/*
 * 1 if [p, p + len) reads as the pattern.  The switch is suspended: the
 * uffd backend serves these faults in a SIGBUS handler, where a failure
 * cannot be returned to anyone (that path is the stress test's).
 */
static int reads_pattern(const void *p, size_t len)
{
	unsigned long left = sys_fault_suspend();
	const unsigned char *b = p;
	int ok = 1;

	if (!mapped(p, len))
		T_FAIL("%s: [%p, +%zu) is not mapped", failing, p, len);
	for (size_t i = 0; i < len; i += 61)
		ok &= b[i] == (unsigned char)pattern[i % sizeof(pattern)];
	if (left)
		sys_fault_arm(SYS_FAULT_ANY, left, cur_err);
	return ok;
}

static unsigned int refpage_flag;

static int scenario_refpage(void)
{
	struct mmkit_refpage *rp;
	size_t len = 4 * page;
	void *p, *q, *a;
	int ret = mmkit_refpage_create(&rp, pattern, sizeof(pattern), refpage_flag);

	if (ret)
		return ret;
	ret = mmkit_refpage_map(rp, len, PROT_READ | PROT_WRITE, &p);
	if (ret)
		goto out;
	T_ASSERT(reads_pattern(p, len));
	ret = mmkit_refpage_remap(rp, p, len, 2 * len, &q);
	if (ret) {
		/* A failed remap leaves the old range as it was. */
		T_ASSERT(reads_pattern(p, len));
		T_EQ(mmkit_refpage_unmap(rp, p, len), 0);
		goto out;
	}
	T_ASSERT(reads_pattern(q, 2 * len));
	ret = mmkit_refpage_unmap(rp, q, 2 * len);
	if (ret) {
		T_EQ(mmkit_refpage_unmap(rp, q, 2 * len), 0);
		goto out;
	}
	a = raw_map(len);
	memset(a, 'x', page);
	ret = mmkit_refpage_attach(rp, a, len);
	if (ret) {
		/* A failed attach leaves the data where it was. */
		T_EQ(((char *)a)[page - 1], 'x');
		munmap(a, len);
		goto out;
	}
	T_EQ(((char *)a)[page - 1], 'x');
	T_ASSERT(reads_pattern((char *)a + page, len - page));
	ret = mmkit_refpage_unmap(rp, a, len);
	if (ret)
		T_EQ(mmkit_refpage_unmap(rp, a, len), 0);
out:
	mmkit_refpage_destroy(rp);
	return ret;
}

static int find_name(const struct mmkit_region *r, void *arg)
{
	if (!strcmp(r->name, "mmkit-fault"))
		++*(int *)arg;
	return 0;
}

/* mmkit_name() and mmkit_regions() of this process and of another. */
static int scenario_names(void)
{
	char *p = raw_map(3 * page);
	int found = 0;
	int ret = mmkit_name(p + page, page, "mmkit-fault");

	if (ret)
		goto out;
	ret = mmkit_regions(0, find_name, &found);
	if (!ret) {
		T_EQ(found, 1);
		ret = mmkit_regions(getppid(), find_name, &found);
	}
	if (ret) {
		T_EQ(mmkit_name(p + page, page, NULL), 0);
		goto out;
	}
	ret = mmkit_name(p + page, page, NULL);
out:
	munmap(p, 3 * page);
	return ret;
}

/*
 * The registry, which a kernel naming VMAs itself leaves unused: written
 * and read back directly, whatever the kernel.
 */
static int scenario_registry(void)
{
	char *p = raw_map(3 * page);
	uint64_t start = (uintptr_t)p + page;
	struct mmkit__name_range *e;
	ssize_t n;
	int ret = mmkit__registry_name(start, start + page, "mmkit-fault", 0);

	if (ret)
		goto out;
	n = mmkit__registry_copy(&e);
	if (n >= 0) {
		T_EQ(n, 1);
		T_ASSERT(e[0].start == start && !strcmp(e[0].name, "mmkit-fault"));
		free(e);
	}
	ret = mmkit__registry_name(start, start + page, NULL, 0);
	if (n < 0) {
		T_EQ(ret, 0);
		ret = (int)n;
	}
out:
	munmap(p, 3 * page);
	return ret;
}

static int scenario_lock(void)
{
	struct mmkit_memlock m;
	char *p = raw_map(4 * page);
	int ret = mmkit_memlock_check(p, 4 * page, &m);

	if (!ret)
		ret = mmkit_memlock_check_all(MMKIT_LOCK_CURRENT, &m);
	if (!ret)
		ret = mmkit_lock(p, 4 * page, MMKIT_LOCK_ONFAULT);
	if (!ret) {
		p[0] = 1;
		ret = mmkit_unlock(p, 4 * page);
		if (ret)
			T_EQ(mmkit_unlock(p, 4 * page), 0);
	}
	if (!ret)
		ret = mmkit_lockall(MMKIT_LOCK_FUTURE | MMKIT_LOCK_ONFAULT);
	if (!ret) {
		ret = mmkit_unlockall();
		if (ret)
			T_EQ(mmkit_unlockall(), 0);
	}
	munmap(p, 4 * page);
	return ret;
}

static int scenario_pac(void)
{
	unsigned long keys;
	int ret = mmkit_pac_get_enabled_keys(&keys);

	if (!ret)
		ret = mmkit_pac_set_enabled_keys(MMKIT_PAC_ALL_KEYS, keys);
	return ret == -EOPNOTSUPP ? 0 : ret;
}

static int scenario_secret(void)
{
	struct mmkit_secret_stats st;
	char *a, *b;
	int ret = mmkit_secret_alloc((void **)&a, 100, MMKIT_SECRET_QUIET);

	if (ret)
		return ret;
	memset(a, 'a', 100);
	ret = mmkit_secret_alloc((void **)&b, 3 * page, MMKIT_SECRET_QUIET | MMKIT_SECRET_PAGES);
	if (ret)
		goto free_a;
	memset(b, 'b', 3 * page);
	ret = mmkit_secret_protect(b, MMKIT_SECRET_READONLY);
	if (!ret) {
		T_EQ(b[3 * page - 1], 'b');
		ret = mmkit_secret_protect(b, MMKIT_SECRET_READWRITE);
		if (ret)
			T_EQ(mmkit_secret_protect(b, MMKIT_SECRET_READWRITE), 0);
		b[0] = 'c';
	}
	if (!ret)
		ret = mmkit_secret_stats(&st);
	if (!ret)
		ret = mmkit_secret_reserve(4 * page);
	if (!ret) {
		/* A short count is no failure: the secrets it made are freed. */
		void *many[8];
		int n = mmkit_secret_alloc_many(many, 8, 100, MMKIT_SECRET_QUIET);

		ret = n < 0 ? n : 0;
		for (int i = 0; i < n; i++)
			mmkit_secret_free(many[i]);
	}
	mmkit_secret_free(b);
free_a:
	T_EQ(a[99], 'a');
	mmkit_secret_free(a);
	return ret;
}

/* The once-per-process parts: each run in a fresh child. */
static int scenario_probe(void)
{
	static const unsigned int flags[] = {
		MMKIT_REFPAGE_BACKEND_SYSCALL, MMKIT_REFPAGE_BACKEND_KMOD,
		MMKIT_REFPAGE_BACKEND_MEMFD, MMKIT_REFPAGE_BACKEND_UFFD,
	};
	struct mmkit_features f;
	int ret = mmkit_probe(&f);

	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]) && !ret; i++) {
		char why[128];
		int r = mmkit_refpage_backend_available(flags[i], why, sizeof(why));

		if (r > 0)
			T_FAIL("backend_available: %d", r);
	}
	return ret;
}

static int scenario_secret_setup(void)
{
	void *p;
	int ret = mmkit_secret_alloc(&p, 32, MMKIT_SECRET_QUIET);

	if (!ret)
		mmkit_secret_free(p);
	return ret;
}

/* ---------------------------------------------------------------- */

struct scenario {
	const char *name;
	int (*run)(void);
	int fresh;	/* faulted in a fresh child each time */
};

/* Runs @s once, armed to fail call @nth: 1 if the fault was injected. */
static int run_faulted(const struct scenario *s, unsigned long nth, int err)
{
	enum sys_fault_kind fired;
	int ret;

	cur_err = err;
	snprintf(failing, sizeof(failing), "%s: call %lu failing with %s", s->name, nth,
		 strerrorname_np(err));
	sys_fault_arm(SYS_FAULT_ANY, nth, err);
	ret = s->run();
	fired = sys_fault_disarm();
	if (fired)
		snprintf(failing, sizeof(failing), "%s: call %lu (%s) failing with %s", s->name,
			 nth, kind_names[fired], strerrorname_np(err));
	if (!fired && ret)
		T_FAIL("%s: %s unfaulted", s->name, strerror(-ret));
	if (ret > 0 || ret < -4095)
		T_FAIL("%s: returned %d", failing, ret);
	return fired != SYS_FAULT_ANY;
}

static void expect_counts(int fds, int maps, const char *when)
{
	int f = t_count_fds(), m = count_maps();

	if (f != fds || m != maps)
		T_FAIL("%s: %s %d fds, %d mappings; %d and %d before", failing, when, f, m,
		       fds, maps);
}

/* N = 1, 2, ... in this process, the scenario's own state made first. */
static void sweep(const struct scenario *s, int err)
{
	unsigned long nth;
	int fds, maps, ret;

	T_EQ(s->run(), 0);
	fds = t_count_fds();
	maps = count_maps();
	for (nth = 1; run_faulted(s, nth, err); nth++) {
		expect_counts(fds, maps, "after the failure");
		ret = s->run();
		if (ret)
			T_FAIL("%s: the clean run after it: %s", failing, strerror(-ret));
		expect_counts(fds, maps, "after a clean run");
	}
	*total_injected += nth - 1;
	printf("  %-18s %-7s %3lu calls faulted\n", s->name, strerrorname_np(err), nth - 1);
}

struct fresh_run {
	const struct scenario *s;
	unsigned long nth;
	int err;
};

static void fresh_child(void *arg)
{
	struct fresh_run *fr = arg;
	int fds = t_count_fds(), maps, fired;

	int ret;

	fired = run_faulted(fr->s, fr->nth, fr->err);
	/* A clean run afterwards must work: a failed set-up is not remembered. */
	ret = fr->s->run();
	if (ret)
		T_FAIL("%s: the clean run after it: %s", failing, strerror(-ret));
	maps = count_maps();
	expect_counts(fds, maps, "after a clean run");
	/* A second clean run finds the state made: it maps nothing more. */
	T_EQ(fr->s->run(), 0);
	expect_counts(fds, maps, "after a second clean run");
	*total_injected += (unsigned long)fired;
	_exit(fired ? 0 : 3);
}

static void sweep_fresh(const struct scenario *s, int err)
{
	struct fresh_run fr = { s, 1, err };
	int status;

	for (;; fr.nth++) {
		status = t_in_child(fresh_child, &fr);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
			break;
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			T_FAIL("%s: call %lu failing with %s: child %s %d", s->name, fr.nth,
			       strerror(err), WIFEXITED(status) ? "exit" : "signal",
			       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	}
	printf("  %-18s %-7s %3lu calls faulted\n", s->name, strerrorname_np(err), fr.nth - 1);
}

static void run_scenario(const struct scenario *s)
{
	for (size_t i = 0; i < sizeof(fault_errnos) / sizeof(fault_errnos[0]); i++)
		(s->fresh ? sweep_fresh : sweep)(s, fault_errnos[i]);
}

static const char *secret_backend;

/* The secret allocator decides its backend once: a child per backend. */
static void secret_child(void *arg)
{
	static const struct scenario setup = { "secret set-up", scenario_secret_setup, 1 };
	static const struct scenario use = { "secret", scenario_secret, 0 };

	(void)arg;
	setenv("MMKIT_SECRET_BACKEND", secret_backend, 1);
	printf(" secret backend %s\n", secret_backend);
	/* A passing failure of the first memfd_secret(2) must not decide the backend. */
	run_scenario(&setup);
	run_scenario(&use);
	fflush(NULL);
}

static void refpage_child(void *arg)
{
	static const struct scenario s = { "refpage", scenario_refpage, 0 };

	(void)arg;
	run_scenario(&s);
	fflush(NULL);
}

int main(void)
{
	static const struct { unsigned int flag; const char *name; } backends[] = {
		{ MMKIT_REFPAGE_BACKEND_SYSCALL, "syscall" },
		{ MMKIT_REFPAGE_BACKEND_KMOD, "kmod" },
		{ MMKIT_REFPAGE_BACKEND_MEMFD, "memfd" },
		{ MMKIT_REFPAGE_BACKEND_UFFD, "uffd" },
	};
	static const struct scenario scenarios[] = {
		{ "probe", scenario_probe, 1 },
		{ "names", scenario_names, 0 },
		{ "registry", scenario_registry, 0 },
		{ "lock", scenario_lock, 0 },
		{ "pac", scenario_pac, 0 },
	};
	char why[128];
	int fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	page = (size_t)sysconf(_SC_PAGESIZE);
	total_injected = mmap(NULL, sizeof(*total_injected), PROT_READ | PROT_WRITE,
			      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	T_ASSERT(total_injected != MAP_FAILED);

	for (size_t i = 0; i < sizeof(scenarios) / sizeof(scenarios[0]); i++)
		run_scenario(&scenarios[i]);
	for (size_t i = 0; i < sizeof(backends) / sizeof(backends[0]); i++) {
		if (mmkit_refpage_backend_available(backends[i].flag, why, sizeof(why))) {
			printf(" refpage backend %s: not here (%s)\n", backends[i].name, why);
			continue;
		}
		printf(" refpage backend %s\n", backends[i].name);
		refpage_flag = backends[i].flag;
		T_CHILD_OK(t_in_child(refpage_child, NULL));
	}
	secret_backend = "mlock";
	T_CHILD_OK(t_in_child(secret_child, NULL));
	fd = (int)syscall(SYS_memfd_secret, 0);
	if (fd >= 0) {
		close(fd);
		secret_backend = "memfd_secret";
		T_CHILD_OK(t_in_child(secret_child, NULL));
	} else {
		printf(" secret backend memfd_secret: not here\n");
	}
	printf("faults injected: %lu\n", *total_injected);
	return T_EXIT_PASS;
}
