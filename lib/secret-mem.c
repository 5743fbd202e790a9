// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The memory under the secret allocator: which backend (memfd_secret, or
 * the announced fallback mlock + MADV_DONTDUMP + MADV_WIPEONFORK), mapping
 * secret pages over guard reservations and giving them back, and the
 * canaries around every secret.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "lock.h"
#include "procfs.h"
#include "secret.h"

struct secret_state S = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.once = PTHREAD_ONCE_INIT,
};


const char *secret__errname(int err)
{
	const char *name = strerrorname_np(err);

	return name ? name : "unknown error";
}

/* Says why memfd_secret cannot be used, from the error it gave. */
static void describe_refusal(char *why, size_t len, const char *what, int err)
{
	if (err == -ENOSYS)
		snprintf(why, len, "%s: ENOSYS \xe2\x80\x94 boot with secretmem.enable=1 (kernel 5.14+ with CONFIG_SECRETMEM)",
			 what);
	else if (err == -EPERM || err == -EACCES)
		snprintf(why, len, "%s: %s \xe2\x80\x94 refused by seccomp or a security module", what,
			 secret__errname(-err));
	else
		snprintf(why, len, "%s: %s", what, secret__errname(-err));
}

/* The fallback, or none if the environment forbids it; decided for good. */
static void fall_back(const char *why)
{
	if (S.required_by) {
		/* The threads' caches read it without the lock. */
		__atomic_store_n(&S.backend, BACKEND_NONE, __ATOMIC_RELAXED);
		snprintf(S.reason, sizeof(S.reason), "%.160s; the fallback is forbidden (%s)", why,
			 S.required_by);
	} else {
		__atomic_store_n(&S.backend, BACKEND_MLOCK, __ATOMIC_RELAXED);
		snprintf(S.reason, sizeof(S.reason), "%.160s; using " FALLBACK_WHAT, why);
	}
}

/*
 * Linux 6.1 maps secretmem without charging RLIMIT_MEMLOCK (VmLck stays
 * 0) and charges at fault time, where going over the limit is a SIGBUS;
 * later kernels charge at mmap and refuse with EAGAIN.  One page mapped
 * from @fd tells which (1: at mmap, 0: at fault): on the former, mmkit
 * keeps the count itself.  -errno if it could not tell.
 */
static int secretmem_charges_at_mmap(int fd)
{
	struct mmkit_memlock before, after;
	void *p;
	int ret;

	ret = mmkit_memlock_check(NULL, 0, &before);
	if (!ret)
		ret = sys_ftruncate(fd, (off_t)S.page);
	if (!ret)
		ret = sys_mmap(NULL, S.page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0, &p);
	/*
	 * EAGAIN where one more page does not fit the limit is the kernel
	 * charging at mmap and refusing (a kernel charging at fault maps it):
	 * an answer, and each allocation then says which limit it meets.
	 */
	if (ret == -EAGAIN && !before.exempt && before.limit != MMKIT_MEMLOCK_UNLIMITED &&
	    before.locked + S.page > before.limit)
		return 1;
	if (ret)
		return ret;
	ret = mmkit_memlock_check(NULL, 0, &after);
	sys_munmap(p, S.page);
	return ret ? ret : after.locked >= before.locked + S.page;
}

/* 0 if @len more bytes of secretmem fit RLIMIT_MEMLOCK where the kernel charges at fault. */
static int secretmem_fits(size_t len)
{
	struct mmkit_memlock m;

	if (!S.charged_at_fault || mmkit_memlock_check(NULL, 0, &m) || m.exempt ||
	    m.limit == MMKIT_MEMLOCK_UNLIMITED)
		return 0;
	return m.locked + S.bytes_locked + len <= m.limit ? 0 : -ENOMEM;
}

/*
 * A refusal (no memfd_secret in the kernel, or a policy forbidding it)
 * decides for good; any other failure (out of descriptors or memory) is
 * passing and decides nothing: the next call asks again.
 */
static int refused(int err)
{
	return err == -ENOSYS || err == -EPERM || err == -EACCES;
}

int secret__choose_backend(void)
{
	const char *force = secure_getenv("MMKIT_SECRET_BACKEND");
	const char *require = secure_getenv("MMKIT_SECRET_REQUIRE");
	struct mmkit_memlock m;
	char why[160];
	int fd, charged, ret;

	/* A passing failure decides nothing (refused()): asked again at the next call. */
	ret = mmkit_memlock_check(NULL, 0, &m);
	if (ret && mmkit__passing(ret))
		return ret;
	S.memlock_exempt = !ret && m.exempt;
	if (require && !strcmp(require, "1"))
		S.required_by = "MMKIT_SECRET_REQUIRE=1";
	if (force && !strcmp(force, "memfd_secret"))
		S.required_by = "MMKIT_SECRET_BACKEND=memfd_secret";
	if (force && !strcmp(force, "mlock")) {
		fall_back("MMKIT_SECRET_BACKEND=mlock: memfd_secret not tried");
		return 0;
	}
	fd = sys_memfd_secret(O_CLOEXEC);
	if (fd < 0 && !refused(fd))
		return fd;
	if (fd < 0) {
		describe_refusal(why, sizeof(why), "memfd_secret", fd);
		fall_back(why);
		return 0;
	}
	charged = secretmem_charges_at_mmap(fd);
	sys_close(fd);
	if (charged < 0 && mmkit__passing(charged))
		return charged;
	/* Where VmLck cannot be read (no /proc), mmkit counts itself. */
	S.charged_at_fault = charged != 1;
	S.backend = BACKEND_SECRETMEM;
	snprintf(S.reason, sizeof(S.reason), "memfd_secret(2) works: pages leave the kernel direct map%s",
		 force && strcmp(force, "memfd_secret") ?
		 " (MMKIT_SECRET_BACKEND value not understood: ignored)" : "");
	return 0;
}

int secret__lock_roomy(size_t len)
{
	struct rlimit rl;

	if (S.memlock_exempt || sys_getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY)
		return 1;
	return S.bytes_locked <= rl.rlim_cur && rl.rlim_cur - S.bytes_locked >= 2 * (rlim_t)len;
}

/* Turns [addr, addr + len) back into a guard reservation, atomically. */
int secret__unmap(void *addr, size_t len)
{
	void *out;

	return sys_mmap(addr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED | MAP_NORESERVE,
			-1, 0, &out);
}

static int map_secretmem(void *addr, size_t len)
{
	void *out;
	int fd, ret;

	fd = sys_memfd_secret(O_CLOEXEC);
	if (fd < 0)
		return fd;
	ret = sys_ftruncate(fd, (off_t)len);
	if (!ret)
		ret = sys_mmap(addr, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0, &out);
	/* The mapping keeps the file: no descriptor is left to leak into exec'ed programs. */
	sys_close(fd);
	/* secretmem refuses the mmap with EAGAIN when RLIMIT_MEMLOCK would be exceeded. */
	if (ret == -EAGAIN)
		return -ENOMEM;
	if (!ret)
		ret = sys_madvise(addr, len, MADV_DONTFORK);
	return ret;
}

static int map_fallback(void *addr, size_t len)
{
	void *out;
	int ret;

	ret = sys_mmap(addr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
		       -1, 0, &out);
	if (ret)
		return ret;
	/* Lock on fault: pages are charged now but only populated when used. */
	ret = sys_mlock2(addr, len, MLOCK_ONFAULT);
	if (ret == -EPERM || ret == -EAGAIN)
		return -ENOMEM;
	if (!ret)
		ret = sys_madvise(addr, len, MADV_DONTDUMP);
	if (!ret)
		ret = sys_madvise(addr, len, MADV_WIPEONFORK);
	return ret;
}

/*
 * Records why mapping @len bytes failed, with the RLIMIT_MEMLOCK figures:
 * for mmkit_secret_stats() and as the thread's error.
 */
static void note_failure(size_t len, int err)
{
	struct mmkit_memlock m;

	if (err != -ENOMEM || mmkit_memlock_check(NULL, 0, &m)) {
		snprintf(S.last_error, sizeof(S.last_error), "mapping %zu KiB of secret memory: %s",
			 len / 1024, secret__errname(-err));
	} else if (m.exempt || m.limit == MMKIT_MEMLOCK_UNLIMITED) {
		S.enomem++;
		snprintf(S.last_error, sizeof(S.last_error),
			 "mapping %zu KiB of secret memory: ENOMEM (no RLIMIT_MEMLOCK applies: out of memory or address space)",
			 len / 1024);
	} else {
		S.enomem++;
		snprintf(S.last_error, sizeof(S.last_error),
			 "mapping %zu KiB of secret memory would exceed RLIMIT_MEMLOCK: limit %llu KiB, %llu KiB locked (%llu KiB by mmkit)",
			 len / 1024, m.limit / 1024, m.locked / 1024, S.bytes_locked / 1024);
	}
	mmkit__error_detail(err, "%s", S.last_error);
}

/*
 * Secret pages are never swapped (memfd_secret pages cannot be, the
 * fallback's are locked), so a secret can never have more pages than the
 * machine has physical memory, nor, where RLIMIT_MEMLOCK applies (no
 * CAP_IPC_LOCK), more than its soft limit: such a size is refused before
 * anything is mapped.  Without this, a process exempt from the limit got a
 * mapping of any size that the first wipe or use of its pages would take
 * the machine's memory with.  A memory cgroup's limit bounds it the same
 * way: the kernel charges secret pages to it and cannot reclaim them.
 * Asked from MEMCG_CHECK_MIN: the thread's cgroup file is read each time,
 * and where the cgroup's limit files are is kept in @memcg (under S.lock)
 * while it stays the same (~20 us a call then; finding them in mountinfo
 * costs ~100 us, more with many mounts).  No cgroup a process runs in is
 * below 1 MiB, and a page secret (a span of its own each) stays clear of
 * the cost.
 */
static struct mmkit__memcg memcg;
#define MEMCG_CHECK_MIN		(1UL << 20)

int secret__backable(size_t len)
{
	unsigned long long phys = sys_phys_bytes(), cg;
	char where[PATH_MAX + 32];
	struct rlimit rl;
	size_t n;

	/*
	 * The exemption as it is now (the capability may have been dropped),
	 * asked only of a size above the limit: as the kernel asks, in the
	 * initial user namespace, where a container's root has no exemption.
	 */
	if (!sys_getrlimit(RLIMIT_MEMLOCK, &rl) && rl.rlim_cur != RLIM_INFINITY && len > rl.rlim_cur &&
	    mmkit__memlock_exempt() != 1) {
		/* Counted with the limit's other refusals (mmkit_secret_stats). */
		S.enomem++;
		snprintf(S.last_error, sizeof(S.last_error),
			 "a secret of %zu KiB can never be backed: it alone would exceed RLIMIT_MEMLOCK: limit %llu KiB (raise the limit, or run with CAP_IPC_LOCK in the initial user namespace)",
			 len / 1024, (unsigned long long)rl.rlim_cur / 1024);
	} else if (phys && len > phys) {
		snprintf(S.last_error, sizeof(S.last_error),
			 "a secret of %zu MiB can never be backed: the machine has %llu MiB of physical memory, and secret pages are never swapped",
			 len >> 20, phys >> 20);
	} else if (len >= MEMCG_CHECK_MIN &&
		   !mmkit__memcg_limit(&memcg, &cg, where, sizeof(where)) && len > cg) {
		/* The file's end if its path is long: the cgroup and the limit's name. */
		n = strlen(where);
		snprintf(S.last_error, sizeof(S.last_error),
			 "a secret of %zu MiB can never be backed: this process's memory cgroup allows %llu MiB (%s%.96s), and secret pages are never swapped",
			 len >> 20, cg >> 20, n > 96 ? "..." : "", where + (n > 96 ? n - 96 : 0));
	} else {
		return 0;
	}
	mmkit__error_detail(-ENOMEM, "%s", S.last_error);
	return -ENOMEM;
}

/* One try at mapping secret pages over [addr, addr + len), with the backend. */
static int map_once(void *addr, size_t len)
{
	int ret;

	if (S.backend == BACKEND_SECRETMEM) {
		ret = secretmem_fits(len);
		return ret ? ret : map_secretmem(addr, len);
	}
	return map_fallback(addr, len);
}

int secret__map(void *addr, size_t *len, size_t least, secret_reclaim_fn *reclaim, int *lost)
{
	size_t want = *len;
	int ret;

	*lost = 0;
	ret = map_once(addr, want);
	/*
	 * Over the lock limit: the memory kept for reuse goes first (MAP_FIXED
	 * maps over), a step a call of @reclaim.
	 */
	while (ret == -ENOMEM && reclaim())
		ret = map_once(addr, want);
	/*
	 * Still over it: the least the caller can use may fit.  The failed
	 * try may have left pages mapped (the fallback maps, then locks):
	 * the guard goes back over them first.
	 */
	if (ret == -ENOMEM && least < want) {
		ret = secret__unmap(addr, want);
		if (ret) {
			*lost = 1;
			note_failure(want, ret);
			return ret;
		}
		want = least;
		ret = map_once(addr, want);
	}
	if (!ret) {
		S.pages_mapped += want / S.page;
		S.bytes_locked += want;
		*len = want;
		return 0;
	}
	*lost = !!secret__unmap(addr, want);
	/*
	 * Refused although memfd_secret worked at start (a seccomp filter or
	 * security policy installed since): fall back once, for good; the
	 * caller sees -ENOSYS and retries if the fallback is allowed.
	 */
	if (S.backend == BACKEND_SECRETMEM && refused(ret)) {
		char why[160];

		describe_refusal(why, sizeof(why), "memfd_secret refused after working", ret);
		fall_back(why);
		ret = -ENOSYS;
	}
	note_failure(want, ret);
	return ret;
}

int secret__release(void *addr, size_t len)
{
	S.pages_mapped -= len / S.page;
	S.bytes_locked -= len;
	return secret__unmap(addr, len);
}

#define ROTL(x, b)	((uint64_t)((x) << (b)) | ((x) >> (64 - (b))))

#define SIPROUND(v0, v1, v2, v3) do {					\
	v0 += v1; v1 = ROTL(v1, 13); v1 ^= v0; v0 = ROTL(v0, 32);	\
	v2 += v3; v3 = ROTL(v3, 16); v3 ^= v2;				\
	v0 += v3; v3 = ROTL(v3, 21); v3 ^= v0;				\
	v2 += v1; v1 = ROTL(v1, 17); v1 ^= v2; v2 = ROTL(v2, 32);	\
} while (0)

/*
 * SipHash-2-4 (Aumasson and Bernstein, 2012) of one 8-byte message, the
 * little-endian bytes of @m: a keyed pseudo-random function, so outputs
 * for other messages say nothing about the key or each other.
 */
uint64_t secret__siphash24(const uint64_t key[2], uint64_t m)
{
	uint64_t v0 = key[0] ^ 0x736f6d6570736575ULL;
	uint64_t v1 = key[1] ^ 0x646f72616e646f6dULL;
	uint64_t v2 = key[0] ^ 0x6c7967656e657261ULL;
	uint64_t v3 = key[1] ^ 0x7465646279746573ULL;
	/* The last block: no bytes left, the message length (8) in the top byte. */
	const uint64_t last = (uint64_t)8 << 56;

	v3 ^= m;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= m;
	v3 ^= last;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	v0 ^= last;
	v2 ^= 0xff;
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	SIPROUND(v0, v1, v2, v3);
	return v0 ^ v1 ^ v2 ^ v3;
}

/*
 * The canary bytes of a slot are SipHash-2-4 of the slot's address under
 * a per-process 128-bit random key: one canary read through a leak says
 * nothing about another's (an unkeyed mix of key and address could be run
 * backwards to the key).  No byte is zero, so an off-by-one string
 * terminator is caught too.  An 8-byte pattern repeats over the canary,
 * written and compared a word at a time.  A thread's cache keeps the
 * pattern of each slot it holds (ordinary memory, like the key itself),
 * so only the check at free computes one.
 */
uint64_t secret__canary_pattern(const void *owner)
{
	/* The low bit of every byte set: 56 random bits, no zero byte. */
	return secret__siphash24(S.canary_key, (uintptr_t)owner) | 0x0101010101010101ULL;
}

/*
 * Canaries are short (8 to 2040 bytes, 16 for a 32-byte secret): whole
 * words, then the last bytes one at a time, with no call into libc.
 */
void secret__pattern_fill(unsigned char *at, size_t len, uint64_t pat)
{
	size_t i;

	for (i = 0; i + 8 <= len; i += 8)
		memcpy(at + i, &pat, 8);
	for (; i < len; i++)
		at[i] = (unsigned char)(pat >> (8 * (i % 8)));
}

int secret__pattern_ok(const unsigned char *at, size_t len, uint64_t pat)
{
	uint64_t diff = 0, v;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&v, at + i, 8);
		diff |= v ^ pat;
	}
	for (; i < len; i++)
		diff |= at[i] ^ (unsigned char)(pat >> (8 * (i % 8)));
	return !diff;
}

void secret__canary_fill(unsigned char *at, size_t len, const void *owner)
{
	secret__pattern_fill(at, len, secret__canary_pattern(owner));
}

int secret__canary_ok(const unsigned char *at, size_t len, const void *owner)
{
	return secret__pattern_ok(at, len, secret__canary_pattern(owner));
}

void secret__die(const void *p, const char *what)
{
	char msg[256];
	int n;

	n = snprintf(msg, sizeof(msg), "mmkit: mmkit_secret_free(%p): %s; aborting\n", p, what);
	sys_write(2, msg, n > 0 && (size_t)n < sizeof(msg) ? (size_t)n : strlen(msg));
	abort();
}

void secret__corrupt(const void *where, const char *what)
{
	char msg[256];
	int n;

	n = snprintf(msg, sizeof(msg),
		     "mmkit: secret memory: the bookkeeping of the memory at %p is damaged (%s); aborting\n",
		     where, what);
	sys_write(2, msg, n > 0 && (size_t)n < sizeof(msg) ? (size_t)n : strlen(msg));
	abort();
}

const char secret__zeros[4096];

void secret__stale(const void *slot)
{
	char msg[256];
	int n;

	n = snprintf(msg, sizeof(msg),
		     "mmkit: secret memory: the freed secret at %p was written after its free (a stale pointer); aborting\n",
		     slot);
	sys_write(2, msg, n > 0 && (size_t)n < sizeof(msg) ? (size_t)n : strlen(msg));
	abort();
}
