// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * A passing failure is not remembered (issue 29).  What the library finds
 * out once per process (the device of memfds that the registry reader
 * compares with, the default reference-page backend, whether the kernel
 * names memory, how the kernel charges secret memory, mmkit_probe()'s
 * answers) must keep the kernel's answers only, never a failure to ask.
 *
 * Each scenario runs in a fresh child (the answers are per process) once
 * for each number of descriptors left to open, 0 to SPARE_MAX
 * (RLIMIT_NOFILE's soft limit lowered): its first call may fail, and must
 * then succeed once the limit is back, with the answer a process that
 * never ran short gets.  At least one count must have made the first call
 * fail, or nothing was tried.  Then the naming probe with no page to map
 * (the fault switch of lib/sys.c), and a sandbox refusing the naming
 * prctl (a seccomp filter): an answer, so names go to the registry.
 */
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include "harness.h"
#include "mmkit.h"
#include "names.h"
#include "secret.h"
#include "sys.h"

#define SPARE_MAX	12
/* A child's exit code when its first call failed and the second worked. */
#define EXIT_RECOVERED	10

/* What a process that never ran short answers: set by baseline(), read by the children. */
struct answers {
	struct mmkit_features probe;
	char refpage_backend[32];
	int secret_charged_at_fault;
	int secret_memlock_exempt;
};

static struct answers *base;
static unsigned char pattern = 0x5a;
static struct rlimit saved_limit;

/* Leaves @spare descriptors to open: the soft limit just above the lowest free one. */
static void limit_fds(unsigned int spare)
{
	struct rlimit rl;
	int fd = open("/dev/null", O_RDONLY | O_CLOEXEC);

	if (fd < 0 || close(fd) || getrlimit(RLIMIT_NOFILE, &saved_limit))
		T_FAIL("open /dev/null or getrlimit: %s", strerror(errno));
	rl = saved_limit;
	rl.rlim_cur = (rlim_t)fd + spare;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		T_FAIL("setrlimit: %s", strerror(errno));
}

static void restore_fds(void)
{
	if (setrlimit(RLIMIT_NOFILE, &saved_limit))
		T_FAIL("setrlimit: %s", strerror(errno));
}

/* Ends a child: recovered if the first call failed, plain pass if it did not. */
static void done(int first)
{
	_exit(first ? EXIT_RECOVERED : 0);
}

struct found {
	uintptr_t addr;
	int named;
};

static int find_name(const struct mmkit_region *r, void *arg)
{
	struct found *f = arg;

	if (r->start <= f->addr && f->addr < r->end && !strcmp(r->name, "passing"))
		f->named = 1;
	return 0;
}

/*
 * A process with a registry (a reference-page mapping named, which the
 * registry names on every kernel) until killed; its address into *@addr.
 */
static pid_t named_target(uintptr_t *addr)
{
	struct mmkit_refpage *rp;
	int up[2];
	void *mem;
	pid_t pid;

	if (pipe(up))
		T_FAIL("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0)
		T_FAIL("fork: %s", strerror(errno));
	if (!pid) {
		/* Gone with the child that reads it, however that ends. */
		if (prctl(PR_SET_PDEATHSIG, SIGKILL) || getppid() == 1)
			_exit(1);
		if (mmkit_refpage_create(&rp, &pattern, 1, MMKIT_REFPAGE_BACKEND_MEMFD) ||
		    mmkit_refpage_map(rp, 4096, PROT_READ | PROT_WRITE, &mem) ||
		    mmkit_name(mem, 4096, "passing"))
			T_FAIL("naming a reference-page mapping: %s", mmkit_last_error());
		*addr = (uintptr_t)mem;
		if (write(up[1], addr, sizeof(*addr)) != sizeof(*addr))
			_exit(1);
		pause();
		_exit(0);
	}
	close(up[1]);
	if (read(up[0], addr, sizeof(*addr)) != sizeof(*addr))
		T_FAIL("the target did not start");
	close(up[0]);
	return pid;
}

/*
 * mmkit_regions() of another process with a registry: the reader compares
 * each registry's device with that of a memfd of its own.
 */
static void regions(void *arg)
{
	unsigned int spare = *(unsigned int *)arg;
	struct found f = { 0 };
	pid_t pid = named_target(&f.addr);
	int first;

	limit_fds(spare);
	first = mmkit_regions(pid, find_name, &f);
	restore_fds();
	f.named = 0;
	if (mmkit_regions(pid, find_name, &f))
		T_FAIL("%u spare: mmkit_regions() after the limit is back: %s", spare,
		       mmkit_last_error());
	if (!f.named)
		T_FAIL("%u spare: mmkit_regions() after the limit is back: no name \"passing\"",
		       spare);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	done(first);
}

/* mmkit_refpage_create() with the default backend. */
static void refpage_default(void *arg)
{
	unsigned int spare = *(unsigned int *)arg;
	struct mmkit_refpage *rp;
	int first;

	limit_fds(spare);
	first = mmkit_refpage_create(&rp, &pattern, 1, 0);
	restore_fds();
	if (!first)
		mmkit_refpage_destroy(rp);
	if (mmkit_refpage_create(&rp, &pattern, 1, 0))
		T_FAIL("%u spare: mmkit_refpage_create(0) after the limit is back: %s", spare,
		       mmkit_last_error());
	if (strcmp(mmkit_refpage_backend(rp), base->refpage_backend))
		T_FAIL("%u spare: default backend %s, %s in a process never short", spare,
		       mmkit_refpage_backend(rp), base->refpage_backend);
	done(first);
}

/* The secret allocator's set-up: how the kernel charges secret memory. */
static void secret(void *arg)
{
	unsigned int spare = *(unsigned int *)arg;
	void *p;
	int first;

	limit_fds(spare);
	first = mmkit_secret_alloc(&p, 64, 0);
	restore_fds();
	if (!first)
		mmkit_secret_free(p);
	if (mmkit_secret_alloc(&p, 64, 0))
		T_FAIL("%u spare: mmkit_secret_alloc() after the limit is back: %s", spare,
		       mmkit_last_error());
	mmkit_secret_free(p);
	if (S.charged_at_fault != base->secret_charged_at_fault ||
	    S.memlock_exempt != base->secret_memlock_exempt)
		T_FAIL("%u spare: secret memory charged at fault %d, exempt %d; %d and %d in a process never short",
		       spare, S.charged_at_fault, S.memlock_exempt,
		       base->secret_charged_at_fault, base->secret_memlock_exempt);
	done(first);
}

/* mmkit_probe(): each feature's status and backend. */
static void probe(void *arg)
{
	unsigned int spare = *(unsigned int *)arg;
	struct mmkit_features f;
	const struct mmkit_feature *a, *b;
	int first, i;

	limit_fds(spare);
	first = mmkit_probe(&f);
	/* A feature that could not be tried says so; that is the first call failing. */
	for (i = 0; !first && i < MMKIT_FEATURE_COUNT; i++)
		first = strcmp(f.feature[i].backend, base->probe.feature[i].backend);
	restore_fds();
	if (mmkit_probe(&f))
		T_FAIL("%u spare: mmkit_probe() after the limit is back: %s", spare,
		       mmkit_last_error());
	for (i = 0; i < MMKIT_FEATURE_COUNT; i++) {
		a = &f.feature[i];
		b = &base->probe.feature[i];
		if (a->status != b->status || strcmp(a->backend, b->backend))
			T_FAIL("%u spare: %s after the limit is back: %s (%s); never short: %s (%s)",
			       spare, mmkit_feature_name(i), a->backend, a->reason, b->backend,
			       b->reason);
	}
	done(first);
}

/*
 * mmkit_probe() keeps the kernel's answers: once every feature that opens
 * a descriptor to find out has had one (the first call with descriptors
 * to spare), a later call opens none.  That the ones it could not give
 * are asked again is probe()'s case.
 */
static void probe_kept(void *arg)
{
	struct mmkit_features first, then;
	enum sys_fault_kind made;
	int i;

	(void)arg;
	if (mmkit_probe(&first))
		T_FAIL("mmkit_probe: %s", mmkit_last_error());
	sys_fault_arm(SYS_FAULT_FD_CREATE, 1, ENFILE);
	if (mmkit_probe(&then))
		T_FAIL("mmkit_probe: %s", mmkit_last_error());
	made = sys_fault_disarm();
	if (made)
		T_FAIL("the second mmkit_probe() made a descriptor (memfd, userfaultfd) to ask what the first was answered");
	for (i = 0; i < MMKIT_FEATURE_COUNT; i++)
		if (first.feature[i].status != then.feature[i].status ||
		    strcmp(first.feature[i].backend, then.feature[i].backend))
			T_FAIL("%s: %s, then %s", mmkit_feature_name(i), first.feature[i].backend,
			       then.feature[i].backend);
}

/* The answers of a process that never ran short, into *base. */
static void baseline(void *arg)
{
	struct mmkit_refpage *rp;
	void *p;

	(void)arg;
	if (mmkit_probe(&base->probe) || mmkit_refpage_create(&rp, &pattern, 1, 0) ||
	    mmkit_secret_alloc(&p, 64, 0))
		T_FAIL("baseline: %s", mmkit_last_error());
	snprintf(base->refpage_backend, sizeof(base->refpage_backend), "%s",
		 mmkit_refpage_backend(rp));
	base->secret_charged_at_fault = S.charged_at_fault;
	base->secret_memlock_exempt = S.memlock_exempt;
}

static void run(const char *name, void (*fn)(void *))
{
	unsigned int spare, recovered = 0;
	int status;

	for (spare = 0; spare <= SPARE_MAX; spare++) {
		status = t_in_child(fn, &spare);
		if (!WIFEXITED(status) || (WEXITSTATUS(status) && WEXITSTATUS(status) != EXIT_RECOVERED))
			T_FAIL("%s with %u descriptors spare: status %#x", name, spare, status);
		recovered += WEXITSTATUS(status) == EXIT_RECOVERED;
	}
	if (!recovered)
		T_FAIL("%s: no first call failed with 0 to %d descriptors spare: nothing tried",
		       name, SPARE_MAX);
	printf("  %s: the first call failed with %u of %d descriptor counts, every later call worked\n",
	       name, recovered, SPARE_MAX + 1);
}

/* The naming probe, its page not mapped (no memory): not an answer, asked again. */
static void names_probe(void *arg)
{
	int first, then;

	(void)arg;
	sys_fault_arm(SYS_FAULT_MMAP, 1, ENOMEM);
	first = mmkit__kernel_names();
	sys_fault_disarm();
	then = mmkit__kernel_names();
	if (first != -ENOMEM)
		T_FAIL("the naming probe with no page to map: %d, not -ENOMEM", first);
	if (then && then != -EINVAL)
		T_FAIL("the naming probe once a page can be mapped: %s (the failure was kept)",
		       strerror(-then));
}

/* A sandbox: prctl(PR_SET_VMA) fails with @err from now on, in this process. */
static void refuse_naming(int err)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_prctl, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0])),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PR_SET_VMA, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (unsigned int)err),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) ||
	    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog))
		T_FAIL("seccomp: %s", strerror(errno));
}

/* The naming prctl refused (EPERM, EACCES, ENOSYS): the registry names, the probe says so. */
static void names_refused(void *arg)
{
	int err = *(int *)arg, ret;
	size_t page = sys_page_size();
	struct mmkit_features f;
	struct found found;
	void *p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		T_FAIL("mmap: %s", strerror(errno));
	refuse_naming(err);
	if (mmkit_probe(&f))
		T_FAIL("mmkit_probe: %s", mmkit_last_error());
	if (strcmp(f.feature[MMKIT_FEATURE_NAMES].backend, "registry"))
		T_FAIL("prctl refused with %s: the probe says %s (%s)", strerrorname_np(err),
		       f.feature[MMKIT_FEATURE_NAMES].backend, f.feature[MMKIT_FEATURE_NAMES].reason);
	ret = mmkit_name(p, page, "passing");
	if (ret)
		T_FAIL("prctl refused with %s: mmkit_name: %s (%s); the probe said %s",
		       strerrorname_np(err), strerror(-ret), mmkit_last_error(),
		       f.feature[MMKIT_FEATURE_NAMES].reason);
	found.addr = (uintptr_t)p;
	found.named = 0;
	if (mmkit_regions(0, find_name, &found) || !found.named)
		T_FAIL("prctl refused with %s: the name is not in mmkit_regions(): %s",
		       strerrorname_np(err), mmkit_last_error());
}

/*
 * RLIMIT_MEMLOCK 0 as a user without CAP_IPC_LOCK: the first secret's
 * probe page is refused with EAGAIN, the kernel's answer, so every
 * allocation fails with ENOMEM naming the limit; and works once the
 * limit is raised.
 */
static void secret_no_memlock(void *arg)
{
	struct rlimit rl, zero;
	void *p;
	int ret, i;

	(void)arg;
	if (getrlimit(RLIMIT_MEMLOCK, &rl))
		T_FAIL("getrlimit: %s", strerror(errno));
	zero = rl;
	zero.rlim_cur = 0;
	if (setrlimit(RLIMIT_MEMLOCK, &zero) || setgid(T_NOBODY) || setuid(T_NOBODY))
		T_FAIL("RLIMIT_MEMLOCK 0 as uid %d: %s", T_NOBODY, strerror(errno));
	for (i = 0; i < 2; i++) {
		ret = mmkit_secret_alloc(&p, 64, 0);
		if (ret != -ENOMEM || !strstr(mmkit_last_error(), "RLIMIT_MEMLOCK"))
			T_FAIL("secret %d with RLIMIT_MEMLOCK 0: %s (%s), not ENOMEM naming the limit",
			       i + 1, ret ? strerror(-ret) : "allocated", mmkit_last_error());
	}
	if (rl.rlim_max < 64 << 10)
		_exit(0);
	rl.rlim_cur = 64 << 10;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		T_FAIL("setrlimit: %s", strerror(errno));
	if (mmkit_secret_alloc(&p, 64, 0))
		T_FAIL("a secret once RLIMIT_MEMLOCK is 64 KiB: %s", mmkit_last_error());
}

int main(void)
{
	static const int refusals[] = { EPERM, EACCES, ENOSYS };
	unsigned int i;

	void *mem = mmap(NULL, sizeof(*base), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			 -1, 0);
	int status;

	if (mem == MAP_FAILED)
		T_FAIL("mmap: %s", strerror(errno));
	base = mem;
	status = t_in_child(baseline, NULL);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		T_FAIL("baseline: status %#x", status);
	T_CASE("RLIMIT_NOFILE lowered, then restored");
	run("mmkit_regions", regions);
	run("mmkit_refpage_create(0)", refpage_default);
	run("mmkit_secret_alloc", secret);
	run("mmkit_probe", probe);
	T_CASE("mmkit_probe() keeps the kernel's answers");
	status = t_in_child(probe_kept, NULL);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		T_FAIL("kept answers: status %#x", status);
	T_CASE("the naming probe without memory, then with");
	status = t_in_child(names_probe, NULL);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		T_FAIL("naming probe: status %#x", status);
	T_CASE("the naming prctl refused by a sandbox: names go to the registry");
	for (i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++) {
		status = t_in_child(names_refused, (void *)&refusals[i]);
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			T_FAIL("naming refused with %s: status %#x", strerrorname_np(refusals[i]),
			       status);
	}
	T_CASE("a secret with RLIMIT_MEMLOCK 0, uid 65534: ENOMEM with the reason");
	if (geteuid()) {
		printf("  skipped: not root, cannot become uid %d\n", T_NOBODY);
		return T_EXIT_PASS;
	}
	status = t_in_child(secret_no_memlock, NULL);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		T_FAIL("RLIMIT_MEMLOCK 0: status %#x", status);
	return T_EXIT_PASS;
}
