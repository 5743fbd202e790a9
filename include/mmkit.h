/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * mmkit: user-space access to five Linux memory-management features.
 *
 * Every function returns 0 (or a non-negative count) on success and a
 * negative errno value on failure.  No function reads or changes errno.
 * mmkit_last_error() words the calling thread's last failure.
 */
#ifndef MMKIT_H
#define MMKIT_H

#include <stddef.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MMKIT_VERSION_MAJOR	0
#define MMKIT_VERSION_MINOR	1
#define MMKIT_VERSION_PATCH	0

/*
 * The calling thread's last failure of an mmkit call, as
 * "mmkit_OP: reason" (the library's own reason where it knows more than
 * the errno: the RLIMIT_MEMLOCK figures, the backend that is missing and
 * why, ...); "" before the thread's first failure.  Read it right after a
 * call returned a negative errno: a success leaves it as it was, like
 * errno.  The pointer stays valid until the thread exits; the text changes
 * at the thread's next failure.  Never NULL; see mmkit_last_error(3).
 */
const char *mmkit_last_error(void);

/* ------------------------------------------------------------------ */
/* Feature probe                                                        */
/* ------------------------------------------------------------------ */

enum mmkit_feature_id {
	MMKIT_FEATURE_REFPAGE,
	MMKIT_FEATURE_NAMES,
	MMKIT_FEATURE_PAC,
	MMKIT_FEATURE_SECRET,
	MMKIT_FEATURE_LOCK_ONFAULT,
	MMKIT_FEATURE_USERFAULTFD,
	MMKIT_FEATURE_COUNT,
};

enum mmkit_status {
	MMKIT_STATUS_NATIVE = 0,	/* the kernel feature itself is used */
	MMKIT_STATUS_FALLBACK,		/* works, through a documented substitute */
	MMKIT_STATUS_UNSUPPORTED,	/* cannot work on this kernel/CPU */
	MMKIT_STATUS_NOT_IMPLEMENTED,	/* not built into this version of mmkit */
};

#define MMKIT_REASON_MAX	256

struct mmkit_feature {
	enum mmkit_status status;
	char backend[16];		/* e.g. "prctl", "registry", "memfd_secret" */
	char reason[MMKIT_REASON_MAX];	/* why this backend, or why not available */
};

/* Room for features added later without changing the struct size. */
#define MMKIT_FEATURE_SLOTS	16

struct mmkit_features {
	struct mmkit_feature feature[MMKIT_FEATURE_SLOTS];
};

/* Fills @f for this process and kernel; the kernel's answers are kept (mmkit_probe(3)). */
int mmkit_probe(struct mmkit_features *f);
/* Stable lower-case key of a feature ("refpage", "names", ...), NULL if out of range. */
const char *mmkit_feature_name(enum mmkit_feature_id id);
/* Stable lower-case word of a status ("native", "fallback", ...), NULL if out of range. */
const char *mmkit_status_name(enum mmkit_status status);

/* ------------------------------------------------------------------ */
/* Named anonymous memory                                               */
/* ------------------------------------------------------------------ */

/* Longest name, counting the terminating NUL (the kernel's ANON_VMA_NAME_MAX_LEN). */
#define MMKIT_NAME_MAX		80

/*
 * Names [addr, addr + len) like prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME),
 * with the kernel's rules and error codes; name NULL clears.  -EINVAL: bad
 * name, @addr not page aligned, @len overflowing; 0 for len 0; -ENOMEM: part
 * of the range is not mapped (the mapped parts are named); -EBADF: the range
 * reaches a file mapping (what comes before it is named; shared anonymous
 * memory counts as a file before Linux 6.2).  Where the kernel
 * lacks CONFIG_ANON_VMA_NAME the name goes to a per-process registry that
 * mmkit_regions() and `mmkit maps` read from other processes; see
 * mmkit_name(3) for how names follow munmap() there.
 */
int mmkit_name(void *addr, size_t len, const char *name);
/*
 * mmkit_name() of a buffer that must be whole pages: -EINVAL, saying so,
 * if @addr or @len is not a multiple of the page size (mmkit_name() would
 * name all of the last page, bytes outside the buffer); 0 for len 0,
 * wherever @addr points (an empty buffer names nothing).  Otherwise as
 * mmkit_name(), whose errors it returns.  What the bindings' name(buffer)
 * calls (since 0.2).
 */
int mmkit_name_pages(void *addr, size_t len, const char *name);
/*
 * 0 if the kernel would accept @name (NULL, which clears, included),
 * -EINVAL otherwise: at most MMKIT_NAME_MAX - 1 characters, each printable
 * ASCII (0x20 to 0x7e) and none of \ ` $ [ ].
 */
int mmkit_name_valid(const char *name);

enum mmkit_region_kind {
	MMKIT_REGION_ANON,		/* anonymous, no name; name "" */
	MMKIT_REGION_ANON_NAMED,	/* named by the kernel: [anon:NAME] or [anon_shmem:NAME] */
	MMKIT_REGION_REGISTRY,		/* named through the mmkit registry */
	MMKIT_REGION_FILE,		/* file-backed: name is the path */
	MMKIT_REGION_HEAP,		/* [heap] */
	MMKIT_REGION_STACK,		/* [stack] */
	MMKIT_REGION_SPECIAL,		/* [vdso], [vvar], ... */
};

/* Bits of mmkit_region.have: the kernel gave that value (else it reads 0). */
#define MMKIT_REGION_HAVE_PSS	0x1u
#define MMKIT_REGION_HAVE_SWAP	0x2u

/* Bits of mmkit_region.flags (since 0.2). */
#define MMKIT_REGION_REFPAGE	0x1u	/* reference pages of a file (mmkit_refpage(3)) */

/*
 * One mapping (or the part of one that a registry name covers).  Sizes in
 * bytes, from /proc/PID/smaps.  @name: NAME alone, as given to
 * mmkit_name(), for ANON_NAMED and REGISTRY alike (perms[3] == 's' tells
 * shared anonymous memory), "" for ANON, the path for FILE, the kernel's
 * bracketed word otherwise.  For a part, size is exact,
 * rss and swap are counted from /proc/PID/pagemap, pss, private_dirty and
 * locked are the mapping's shared out by rss (all by size if pagemap cannot
 * be read); the parts add up to the mapping's values.  private_clean
 * (with private_dirty: the USS) and anonymous (the pages that are
 * anonymous memory, in a file mapping the copies written) are shared out
 * like private_dirty.  The library fills
 * the struct and passes a pointer: fields are only ever added at the end.
 */
struct mmkit_region {
	unsigned long start;
	unsigned long end;
	enum mmkit_region_kind kind;
	char perms[5];
	char name[4096];
	unsigned long long size;
	unsigned long long rss;
	unsigned long long pss;
	unsigned long long private_dirty;
	unsigned long long swap;
	unsigned long long locked;
	unsigned int have;		/* MMKIT_REGION_HAVE_PSS, _SWAP (since 0.2) */
	/* The rest of smaps' figures, as psutil's memory_maps() gives them (since 0.2). */
	unsigned long long shared_clean;
	unsigned long long shared_dirty;
	unsigned long long private_clean;
	unsigned long long referenced;
	unsigned long long anonymous;
	unsigned int flags;		/* MMKIT_REGION_REFPAGE (since 0.2) */
};

typedef int (*mmkit_region_fn)(const struct mmkit_region *region, void *arg);

/*
 * Calls @fn for each mapping of process @pid (0: this process) from
 * /proc/PID/smaps, named by the kernel or the registry, in address order.
 * Stops early and returns @fn's value if it returns non-zero.  -EINVAL for
 * a negative @pid or NULL @fn, -ESRCH if there is no such process, -EACCES
 * or -EPERM if its memory may not be read (another user, not dumpable).
 */
int mmkit_regions(pid_t pid, mmkit_region_fn fn, void *arg);
/*
 * Stable lower-case word of a region kind ("anon", "anon_named",
 * "registry", "file", "heap", "stack", "special"), NULL if out of range
 * (since 0.2).
 */
const char *mmkit_region_kind_name(enum mmkit_region_kind kind);

/* ------------------------------------------------------------------ */
/* Lock-on-fault                                                        */
/* ------------------------------------------------------------------ */

#define MMKIT_LOCK_ONFAULT	0x1u	/* lock pages as they are faulted in */
#define MMKIT_LOCK_CURRENT	0x2u	/* mmkit_lockall: what is mapped now */
#define MMKIT_LOCK_FUTURE	0x4u	/* mmkit_lockall: what is mapped later */

#define MMKIT_MEMLOCK_UNLIMITED	(~0ULL)

/* What a lock request costs against RLIMIT_MEMLOCK, in bytes. */
struct mmkit_memlock {
	unsigned long long limit;	/* soft limit, or MMKIT_MEMLOCK_UNLIMITED */
	unsigned long long locked;	/* already locked by this process (VmLck) */
	unsigned long long needed;	/* what the request adds to the charge */
	int exempt;			/* CAP_IPC_LOCK in the initial user namespace:
					   the limit does not apply */
};

/*
 * Fills @m for locking [addr, addr + len) and returns 0 if it fits the
 * limit, -ENOMEM if it does not.  len 0 (whatever addr): the current state.
 */
int mmkit_memlock_check(const void *addr, size_t len, struct mmkit_memlock *m);
/* Like mmkit_memlock_check() for mmkit_lockall(@flags). */
int mmkit_memlock_check_all(unsigned int flags, struct mmkit_memlock *m);

/*
 * mlock2() of [addr, addr + len); MMKIT_LOCK_ONFAULT locks on fault.  The
 * limit is checked first: -ENOMEM without calling the kernel if it would be
 * exceeded (mmkit_memlock_check() tells by how much).  len 0, an overflowing
 * range or unknown flags: -EINVAL.
 */
int mmkit_lock(void *addr, size_t len, unsigned int flags);
int mmkit_unlock(void *addr, size_t len);
/* mlockall() with MMKIT_LOCK_CURRENT / _FUTURE / _ONFAULT; same checks. */
int mmkit_lockall(unsigned int flags);
int mmkit_unlockall(void);

/* ------------------------------------------------------------------ */
/* Pointer-authentication keys (arm64)                                  */
/* ------------------------------------------------------------------ */

#define MMKIT_PAC_APIAKEY	(1UL << 0)
#define MMKIT_PAC_APIBKEY	(1UL << 1)
#define MMKIT_PAC_APDAKEY	(1UL << 2)
#define MMKIT_PAC_APDBKEY	(1UL << 3)
#define MMKIT_PAC_ALL_KEYS	(MMKIT_PAC_APIAKEY | MMKIT_PAC_APIBKEY | \
				 MMKIT_PAC_APDAKEY | MMKIT_PAC_APDBKEY)

/*
 * The enabled keys belong to the calling thread, not the process: other
 * threads keep theirs; threads and children created later inherit them;
 * execve() enables all again.  -EOPNOTSUPP unless arm64 with address
 * authentication (AT_HWCAP PACA).
 */
int mmkit_pac_get_enabled_keys(unsigned long *keys);
/* Enables the keys of @mask that are set in @enabled, disables the others. */
int mmkit_pac_set_enabled_keys(unsigned long mask, unsigned long enabled);

/* ------------------------------------------------------------------ */
/* Secret memory                                                        */
/* ------------------------------------------------------------------ */

/*
 * Memory for keys and passwords, taken from memfd_secret(2): the pages
 * leave the kernel's direct map, are never swapped and never dumped.
 * Small secrets share pooled, cached chunks between guard pages; bigger
 * ones (and MMKIT_SECRET_PAGES) get their own pages between guard pages.
 * Where memfd_secret is unavailable the fallback is mmap + mlock2
 * (MLOCK_ONFAULT) + MADV_DONTDUMP + MADV_WIPEONFORK, announced once on
 * stderr.  Environment (read once, ignored in setuid programs):
 * MMKIT_SECRET_BACKEND=mlock forces the fallback, =memfd_secret or
 * MMKIT_SECRET_REQUIRE=1 forbids it.  See mmkit_secret(3).
 */

/* Fail with -ENOSYS instead of falling back when memfd_secret is unavailable. */
#define MMKIT_SECRET_REQUIRE_SECRETMEM	0x1u
/* Do not print the one-time notice about the fallback on stderr. */
#define MMKIT_SECRET_QUIET		0x2u
/* Own pages between guard pages, whatever the size: mmkit_secret_protect() works. */
#define MMKIT_SECRET_PAGES		0x4u
/*
 * Implies MMKIT_SECRET_PAGES: the secret ends exactly at the upper guard
 * page (unaligned when the size is not a multiple of 16), at least 16
 * canary bytes before it, as libsodium's sodium_malloc() lays it out.
 */
#define MMKIT_SECRET_END_AT_GUARD	0x8u

/* Largest size served from the shared pool; bigger sizes get their own pages. */
#define MMKIT_SECRET_POOL_MAX		2040

/* mmkit_secret_protect() access modes, like sodium_mprotect_*(). */
#define MMKIT_SECRET_NOACCESS		0
#define MMKIT_SECRET_READONLY		1
#define MMKIT_SECRET_READWRITE		2

struct mmkit_secret_stats {
	char backend[16];		/* "memfd_secret", "mlock" or "none" */
	char reason[MMKIT_REASON_MAX];	/* why this backend */
	char last_error[MMKIT_REASON_MAX]; /* why the last allocation failed, or "" */
	unsigned long long allocs_live;	/* allocations not yet freed */
	unsigned long long bytes_live;	/* bytes asked for by those allocations */
	unsigned long long pages_mapped; /* secret pages mapped, live or cached */
	unsigned long long pages_cached; /* of those, held empty for reuse */
	unsigned long long bytes_locked; /* charged to RLIMIT_MEMLOCK by mmkit */
	unsigned long long memlock_limit; /* soft limit, or MMKIT_MEMLOCK_UNLIMITED */
	unsigned long long enomem;	/* allocations refused for RLIMIT_MEMLOCK */
	int memlock_exempt;		/* CAP_IPC_LOCK in the initial user namespace:
					   the limit does not apply */
	int fallback;			/* 1 when the mlock fallback is in use */
};

/*
 * Allocates @size zeroed bytes, 16-byte aligned, into *@p.  -EINVAL for
 * size 0, p NULL or unknown flags; -ENOMEM when RLIMIT_MEMLOCK (or memory,
 * or the address space) is exhausted or @size cannot be mapped at all;
 * -ENOSYS when memfd_secret is unavailable and the fallback is forbidden.
 */
int mmkit_secret_alloc(void **p, size_t size, unsigned int flags);
/*
 * Allocates up to @n secrets of @size bytes each, as mmkit_secret_alloc()
 * does, into @p[0] to @p[n - 1], in one call; each is freed by
 * mmkit_secret_free().  Returns how many (1 to @n): it stops at the first
 * failure (mmkit_last_error() then says why), the entries after the last
 * secret set to NULL.  The errors of mmkit_secret_alloc() when none could
 * be allocated; -EINVAL also for @n 0 or above INT_MAX.
 */
int mmkit_secret_alloc_many(void **p, size_t n, size_t size, unsigned int flags);
/*
 * Checks the canaries, zeroes and releases @p (NULL: nothing).  A pointer
 * not handed out, a double free or a damaged canary abort() the process
 * with a message on stderr naming the problem.
 */
void mmkit_secret_free(void *p);
int mmkit_secret_stats(struct mmkit_secret_stats *st);
/*
 * Changes the access to a page-granular allocation (MMKIT_SECRET_PAGES or
 * bigger than MMKIT_SECRET_POOL_MAX); -EINVAL for a pooled or unknown one.
 */
int mmkit_secret_protect(void *p, int access);
/*
 * Stores in *@size the bytes asked for when @p was allocated: 0 if @p is
 * the start of a secret of this allocator (also one inherited through
 * fork, which cannot be read); -EINVAL if @p lies in the allocator's
 * memory but is not the start of a live secret (a secret freed already, a
 * pointer into one), or for NULL; -ENOENT if it is not the allocator's.
 * Never aborts: for shims that must tell their pointers from others.
 */
int mmkit_secret_size(const void *p, size_t *size);
/*
 * Maps, pre-faults and keeps pool chunks for @bytes of small secrets, so
 * later allocations neither map nor fault; the RLIMIT_MEMLOCK charge is
 * taken now.  Grows the reserve only; -ENOMEM and -ENOSYS as for alloc.
 */
int mmkit_secret_reserve(size_t bytes);

/* ------------------------------------------------------------------ */
/* Reference pages                                                      */
/* ------------------------------------------------------------------ */

/*
 * Memory whose never-written pages read as a repeating pattern, copied on
 * first write.  The contract (see mmkit_refpage(3)) has ten items; each
 * backend (kmod: refpage.ko's /dev/refpage; memfd; uffd) keeps some of
 * them, reported as a mask of MMKIT_REFPAGE_ITEM(n).  mmkit_refpage(3)
 * says what each backend keeps and costs, and which one is chosen when no
 * MMKIT_REFPAGE_BACKEND_* flag and no
 * MMKIT_REFPAGE_BACKEND=syscall|kmod|memfd|uffd in the environment names
 * one.  Forcing one that cannot work here fails: -ENODEV (syscall on a
 * kernel without refpage_create(2), kmod without /dev/refpage), -EPERM or
 * -ENOSYS (uffd).
 */
#define MMKIT_REFPAGE_BACKEND_KMOD	0x1u
#define MMKIT_REFPAGE_BACKEND_MEMFD	0x2u
#define MMKIT_REFPAGE_BACKEND_UFFD	0x4u
/*
 * refpage_create(2) of a kernel with the reference-page series
 * (kernel/patches/), found through /sys/kernel/mm/refpage/syscall_nr:
 * preferred over kmod where it exists, -ENODEV when forced elsewhere.
 */
#define MMKIT_REFPAGE_BACKEND_SYSCALL	0x8u
/*
 * The reference page carries MTE allocation tags (arm64): @pattern is
 * PROT_MTE memory, 16-byte aligned, at least 16 bytes, and the tag of each
 * of its 16-byte granules repeats with the pattern (a uniformly tagged page:
 * tag the whole pattern alike).  Ranges are mapped PROT_MTE; read them
 * through pointers carrying the tags.  memfd tags, kmod too where the
 * loaded refpage.ko can (it is then the default), uffd never (-EOPNOTSUPP
 * when forced, as for a kmod that cannot); without MTE -EOPNOTSUPP; attach
 * is -EOPNOTSUPP.  mmkit_refpage(3).
 */
#define MMKIT_REFPAGE_TAGGED		0x10u

#define MMKIT_REFPAGE_ITEM(n)		(1u << (n))
/* Items 1 to 10. */
#define MMKIT_REFPAGE_FULL_CONTRACT	0x7feu

struct mmkit_refpage;

/* @pattern_size: a power of two from 1 (16 if tagged) to the page size. */
int mmkit_refpage_create(struct mmkit_refpage **rp, const void *pattern,
			 size_t pattern_size, unsigned int flags);
/* Does not unmap: see mmkit_refpage(3) for what becomes of live ranges. */
void mmkit_refpage_destroy(struct mmkit_refpage *rp);
/* Maps @len bytes (rounded up to pages) that read as the pattern. */
int mmkit_refpage_map(struct mmkit_refpage *rp, size_t len, int prot, void **addr);
/*
 * Turns the private anonymous range [addr, addr + len) into reference-page
 * memory: pages already present (or swapped out) keep their contents, the
 * others read as the pattern.  -EINVAL for an unaligned @addr or a
 * file-backed, shared or special ([stack], [vdso]) range, -ENOMEM if part
 * of it is not mapped.  Nothing else may touch the range meanwhile.
 */
int mmkit_refpage_attach(struct mmkit_refpage *rp, void *addr, size_t len);
int mmkit_refpage_unmap(struct mmkit_refpage *rp, void *addr, size_t len);
/*
 * mremap(MREMAP_MAYMOVE) for a range of @rp: data moves, untouched and
 * added pages read as the pattern on every backend.
 */
int mmkit_refpage_remap(struct mmkit_refpage *rp, void *old_addr, size_t old_len,
			size_t new_len, void **new_addr);
/* "kmod", "memfd" or "uffd" */
const char *mmkit_refpage_backend(const struct mmkit_refpage *rp);
/* The contract items @rp keeps: a mask of MMKIT_REFPAGE_ITEM(n). */
unsigned int mmkit_refpage_contract(const struct mmkit_refpage *rp);
/*
 * 0 if backend @flag (one MMKIT_REFPAGE_BACKEND_*) can work for this
 * process, else the error forcing it gives; @why (may be NULL) says why.
 */
int mmkit_refpage_backend_available(unsigned int flag, char *why, size_t why_len);
/*
 * The MMKIT_REFPAGE_BACKEND_* flag of backend @name ("syscall", "kmod",
 * "memfd", "uffd", as mmkit_refpage_backend() and MMKIT_REFPAGE_BACKEND
 * name them); -EINVAL for any other name or NULL.
 */
int mmkit_refpage_backend_flag(const char *name);

/*
 * What reference pages cost this process beyond the pages written: the
 * memfd backend's pattern files, one per pattern and flags, shared by
 * every object of it and at most 4 MiB each, and the page cache they hold
 * (counted as Shmem).  mmkit_refpage(3).
 */
struct mmkit_refpage_stats {
	unsigned long long pattern_files;
	unsigned long long cache_bytes;
};

int mmkit_refpage_stats(struct mmkit_refpage_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* MMKIT_H */
