/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * The kernel-facing layer: the only code in libmmkit that makes system
 * calls.  Every wrapper returns a non-negative result or -errno and leaves
 * the caller's errno as it was, so the rest of the library never sees errno.
 */
#ifndef MMKIT_SYS_H
#define MMKIT_SYS_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/stat.h>
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
pid_t sys_getpid(void);
pid_t sys_gettid(void);
/* 1 if this thread has @cap in its effective set, 0 if not. */
int sys_has_capability(int cap);

/* File descriptors. */
int sys_memfd_create(const char *name, unsigned int flags);
int sys_memfd_secret(unsigned int flags);
int sys_userfaultfd(int flags);
int sys_open(const char *path, int flags, mode_t mode);
int sys_openat(int dirfd, const char *path, int flags, mode_t mode);
int sys_close(int fd);
ssize_t sys_read(int fd, void *buf, size_t len);
ssize_t sys_pread(int fd, void *buf, size_t len, off_t off);
ssize_t sys_write(int fd, const void *buf, size_t len);
ssize_t sys_pwrite(int fd, const void *buf, size_t len, off_t off);
int sys_ftruncate(int fd, off_t len);
int sys_fstat(int fd, struct stat *st);
int sys_ioctl(int fd, unsigned long req, void *arg);
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

/* Gives the CPU to another thread (sched_yield(2)). */
void sys_yield(void);

/* getrandom(2) of exactly @len bytes (retried on EINTR and short reads). */
int sys_getrandom(void *buf, size_t len);

#endif /* MMKIT_SYS_H */
