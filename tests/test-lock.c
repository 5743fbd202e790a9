// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Lock-on-fault: mmkit_lock/mmkit_lockall and the RLIMIT_MEMLOCK check that
 * runs before them.  The check must agree with the kernel's own decision,
 * so the unprivileged cases compare it with raw mlock2()/mlockall() calls
 * (through syscall(2): sanitizer runtimes turn the libc mlock family into no-ops).
 * Root in a child user namespace is limited like anyone; 20,000 VMAs in the
 * way of the check cost little.
 */
#include <fcntl.h>
#include <sched.h>
#include <stdint.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "harness.h"
#include "mmkit.h"

#define KIB	1024ULL
#define MIB	(1024ULL * 1024)

static unsigned long long vm_locked(void)
{
	struct mmkit_memlock m;

	T_EQ(mmkit_memlock_check(NULL, 0, &m), 0);
	return m.locked;
}

static void *map_anon(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	T_ASSERT(p != MAP_FAILED);
	return p;
}

static void set_memlock_limit(unsigned long long bytes)
{
	struct rlimit rl = { bytes, bytes };

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		T_FAIL("setrlimit(RLIMIT_MEMLOCK, %llu): %s", bytes, strerror(errno));
}

static int raw_mlock2_onfault(void *addr, size_t len)
{
	return syscall(SYS_mlock2, addr, len, MLOCK_ONFAULT) ? -errno : 0;
}

static void test_bad_input(void)
{
	struct mmkit_memlock m;
	char *p = map_anon(4096);

	T_CASE("bad input: len 0, wrapping range, unknown flags, NULL out");
	T_EQ(mmkit_lock(p, 0, MMKIT_LOCK_ONFAULT), -EINVAL);
	T_EQ(mmkit_lock(NULL, 0, 0), -EINVAL);
	T_EQ(mmkit_unlock(NULL, 0), -EINVAL);
	T_EQ(mmkit_lock((void *)(UINTPTR_MAX & ~4095UL), 8192, 0), -EINVAL);
	T_EQ(mmkit_lock(p, 4096, 0x80), -EINVAL);
	T_EQ(mmkit_lock(p, 4096, MMKIT_LOCK_CURRENT), -EINVAL);
	T_EQ(mmkit_unlock(p, 0), -EINVAL);
	T_EQ(mmkit_lockall(0), -EINVAL);
	T_EQ(mmkit_lockall(MMKIT_LOCK_ONFAULT), -EINVAL);
	T_EQ(mmkit_lockall(MMKIT_LOCK_CURRENT | 0x100), -EINVAL);
	T_EQ(mmkit_memlock_check(p, 4096, NULL), -EINVAL);
	T_EQ(mmkit_memlock_check_all(MMKIT_LOCK_CURRENT, NULL), -EINVAL);
	T_EQ(mmkit_memlock_check_all(0, &m), -EINVAL);
	munmap(p, 4096);
}

/* A 64 MiB lock-on-fault is charged whole at once but populates nothing. */
static void test_onfault_charges_whole_range(void)
{
	size_t len = 64 * MIB;
	unsigned long long before = vm_locked();
	char *p = map_anon(len);
	unsigned char vec[4];

	T_CASE("ONFAULT charges the whole range, populates only touched pages");
	/* With THP "always" one touch would populate a whole 2 MiB page. */
	T_EQ(madvise(p, len, MADV_NOHUGEPAGE), 0);
	T_EQ(mmkit_lock(p, len, MMKIT_LOCK_ONFAULT), 0);
	T_EQ(vm_locked() - before, len);
	T_EQ(mincore(p + 8 * MIB, 4 * 4096, vec), 0);
	T_EQ(vec[0] & 1, 0);
	p[8 * MIB] = 1;
	T_EQ(mincore(p + 8 * MIB, 4 * 4096, vec), 0);
	T_EQ(vec[0] & 1, 1);
	T_EQ(vec[1] & 1, 0);
	T_EQ(mmkit_unlock(p, len), 0);
	T_EQ(vm_locked(), before);
	munmap(p, len);
}

static void unprivileged_limits(void *arg)
{
	struct mmkit_memlock m;
	size_t page = 4096;
	char *p = map_anon(4 * MIB), *q = map_anon(4 * MIB);

	(void)arg;
	set_memlock_limit(1 * MIB);
	t_become_nobody();

	T_EQ(mmkit_memlock_check(NULL, 0, &m), 0);
	T_EQ(m.limit, 1 * MIB);
	T_EQ(m.exempt, 0);
	T_EQ(m.locked, 0);

	/* Over the limit: -ENOMEM with the figures, and the kernel agrees. */
	T_EQ(mmkit_lock(p, 2 * MIB, MMKIT_LOCK_ONFAULT), -ENOMEM);
	T_EQ(mmkit_memlock_check(p, 2 * MIB, &m), -ENOMEM);
	T_EQ(m.needed, 2 * MIB);
	T_EQ(m.limit, 1 * MIB);
	T_EQ(raw_mlock2_onfault(p, 2 * MIB), -ENOMEM);

	/* Up to the limit exactly: fits, and the kernel agrees. */
	T_EQ(mmkit_lock(p, 768 * KIB, MMKIT_LOCK_ONFAULT), 0);
	T_EQ(mmkit_memlock_check(NULL, 0, &m), 0);
	T_EQ(m.locked, 768 * KIB);
	T_EQ(mmkit_memlock_check(q, 256 * KIB, &m), 0);
	T_EQ(mmkit_memlock_check(q, 256 * KIB + page, &m), -ENOMEM);
	T_EQ(m.needed, 256 * KIB + page);
	T_EQ(m.locked, 768 * KIB);
	T_EQ(raw_mlock2_onfault(q, 256 * KIB + page), -ENOMEM);

	/* An unaligned start covers one more page, as in the kernel. */
	T_EQ(mmkit_memlock_check(q + 1, 256 * KIB, &m), -ENOMEM);
	T_EQ(m.needed, 256 * KIB + page);

	/* Locking an already locked range again costs nothing more. */
	T_EQ(mmkit_lock(p, 768 * KIB, MMKIT_LOCK_ONFAULT), 0);
	T_EQ(mmkit_memlock_check(p, 1 * MIB, &m), 0);
	T_EQ(m.needed, 256 * KIB);
	T_EQ(raw_mlock2_onfault(p, 1 * MIB), 0);
	T_EQ(mmkit_memlock_check(NULL, 0, &m), 0);
	T_EQ(m.locked, 1 * MIB);

	/* mlockall(MCL_CURRENT) compares the whole address space with the limit. */
	T_EQ(mmkit_lockall(MMKIT_LOCK_CURRENT | MMKIT_LOCK_ONFAULT), -ENOMEM);
	T_EQ(mmkit_memlock_check_all(MMKIT_LOCK_CURRENT, &m), -ENOMEM);
	T_ASSERT(m.locked + m.needed > m.limit);
	T_EQ(syscall(SYS_mlockall, MCL_CURRENT | MCL_ONFAULT) ? -errno : 0, -ENOMEM);
	T_EQ(mmkit_memlock_check_all(MMKIT_LOCK_FUTURE, &m), 0);
	T_EQ(m.needed, 0);
	_exit(0);
}

static void limit_zero(void *arg)
{
	char *p = map_anon(4096);
	struct mmkit_memlock m;

	(void)arg;
	set_memlock_limit(0);
	t_become_nobody();
	T_EQ(mmkit_lock(p, 4096, MMKIT_LOCK_ONFAULT), -ENOMEM);
	T_EQ(mmkit_memlock_check(p, 4096, &m), -ENOMEM);
	T_EQ(m.limit, 0);
	/* As mmkit_lock(3) says: the kernel's own answer under a limit of 0 is EPERM. */
	T_EQ(raw_mlock2_onfault(p, 4096), -EPERM);
	_exit(0);
}

/*
 * A range with a hole: the kernel locks the mapped part before the hole,
 * then fails with ENOMEM, and that part stays locked (mmkit_lock(3) says
 * so, and that mmkit_unlock() of the range takes it back).
 */
static void test_hole_keeps_front_locked(void)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	char *p = map_anon(3 * page);
	unsigned long long before = vm_locked();

	T_ASSERT(!munmap(p + page, page));
	T_EQ(mmkit_lock(p, 3 * page, 0), -ENOMEM);
	T_EQ(vm_locked(), before + page);
	T_EQ(mmkit_unlock(p, page), 0);
	T_EQ(vm_locked(), before);
	munmap(p, 3 * page);
}

static void lockall_future_unprivileged(void *arg)
{
	char *p;

	(void)arg;
	set_memlock_limit(1 * MIB);
	t_become_nobody();
	T_EQ(mmkit_lockall(MMKIT_LOCK_FUTURE | MMKIT_LOCK_ONFAULT), 0);
	p = map_anon(64 * KIB);
	T_EQ(vm_locked(), 64 * KIB);
	T_EQ(mmkit_unlockall(), 0);
	T_EQ(vm_locked(), 0);
	munmap(p, 64 * KIB);
	_exit(0);
}

static void lockall_current_exempt(void *arg)
{
	(void)arg;
	T_EQ(mmkit_lockall(MMKIT_LOCK_CURRENT | MMKIT_LOCK_ONFAULT), 0);
	T_ASSERT(vm_locked() > 0);
	T_EQ(mmkit_unlockall(), 0);
	T_EQ(vm_locked(), 0);
	_exit(0);
}

/* Exit status of a child that found no user namespace to enter. */
#define NO_USERNS	3

/*
 * Root with CAP_IPC_LOCK in a new user namespace: the kernel's capable()
 * asks the initial namespace, so the limit applies, and mmkit must say so.
 */
static void userns_limited(void *arg)
{
	char *p = map_anon(4 * MIB);
	struct mmkit_memlock m;
	int fd;

	(void)arg;
	set_memlock_limit(1 * MIB);
	if (unshare(CLONE_NEWUSER)) {
		printf("    (unshare(CLONE_NEWUSER): %s)\n", strerror(errno));
		fflush(stdout);
		_exit(NO_USERNS);
	}
	/* uid 0 inside is root outside: only the namespace differs from the root case. */
	fd = open("/proc/self/uid_map", O_WRONLY);
	T_ASSERT(fd >= 0);
	T_EQ(write(fd, "0 0 1\n", 6), 6);
	close(fd);
	T_EQ(geteuid(), 0);
	T_EQ(mmkit_memlock_check(NULL, 0, &m), 0);
	T_EQ(m.exempt, 0);
	T_EQ(mmkit_memlock_check(p, 2 * MIB, &m), -ENOMEM);
	T_EQ(mmkit_lock(p, 2 * MIB, MMKIT_LOCK_ONFAULT), -ENOMEM);
	T_EQ(raw_mlock2_onfault(p, 2 * MIB), -ENOMEM);
	T_EQ(mmkit_lock(p, 512 * KIB, MMKIT_LOCK_ONFAULT), 0);
	fflush(stdout);
	_exit(0);
}

#define MANY_VMAS	20000
/* A check over 10 s of CPU fails if it also cost this many plain reads of smaps. */
#define SMAPS_READS	20

/* The seconds of CPU of reading /proc/self/smaps whole, the least of three. */
static double smaps_read_cpu(void)
{
	static char buf[1 << 16];
	double t, best = 1e30;
	int round, fd;

	for (round = 0; round < 3; round++) {
		fd = open("/proc/self/smaps", O_RDONLY | O_CLOEXEC);
		T_ASSERT(fd >= 0);
		t = t_cpu();
		while (read(fd, buf, sizeof(buf)) > 0)
			;
		t = t_cpu() - t;
		close(fd);
		best = t < best ? t : best;
	}
	return best;
}

/*
 * An over-limit check of a range of 20,000 VMAs reads all of their smaps
 * to find the pages already locked; it must cost about one read of it.
 */
static void many_vmas(void *arg)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE), len = MANY_VMAS * page, i;
	char *p = map_anon(len);
	struct mmkit_memlock m;
	double t;

	(void)arg;
	/* Every other page read-only: neighbours never merge. */
	for (i = 1; i < MANY_VMAS; i += 2)
		T_EQ(mprotect(p + i * page, page, PROT_READ), 0);
	set_memlock_limit(1 * MIB);
	t_become_nobody();
	T_EQ(mmkit_lock(p + 2 * page, 2 * page, MMKIT_LOCK_ONFAULT), 0);
	T_EQ(mmkit_lock(p + (MANY_VMAS - 2) * page, page, MMKIT_LOCK_ONFAULT), 0);
	t = t_cpu();
	T_EQ(mmkit_memlock_check(p, len, &m), -ENOMEM);
	t = t_cpu() - t;
	printf("    mmkit_memlock_check over %d VMAs: %.3f s of CPU\n", MANY_VMAS, t);
	/* Found all three locked pages, the last near the end of the range. */
	T_EQ(m.needed, len - 3 * page);
	/*
	 * Linear: 0.12 s here, 2.1 s in the KASAN kernel tier under emulation;
	 * the quadratic reader it replaces took 99 s here.  CPU time, not wall
	 * time, and where that is over 10 s, compared with plain reads of
	 * smaps measured on the spot: an emulated guest's CPU time is near its
	 * wall time, and one beside another on a loaded host took 14.3 s for
	 * the linear check.
	 */
	if (t >= 10.0) {
		double reads = smaps_read_cpu();

		printf("    (slow machine: one read of smaps used %.3f s of CPU)\n", reads);
		if (t > SMAPS_READS * reads)
			T_FAIL("mmkit_memlock_check over %d VMAs used %.3f s of CPU (limits 10 s,"
			       " and %d reads of smaps: %.3f s)", MANY_VMAS, t, SMAPS_READS,
			       SMAPS_READS * reads);
	}
	fflush(stdout);
	_exit(0);
}

int main(void)
{
	struct mmkit_memlock m;
	int status;

	test_bad_input();
	if (!t_is_root())
		T_SKIP("the lock tests set RLIMIT_MEMLOCK and drop to uid %d: run as root", T_NOBODY);
	T_CASE("root is exempt from RLIMIT_MEMLOCK");
	T_EQ(mmkit_memlock_check(NULL, 0, &m), 0);
	T_EQ(m.exempt, 1);
	test_onfault_charges_whole_range();
	T_CASE("a range with a hole: -ENOMEM, the part before the hole stays locked");
	test_hole_keeps_front_locked();
	T_CASE("unprivileged: over-limit -ENOMEM with figures; verdicts match the kernel");
	T_CHILD_OK(t_in_child(unprivileged_limits, NULL));
	T_CASE("unprivileged: RLIMIT_MEMLOCK 0");
	T_CHILD_OK(t_in_child(limit_zero, NULL));
	T_CASE("unprivileged: lockall(FUTURE|ONFAULT) locks later mappings");
	T_CHILD_OK(t_in_child(lockall_future_unprivileged, NULL));
	T_CASE("root: lockall(CURRENT|ONFAULT)");
	T_CHILD_OK(t_in_child(lockall_current_exempt, NULL));
	T_CASE("unprivileged: an over-limit check across 20,000 VMAs uses < 10 s of CPU");
	T_CHILD_OK(t_in_child(many_vmas, NULL));
	T_CASE("root in a child user namespace: not exempt, limited as the kernel does");
	status = t_in_child(userns_limited, NULL);
	if (WIFEXITED(status) && WEXITSTATUS(status) == NO_USERNS)
		T_SKIP("no user namespace could be made: the namespace case is not checked");
	T_CHILD_OK(status);
	return T_EXIT_PASS;
}
