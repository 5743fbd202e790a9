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
#include <unistd.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "sys.h"

#define SAVE_ERRNO	int saved_errno_ = errno
#define RESULT(expr)	({ long r_ = (long)(expr); if (r_ == -1) r_ = -errno; errno = saved_errno_; r_; })

int sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off, void **out)
{
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
	SAVE_ERRNO;
	return RESULT(munmap(addr, len));
}

int sys_mprotect(void *addr, size_t len, int prot)
{
	SAVE_ERRNO;
	return RESULT(mprotect(addr, len, prot));
}

int sys_madvise(void *addr, size_t len, int advice)
{
	SAVE_ERRNO;
	return RESULT(madvise(addr, len, advice));
}

int sys_mremap(void *old, size_t old_len, size_t new_len, int flags, void *new_addr, void **out)
{
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
	SAVE_ERRNO;
	return RESULT(syscall(SYS_mlock2, addr, len, flags));
}

int sys_munlock(const void *addr, size_t len)
{
	SAVE_ERRNO;
	return RESULT(syscall(SYS_munlock, addr, len));
}

int sys_mlockall(int flags)
{
	SAVE_ERRNO;
	return RESULT(syscall(SYS_mlockall, flags));
}

int sys_munlockall(void)
{
	SAVE_ERRNO;
	return RESULT(syscall(SYS_munlockall));
}

int sys_mincore(void *addr, size_t len, unsigned char *vec)
{
	SAVE_ERRNO;
	return RESULT(mincore(addr, len, vec));
}

int sys_prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5)
{
	SAVE_ERRNO;
	return RESULT(prctl(option, a2, a3, a4, a5));
}

int sys_getrlimit(int resource, struct rlimit *rl)
{
	SAVE_ERRNO;
	return RESULT(getrlimit(resource, rl));
}

int sys_setrlimit(int resource, const struct rlimit *rl)
{
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

int sys_has_capability(int cap)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[_LINUX_CAPABILITY_U32S_3];
	SAVE_ERRNO;
	long r = RESULT(syscall(SYS_capget, &hdr, data));

	if (r < 0 || cap < 0 || cap >= 32 * _LINUX_CAPABILITY_U32S_3)
		return 0;
	return !!(data[cap / 32].effective & (1u << (cap % 32)));
}

int sys_memfd_create(const char *name, unsigned int flags)
{
	SAVE_ERRNO;
	return RESULT(syscall(SYS_memfd_create, name, flags));
}

int sys_memfd_secret(unsigned int flags)
{
#ifdef SYS_memfd_secret
	SAVE_ERRNO;
	return RESULT(syscall(SYS_memfd_secret, flags));
#else
	(void)flags;
	return -ENOSYS;
#endif
}

int sys_userfaultfd(int flags)
{
	SAVE_ERRNO;
	return RESULT(syscall(SYS_userfaultfd, flags));
}

int sys_open(const char *path, int flags, mode_t mode)
{
	SAVE_ERRNO;
	return RESULT(open(path, flags, mode));
}

int sys_openat(int dirfd, const char *path, int flags, mode_t mode)
{
	SAVE_ERRNO;
	return RESULT(openat(dirfd, path, flags, mode));
}

int sys_close(int fd)
{
	SAVE_ERRNO;
	return RESULT(close(fd));
}

ssize_t sys_read(int fd, void *buf, size_t len)
{
	SAVE_ERRNO;
	return RESULT(read(fd, buf, len));
}

ssize_t sys_pread(int fd, void *buf, size_t len, off_t off)
{
	SAVE_ERRNO;
	return RESULT(pread(fd, buf, len, off));
}

ssize_t sys_write(int fd, const void *buf, size_t len)
{
	SAVE_ERRNO;
	return RESULT(write(fd, buf, len));
}

ssize_t sys_pwrite(int fd, const void *buf, size_t len, off_t off)
{
	SAVE_ERRNO;
	return RESULT(pwrite(fd, buf, len, off));
}

int sys_ftruncate(int fd, off_t len)
{
	SAVE_ERRNO;
	return RESULT(ftruncate(fd, len));
}

int sys_fstat(int fd, struct stat *st)
{
	SAVE_ERRNO;
	return RESULT(fstat(fd, st));
}

int sys_ioctl(int fd, unsigned long req, void *arg)
{
	SAVE_ERRNO;
	return RESULT(ioctl(fd, req, arg));
}

ssize_t sys_readlinkat(int dirfd, const char *path, char *buf, size_t len)
{
	SAVE_ERRNO;
	return RESULT(readlinkat(dirfd, path, buf, len));
}

ssize_t sys_getdents64(int fd, void *buf, size_t len)
{
	SAVE_ERRNO;
	return RESULT(syscall(SYS_getdents64, fd, buf, len));
}

ssize_t sys_process_vm_readv(pid_t pid, const struct iovec *local, unsigned long nlocal,
			     const struct iovec *remote, unsigned long nremote)
{
	SAVE_ERRNO;
	return RESULT(process_vm_readv(pid, local, nlocal, remote, nremote, 0));
}

int sys_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	SAVE_ERRNO;
	return RESULT(sigaction(sig, act, old));
}

int sys_access(const char *path, int mode)
{
	SAVE_ERRNO;
	return RESULT(access(path, mode));
}

int sys_raise(int sig)
{
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

void sys_yield(void)
{
	/* Always 0 on Linux: errno stays as it was. */
	sched_yield();
}

int sys_getrandom(void *buf, size_t len)
{
	size_t done = 0;

	while (done < len) {
		SAVE_ERRNO;
		long n = RESULT(getrandom((char *)buf + done, len - done, 0));

		if (n == -EINTR)
			continue;
		if (n < 0)
			return (int)n;
		done += (size_t)n;
	}
	return 0;
}
