/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * The kernel-facing layer: the only code in libmmkit that makes system
 * calls.  Every wrapper returns a non-negative result or -errno and leaves
 * the caller's errno as it was, so the rest of the library never sees errno.
 * None is a cancellation point (sys.c says why): nothing in the library
 * acts on a pthread_cancel(3).
 */
#ifndef MMKIT_SYS_H
#define MMKIT_SYS_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/resource.h>
#include <sys/uio.h>

/* Memory mappings. */
int sys_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off, void **out);
int sys_munmap(void *addr, size_t len);
int sys_mprotect(void *addr, size_t len, int prot);
int sys_madvise(void *addr, size_t len, int advice);
int sys_mremap(void *old, size_t old_len, size_t new_len, int flags, void *new_addr, void **out);
int sys_mlock2(const void *addr, size_t len, unsigned int flags);
int sys_munlock(const void *addr, size_t len);
int sys_mlockall(int flags);
int sys_munlockall(void);
int sys_mincore(void *addr, size_t len, unsigned char *vec);

/* Process control. */
int sys_prctl(int option, unsigned long a2, unsigned long a3, unsigned long a4, unsigned long a5);
int sys_getrlimit(int resource, struct rlimit *rl);
int sys_setrlimit(int resource, const struct rlimit *rl);
unsigned long sys_getauxval(unsigned long type);
size_t sys_page_size(void);
/* The machine's physical memory in bytes (sysinfo(2)), or 0 if unknown. */
unsigned long long sys_phys_bytes(void);
pid_t sys_getpid(void);
pid_t sys_gettid(void);
/* The thread's filesystem user id, which file permission checks use. */
uid_t sys_fsuid(void);
/* 1 if this thread has @cap in its effective set, 0 if not. */
int sys_has_capability(int cap);

/* File descriptors. */
int sys_memfd_create(const char *name, unsigned int flags);
int sys_memfd_secret(unsigned int flags);
int sys_userfaultfd(int flags);
int sys_refpage_create(long nr, const void *content, size_t size, unsigned int flags);
int sys_open(const char *path, int flags, mode_t mode);
int sys_openat(int dirfd, const char *path, int flags, mode_t mode);
int sys_fstatfs(int fd, struct statfs *buf);
int sys_close(int fd);
/* dup3(2): @newfd becomes @oldfd's file, atomically, whatever it was; @newfd or -errno. */
int sys_dup3(int oldfd, int newfd, int flags);
ssize_t sys_read(int fd, void *buf, size_t len);
ssize_t sys_pread(int fd, void *buf, size_t len, off_t off);
ssize_t sys_write(int fd, const void *buf, size_t len);
ssize_t sys_pwrite(int fd, const void *buf, size_t len, off_t off);
ssize_t sys_pwritev(int fd, const struct iovec *iov, int iovcnt, off_t off);
int sys_ftruncate(int fd, off_t len);
int sys_fstat(int fd, struct stat *st);
int sys_ioctl(int fd, unsigned long req, void *arg);
/* fcntl(2) with an integer or pointer argument (F_ADD_SEALS, F_OFD_SETLK, F_OFD_GETLK). */
int sys_fcntl(int fd, int cmd, unsigned long arg);
int sys_access(const char *path, int mode);
ssize_t sys_readlinkat(int dirfd, const char *path, char *buf, size_t len);
/* Reads directory entries (struct linux_dirent64) like getdents64(2). */
ssize_t sys_getdents64(int fd, void *buf, size_t len);
ssize_t sys_process_vm_readv(pid_t pid, const struct iovec *local, unsigned long nlocal,
			     const struct iovec *remote, unsigned long nremote);

/* Signals. */
struct sigaction;
int sys_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
/* Sends @sig to the calling thread. */
int sys_raise(int sig);
/* 1 if the calling thread blocks @sig, 0 if not, or -errno. */
int sys_signal_blocked(int sig);

/* Time: CLOCK_MONOTONIC in nanoseconds; a sleep (cut short by a signal); sched_yield(). */
uint64_t sys_monotonic_ns(void);
/* CPU time of the calling thread (ns). */
uint64_t sys_thread_cpu_ns(void);
void sys_sleep_ns(uint64_t ns);
void sys_yield(void);

/* getrandom(2) of exactly @len bytes (retried on EINTR and short reads). */
int sys_getrandom(void *buf, size_t len);

/*
 * Fault injection, for tests only (tests/test-faults.c links the objects;
 * the libraries keep these names local).  Once armed, the @nth wrapper
 * call of @kind from then on returns -@err instead of making its call,
 * and the switch disarms itself.  SYS_FAULT_ANY counts every call but
 * those that give something back (munmap, close, munlock): a failure
 * there is no error a caller could handle, so it is injected only when
 * asked for by its own kind, and close still closes (as Linux does).
 * Unarmed, each wrapper pays one load and a branch predicted not taken.
 */
enum sys_fault_kind {
	SYS_FAULT_ANY,
	SYS_FAULT_MMAP,
	SYS_FAULT_MUNMAP,
	SYS_FAULT_MPROTECT,
	SYS_FAULT_MADVISE,
	SYS_FAULT_MREMAP,
	SYS_FAULT_MLOCK,	/* mlock2, mlockall */
	SYS_FAULT_MUNLOCK,	/* munlock, munlockall */
	SYS_FAULT_MINCORE,
	SYS_FAULT_PRCTL,
	SYS_FAULT_RLIMIT,	/* getrlimit, setrlimit */
	SYS_FAULT_CAPGET,	/* sys_has_capability() then answers 0 */
	SYS_FAULT_FD_CREATE,	/* memfd_create, memfd_secret, userfaultfd, refpage_create, dup3 */
	SYS_FAULT_OPEN,		/* open, openat */
	SYS_FAULT_CLOSE,
	SYS_FAULT_READ,		/* read, pread, readlinkat, getdents64, process_vm_readv */
	SYS_FAULT_WRITE,	/* write, pwrite, pwritev */
	SYS_FAULT_FTRUNCATE,
	SYS_FAULT_FSTAT,
	SYS_FAULT_IOCTL,	/* ioctl, fcntl */
	SYS_FAULT_ACCESS,
	SYS_FAULT_SIGACTION,
	SYS_FAULT_RAISE,
	SYS_FAULT_GETRANDOM,
	SYS_FAULT_KINDS,
};

void sys_fault_arm(enum sys_fault_kind kind, unsigned long nth, int err);
/* Disarms; the kind of the call that failed since sys_fault_arm(), or 0 (none did). */
enum sys_fault_kind sys_fault_disarm(void);
/*
 * Disarms for a while (a test touching memory whose faults the library
 * serves): how many calls were still to come before the fault, for
 * sys_fault_arm() to go on with; 0 if it was injected.
 */
unsigned long sys_fault_suspend(void);
/* Faults injected since the process started, for the tests' reports. */
unsigned long sys_fault_injected(void);

#endif /* MMKIT_SYS_H */
