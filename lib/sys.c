// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The kernel-facing layer (see sys.h).  Each wrapper saves errno, makes the
 * call, turns a failure into -errno and puts errno back.  The mlock family
 * goes through syscall(2): sanitizer runtimes replace the libc wrappers
 * with no-ops, and the library must lock what it says it locks.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/fsuid.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <linux/capability.h>

#include "sys.h"

#define SAVE_ERRNO	int saved_errno_ = errno
#define RESULT(expr)	({ long r_ = (long)(expr); if (r_ == -1) r_ = -errno; errno = saved_errno_; r_; })

/*
 * Makes @call, which glibc makes a cancellation point (open, close, read,
 * write and their kin, getrandom, nanosleep), with the thread's
 * cancellation disabled, as glibc's own code makes its _nocancel variants:
 * no libmmkit call acts on a pthread_cancel(3).  A thread cancelled there
 * died holding the lock of the part it was in (the secret allocator's
 * /proc reads and memfd_secret close, a registry's or a pattern file's
 * writes), and every later call in any thread waited for good; elsewhere
 * it lost the descriptors it had open.  The cancellation stays pending
 * for the caller's next cancellation point.  Two stores to the thread's
 * own word, against a system call; pthread_setcancelstate() leaves errno
 * alone.
 */
#define NOCANCEL(call)	({ int cs_; long c_;						\
			   pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &cs_);	\
			   c_ = (long)(call);						\
			   pthread_setcancelstate(cs_, NULL);				\
			   c_; })

/*
 * The fault switch (sys.h).  Wrappers may run in several threads and in
 * signal handlers: the fields are read and changed with atomics, and the
 * countdown picks exactly one call to fail.
 */
static struct {
	int armed;
	enum sys_fault_kind kind;
	unsigned long left;
	int err;
	enum sys_fault_kind fired;
	unsigned long injected;
} fault;

static int fault_take(enum sys_fault_kind kind)
{
	enum sys_fault_kind want = __atomic_load_n(&fault.kind, __ATOMIC_ACQUIRE);
	int release = kind == SYS_FAULT_MUNMAP || kind == SYS_FAULT_CLOSE ||
		      kind == SYS_FAULT_MUNLOCK;

	if (want != kind && (want != SYS_FAULT_ANY || release))
		return 0;
	if (__atomic_sub_fetch(&fault.left, 1, __ATOMIC_ACQ_REL) != 0)
		return 0;
	if (!__atomic_exchange_n(&fault.armed, 0, __ATOMIC_ACQ_REL))
		return 0;
	__atomic_store_n(&fault.fired, kind, __ATOMIC_RELEASE);
	__atomic_add_fetch(&fault.injected, 1, __ATOMIC_RELAXED);
	return -__atomic_load_n(&fault.err, __ATOMIC_RELAXED);
}

/* 0, or the -errno an armed switch injects into this call of @kind. */
static inline int fault_check(enum sys_fault_kind kind)
{
	if (__builtin_expect(__atomic_load_n(&fault.armed, __ATOMIC_RELAXED), 0))
		return fault_take(kind);
	return 0;
}

#define FAULT(kind)	do { int f_ = fault_check(kind); if (f_) return f_; } while (0)

void sys_fault_arm(enum sys_fault_kind kind, unsigned long nth, int err)
{
	__atomic_store_n(&fault.armed, 0, __ATOMIC_RELEASE);
	__atomic_store_n(&fault.kind, kind, __ATOMIC_RELAXED);
	__atomic_store_n(&fault.left, nth, __ATOMIC_RELAXED);
	__atomic_store_n(&fault.err, err, __ATOMIC_RELAXED);
	__atomic_store_n(&fault.fired, SYS_FAULT_ANY, __ATOMIC_RELAXED);
	__atomic_store_n(&fault.armed, nth > 0 && err > 0, __ATOMIC_RELEASE);
}

enum sys_fault_kind sys_fault_disarm(void)
{
	__atomic_store_n(&fault.armed, 0, __ATOMIC_RELEASE);
	return __atomic_load_n(&fault.fired, __ATOMIC_ACQUIRE);
}

unsigned long sys_fault_suspend(void)
{
	if (!__atomic_exchange_n(&fault.armed, 0, __ATOMIC_ACQ_REL))
		return 0;
	return __atomic_load_n(&fault.left, __ATOMIC_ACQUIRE);
}

unsigned long sys_fault_injected(void)
{
	return __atomic_load_n(&fault.injected, __ATOMIC_RELAXED);
}

int sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off, void **out)
{
	FAULT(SYS_FAULT_MMAP);
	SAVE_ERRNO;
	void *p = mmap(addr, len, prot, flags, fd, off);
	int ret = p == MAP_FAILED ? -errno : 0;

	errno = saved_errno_;
	if (!ret)
		*out = p;
	return ret;
}

int sys_munmap(void *addr, size_t len)
{
	FAULT(SYS_FAULT_MUNMAP);
	SAVE_ERRNO;
	return RESULT(munmap(addr, len));
}

int sys_mprotect(void *addr, size_t len, int prot)
{
	FAULT(SYS_FAULT_MPROTECT);
	SAVE_ERRNO;
	return RESULT(mprotect(addr, len, prot));
}

int sys_madvise(void *addr, size_t len, int advice)
{
	FAULT(SYS_FAULT_MADVISE);
	SAVE_ERRNO;
	return RESULT(madvise(addr, len, advice));
}

int sys_mremap(void *old, size_t old_len, size_t new_len, int flags, void *new_addr, void **out)
{
	FAULT(SYS_FAULT_MREMAP);
	SAVE_ERRNO;
	void *p = mremap(old, old_len, new_len, flags, new_addr);
	int ret = p == MAP_FAILED ? -errno : 0;

	errno = saved_errno_;
	if (!ret)
		*out = p;
	return ret;
}

int sys_mlock2(const void *addr, size_t len, unsigned int flags)
{
	FAULT(SYS_FAULT_MLOCK);
	SAVE_ERRNO;
	return RESULT(syscall(SYS_mlock2, addr, len, flags));
}

int sys_munlock(const void *addr, size_t len)
{
	FAULT(SYS_FAULT_MUNLOCK);
	SAVE_ERRNO;
	return RESULT(syscall(SYS_munlock, addr, len));
}

int sys_mlockall(int flags)
{
	FAULT(SYS_FAULT_MLOCK);
	SAVE_ERRNO;
	return RESULT(syscall(SYS_mlockall, flags));
}

int sys_munlockall(void)
{
	FAULT(SYS_FAULT_MUNLOCK);
	SAVE_ERRNO;
	return RESULT(syscall(SYS_munlockall));
}

int sys_mincore(void *addr, size_t len, unsigned char *vec)
{
	FAULT(SYS_FAULT_MINCORE);
	SAVE_ERRNO;
	return RESULT(mincore(addr, len, vec));
}

int sys_prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5)
{
	FAULT(SYS_FAULT_PRCTL);
	SAVE_ERRNO;
	return RESULT(prctl(option, a2, a3, a4, a5));
}

int sys_getrlimit(int resource, struct rlimit *rl)
{
	FAULT(SYS_FAULT_RLIMIT);
	SAVE_ERRNO;
	return RESULT(getrlimit(resource, rl));
}

int sys_setrlimit(int resource, const struct rlimit *rl)
{
	FAULT(SYS_FAULT_RLIMIT);
	SAVE_ERRNO;
	return RESULT(setrlimit(resource, rl));
}

unsigned long sys_getauxval(unsigned long type)
{
	SAVE_ERRNO;
	unsigned long v = getauxval(type);

	errno = saved_errno_;
	return v;
}

unsigned long long sys_phys_bytes(void)
{
	struct sysinfo si;
	int ret;

	SAVE_ERRNO;
	ret = sysinfo(&si);
	errno = saved_errno_;
	return ret ? 0 : (unsigned long long)si.totalram * si.mem_unit;
}

size_t sys_page_size(void)
{
	static size_t page_size;

	if (!page_size)
		page_size = sys_getauxval(AT_PAGESZ);
	return page_size;
}

pid_t sys_getpid(void)
{
	return getpid();
}

pid_t sys_gettid(void)
{
	return (pid_t)syscall(SYS_gettid);
}

/* setfsuid(-1) changes nothing (an invalid id) and returns the current one. */
uid_t sys_fsuid(void)
{
	SAVE_ERRNO;
	uid_t uid = (uid_t)setfsuid((uid_t)-1);

	errno = saved_errno_;
	return uid;
}

int sys_has_capability(int cap)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	SAVE_ERRNO;
	long r = fault_check(SYS_FAULT_CAPGET);

	if (!r)
		r = RESULT(syscall(SYS_capget, &hdr, data));
	if (r < 0 || cap < 0 || cap >= 32 * _LINUX_CAPABILITY_U32S_3)
		return 0;
	return !!(data[cap / 32].effective & (1u << (cap % 32)));
}

int sys_memfd_create(const char *name, unsigned int flags)
{
	FAULT(SYS_FAULT_FD_CREATE);
	SAVE_ERRNO;
	return RESULT(syscall(SYS_memfd_create, name, flags));
}

int sys_memfd_secret(unsigned int flags)
{
#ifdef SYS_memfd_secret
	FAULT(SYS_FAULT_FD_CREATE);
	SAVE_ERRNO;
	return RESULT(syscall(SYS_memfd_secret, flags));
#else
	(void)flags;
	return -ENOSYS;
#endif
}

int sys_userfaultfd(int flags)
{
	FAULT(SYS_FAULT_FD_CREATE);
	SAVE_ERRNO;
	return RESULT(syscall(SYS_userfaultfd, flags));
}

/*
 * refpage_create(2) of kernels with the reference-page series, by the
 * number such a kernel publishes (lib/refpage-syscall.c): the call has no
 * number of its own in any libc.  (content, size, flags): the series' v1
 * took (content, size | flags), which reads these arguments the same.
 */
int sys_refpage_create(long nr, const void *content, size_t size, unsigned int flags)
{
	FAULT(SYS_FAULT_FD_CREATE);
	SAVE_ERRNO;
	return RESULT(syscall(nr, content, size, flags));
}

int sys_open(const char *path, int flags, mode_t mode)
{
	FAULT(SYS_FAULT_OPEN);
	SAVE_ERRNO;
	return RESULT(NOCANCEL(open(path, flags, mode)));
}

int sys_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	FAULT(SYS_FAULT_OPEN);
	SAVE_ERRNO;
	return RESULT(NOCANCEL(openat(dirfd, path, flags, mode)));
}

int sys_fstatfs(int fd, struct statfs *buf)
{
	SAVE_ERRNO;
	return RESULT(fstatfs(fd, buf));
}

/* An injected failure still closes @fd: Linux releases it whatever close(2) returns. */
int sys_close(int fd)
{
	int injected = fault_check(SYS_FAULT_CLOSE);
	SAVE_ERRNO;
	long r = RESULT(NOCANCEL(close(fd)));

	return injected ? injected : (int)r;
}

ssize_t sys_read(int fd, void *buf, size_t len)
{
	FAULT(SYS_FAULT_READ);
	SAVE_ERRNO;
	return RESULT(NOCANCEL(read(fd, buf, len)));
}

ssize_t sys_pread(int fd, void *buf, size_t len, off_t off)
{
	FAULT(SYS_FAULT_READ);
	SAVE_ERRNO;
	return RESULT(NOCANCEL(pread(fd, buf, len, off)));
}

ssize_t sys_write(int fd, const void *buf, size_t len)
{
	FAULT(SYS_FAULT_WRITE);
	SAVE_ERRNO;
	return RESULT(NOCANCEL(write(fd, buf, len)));
}

ssize_t sys_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	FAULT(SYS_FAULT_WRITE);
	SAVE_ERRNO;
	return RESULT(NOCANCEL(pwrite(fd, buf, len, off)));
}

ssize_t sys_pwritev(int fd, const struct iovec *iov, int iovcnt, off_t off)
{
	FAULT(SYS_FAULT_WRITE);
	SAVE_ERRNO;
	return RESULT(NOCANCEL(pwritev(fd, iov, iovcnt, off)));
}

int sys_dup3(int oldfd, int newfd, int flags)
{
	FAULT(SYS_FAULT_FD_CREATE);
	SAVE_ERRNO;
	return RESULT(dup3(oldfd, newfd, flags));
}

int sys_ftruncate(int fd, off_t len)
{
	FAULT(SYS_FAULT_FTRUNCATE);
	SAVE_ERRNO;
	return RESULT(ftruncate(fd, len));
}

int sys_fstat(int fd, struct stat *st)
{
	FAULT(SYS_FAULT_FSTAT);
	SAVE_ERRNO;
	return RESULT(fstat(fd, st));
}

int sys_ioctl(int fd, unsigned long req, void *arg)
{
	FAULT(SYS_FAULT_IOCTL);
	SAVE_ERRNO;
	return RESULT(ioctl(fd, req, arg));
}

int sys_fcntl(int fd, int cmd, unsigned long arg)
{
	FAULT(SYS_FAULT_IOCTL);
	SAVE_ERRNO;
	return RESULT(fcntl(fd, cmd, arg));
}

ssize_t sys_readlinkat(int dirfd, const char *path, char *buf, size_t len)
{
	FAULT(SYS_FAULT_READ);
	SAVE_ERRNO;
	return RESULT(readlinkat(dirfd, path, buf, len));
}

ssize_t sys_getdents64(int fd, void *buf, size_t len)
{
	FAULT(SYS_FAULT_READ);
	SAVE_ERRNO;
	return RESULT(syscall(SYS_getdents64, fd, buf, len));
}

ssize_t sys_process_vm_readv(pid_t pid, const struct iovec *local, unsigned long nlocal,
			     const struct iovec *remote, unsigned long nremote)
{
	FAULT(SYS_FAULT_READ);
	SAVE_ERRNO;
	return RESULT(process_vm_readv(pid, local, nlocal, remote, nremote, 0));
}

int sys_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	FAULT(SYS_FAULT_SIGACTION);
	SAVE_ERRNO;
	return RESULT(sigaction(sig, act, old));
}

int sys_access(const char *path, int mode)
{
	FAULT(SYS_FAULT_ACCESS);
	SAVE_ERRNO;
	return RESULT(access(path, mode));
}

int sys_raise(int sig)
{
	FAULT(SYS_FAULT_RAISE);
	SAVE_ERRNO;
	return RESULT(syscall(SYS_tgkill, getpid(), syscall(SYS_gettid), sig));
}

int sys_signal_blocked(int sig)
{
	sigset_t set;
	/* pthread_sigmask() returns an error number and leaves errno alone. */
	int err = pthread_sigmask(SIG_BLOCK, NULL, &set);

	if (err)
		return -err;
	return sigismember(&set, sig) == 1;
}

int sys_getrandom(void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		SAVE_ERRNO;
		long n = fault_check(SYS_FAULT_GETRANDOM);

		if (!n)
			n = RESULT(NOCANCEL(getrandom((char *)buf + done, len - done, 0)));

		if (n == -EINTR)
			continue;
		if (n < 0)
			return (int)n;
		done += (size_t)n;
	}
	return 0;
}

static uint64_t clock_ns(clockid_t clock)
{
	SAVE_ERRNO;
	struct timespec ts;

	clock_gettime(clock, &ts);
	errno = saved_errno_;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t sys_monotonic_ns(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}

uint64_t sys_thread_cpu_ns(void)
{
	return clock_ns(CLOCK_THREAD_CPUTIME_ID);
}

void sys_sleep_ns(uint64_t ns)
{
	SAVE_ERRNO;
	struct timespec ts = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	NOCANCEL(nanosleep(&ts, NULL));
	errno = saved_errno_;
}

void sys_yield(void)
{
	SAVE_ERRNO;
	sched_yield();
	errno = saved_errno_;
}
