// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Lock-on-fault: mlock2(MLOCK_ONFAULT) and mlockall(MCL_ONFAULT).
 *
 * MLOCK_ONFAULT charges the whole range to RLIMIT_MEMLOCK at once, not as
 * pages fault in, so a large lock fails up front.  The kernel only says
 * ENOMEM; mmkit repeats the kernel's own arithmetic (mm/mlock.c) first so
 * that the caller can say how much was needed against which limit.
 *
 * The kernel exempts a process from the limit with capable(CAP_IPC_LOCK),
 * which asks the initial user namespace: a process in a container's user
 * namespace holds CAP_IPC_LOCK there (capget(2) says so) and is limited all
 * the same.  Exempt is therefore the capability and the initial namespace.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/capability.h>

#include "internal.h"
#include "lock.h"
#include "procfs.h"

/*
 * PROC_USER_INIT_INO of the kernel's proc_ns.h: the initial user namespace
 * has this inode number, fixed since Linux 3.8.
 */
#define USER_NS_INIT_INO	0xEFFFFFFDULL

/* 1 if this process is in the initial user namespace, 0 if not, or -errno. */
static int in_initial_user_ns(void)
{
	uint64_t ino;
	int ret = mmkit__ns_inode(AT_FDCWD, "/proc/self/ns/user", "user", &ino);

	/* No such link: a kernel without user namespaces has only the initial one. */
	if (ret == -ENOENT)
		return 1;
	return ret ? ret : ino == USER_NS_INIT_INO;
}

/* A "Key:   N kB" line of /proc/self/status, in bytes. */
static int status_bytes(const char *key, unsigned long long *bytes)
{
	return mmkit__kb_read(AT_FDCWD, "/proc/self/status", key, bytes);
}

/*
 * Bytes of [start, end) that are already in locked VMAs: the kernel does
 * not charge them twice (count_mm_mlocked_page_nr()).
 */
static int locked_in_range(uintptr_t start, uintptr_t end, unsigned long long *bytes)
{
	struct mmkit__lines smaps;
	const char *line, *eol;
	struct mmkit__vma v = { 0 }, cur = { 0 };
	int ret;

	ret = mmkit__lines_open(&smaps, AT_FDCWD, "/proc/self/smaps");
	if (ret)
		return ret;
	*bytes = 0;
	while ((ret = mmkit__lines_next(&smaps, &line, &eol)) == 1) {
		if (!mmkit__vma_parse(line, eol, &v)) {
			/* The VMAs are in address order: none after this one is in range. */
			if (v.start >= end)
				break;
			cur = v;
		} else if (cur.end > start && mmkit__vmflags_has(line, eol, "lo")) {
			*bytes += (cur.end < end ? cur.end : end) - (cur.start > start ? cur.start : start);
		}
	}
	mmkit__lines_close(&smaps);
	return ret < 0 ? ret : 0;
}

int mmkit__memlock_exempt(void)
{
	int ret = in_initial_user_ns();

	return ret < 0 ? ret : ret && sys_has_capability(CAP_IPC_LOCK);
}

static int memlock_base(struct mmkit_memlock *m)
{
	struct rlimit rl;
	int ret;

	ret = sys_getrlimit(RLIMIT_MEMLOCK, &rl);
	if (ret)
		return ret;
	m->limit = rl.rlim_cur == RLIM_INFINITY ? MMKIT_MEMLOCK_UNLIMITED : rl.rlim_cur;
	ret = mmkit__memlock_exempt();
	if (ret < 0)
		return ret;
	m->exempt = ret;
	m->needed = 0;
	return status_bytes("VmLck", &m->locked);
}

/* 0 if the request fits the limit; -ENOMEM, with the figures, if not. */
static int memlock_verdict(const struct mmkit_memlock *m)
{
	if (m->exempt || m->limit == MMKIT_MEMLOCK_UNLIMITED || !m->needed ||
	    m->locked + m->needed <= m->limit)
		return 0;
	mmkit__error_detail(-ENOMEM,
			    "locking %llu KiB more would exceed RLIMIT_MEMLOCK: limit %llu KiB, %llu KiB locked",
			    m->needed / 1024, m->limit / 1024, m->locked / 1024);
	return -ENOMEM;
}

static int memlock_check_range(const void *addr, size_t len, struct mmkit_memlock *m)
{
	size_t page = sys_page_size();
	uintptr_t start, end;
	unsigned long long already = 0;
	int ret;

	if (!m)
		return -EINVAL;
	ret = memlock_base(m);
	/* Locking nothing costs nothing: the state as it is (a binding's empty buffer too). */
	if (ret || !len)
		return ret;
	ret = mmkit__check_range(addr, len, 0);
	if (ret)
		return ret;
	start = (uintptr_t)addr & ~(page - 1);
	end = ((uintptr_t)addr + len + page - 1) & ~(page - 1);
	if (end < start)
		return -EINVAL;
	m->needed = end - start;
	if (!memlock_verdict(m))
		return 0;
	ret = locked_in_range(start, end, &already);
	if (ret)
		return ret;
	m->needed -= already;
	return memlock_verdict(m);
}

MMKIT_EXPORT int mmkit_memlock_check(const void *addr, size_t len, struct mmkit_memlock *m)
{
	return MMKIT__CALL(memlock_check_range(addr, len, m));
}

static int lockall_flags_valid(unsigned int flags)
{
	if (flags & ~(MMKIT_LOCK_CURRENT | MMKIT_LOCK_FUTURE | MMKIT_LOCK_ONFAULT))
		return 0;
	return !!(flags & (MMKIT_LOCK_CURRENT | MMKIT_LOCK_FUTURE));
}

static int memlock_check_lockall(unsigned int flags, struct mmkit_memlock *m)
{
	unsigned long long total;
	int ret;

	if (!m)
		return -EINVAL;
	if (!lockall_flags_valid(flags)) {
		mmkit__error_detail(-EINVAL, "flags %#x: MMKIT_LOCK_CURRENT, MMKIT_LOCK_FUTURE or both, and MMKIT_LOCK_ONFAULT or not",
				    flags);
		return -EINVAL;
	}
	ret = memlock_base(m);
	if (ret || !(flags & MMKIT_LOCK_CURRENT))
		return ret;
	/* mlockall(MCL_CURRENT) compares the whole address space with the limit. */
	ret = status_bytes("VmSize", &total);
	if (ret)
		return ret;
	m->needed = total > m->locked ? total - m->locked : 0;
	return memlock_verdict(m);
}

MMKIT_EXPORT int mmkit_memlock_check_all(unsigned int flags, struct mmkit_memlock *m)
{
	return MMKIT__CALL(memlock_check_lockall(flags, m));
}

static int lock_range(void *addr, size_t len, unsigned int flags)
{
	struct mmkit_memlock m;
	int ret;

	if (flags & ~MMKIT_LOCK_ONFAULT) {
		mmkit__error_detail(-EINVAL, "flags %#x: MMKIT_LOCK_ONFAULT or 0", flags);
		return -EINVAL;
	}
	/* Checked here too: mmkit_memlock_check() takes length 0 as "no range". */
	ret = mmkit__check_range(addr, len, 0);
	if (ret)
		return ret;
	ret = mmkit_memlock_check(addr, len, &m);
	if (ret)
		return ret;
	return sys_mlock2(addr, len, flags & MMKIT_LOCK_ONFAULT ? MLOCK_ONFAULT : 0);
}

MMKIT_EXPORT int mmkit_lock(void *addr, size_t len, unsigned int flags)
{
	return MMKIT__CALL(lock_range(addr, len, flags));
}

static int unlock_range(void *addr, size_t len)
{
	int ret = mmkit__check_range(addr, len, 0);

	return ret ? ret : sys_munlock(addr, len);
}

MMKIT_EXPORT int mmkit_unlock(void *addr, size_t len)
{
	return MMKIT__CALL(unlock_range(addr, len));
}

static int lock_all(unsigned int flags)
{
	struct mmkit_memlock m;
	int mcl = 0;
	int ret;

	ret = mmkit_memlock_check_all(flags, &m);
	if (ret)
		return ret;
	if (flags & MMKIT_LOCK_CURRENT)
		mcl |= MCL_CURRENT;
	if (flags & MMKIT_LOCK_FUTURE)
		mcl |= MCL_FUTURE;
	if (flags & MMKIT_LOCK_ONFAULT)
		mcl |= MCL_ONFAULT;
	return sys_mlockall(mcl);
}

MMKIT_EXPORT int mmkit_lockall(unsigned int flags)
{
	return MMKIT__CALL(lock_all(flags));
}

MMKIT_EXPORT int mmkit_unlockall(void)
{
	return MMKIT__CALL(sys_munlockall());
}

int mmkit__probe_lock(struct mmkit_feature *f)
{
	struct mmkit_memlock m = { 0 };
	int ret = sys_mlock2(NULL, 0, MLOCK_ONFAULT);

	memlock_base(&m);
	if (ret == -ENOSYS) {
		mmkit__feature_set(f, MMKIT_STATUS_UNSUPPORTED, "none",
				   "mlock2: ENOSYS: kernel older than 4.4");
	} else if (ret == -EPERM) {
		mmkit__feature_set(f, MMKIT_STATUS_UNSUPPORTED, "none",
				   "mlock2: EPERM: RLIMIT_MEMLOCK is 0 and no CAP_IPC_LOCK");
	} else if (ret < 0) {
		mmkit__feature_set(f, MMKIT_STATUS_UNSUPPORTED, "none",
				   "mlock2(MLOCK_ONFAULT): %s", strerror(-ret));
	} else if (m.exempt || m.limit == MMKIT_MEMLOCK_UNLIMITED) {
		mmkit__feature_set(f, MMKIT_STATUS_NATIVE, "mlock2",
				   "mlock2(MLOCK_ONFAULT) works; no RLIMIT_MEMLOCK applies (%s), %llu KiB locked",
				   m.exempt ? "CAP_IPC_LOCK" : "unlimited", m.locked / 1024);
	} else {
		mmkit__feature_set(f, MMKIT_STATUS_NATIVE, "mlock2",
				   "mlock2(MLOCK_ONFAULT) works; RLIMIT_MEMLOCK %llu KiB, %llu KiB locked",
				   m.limit / 1024, m.locked / 1024);
	}
	/* The reason gives RLIMIT_MEMLOCK and what is locked, which change: asked again. */
	return 0;
}
