// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Secret memory: a pooled memfd_secret(2) allocator with guard pages,
 * canaries and an announced fallback.
 *
 * One memfd_secret region per secret is slow (each mapping removes pages
 * from the kernel's direct map and flushes the kernel TLB, each unmap puts
 * them back) and costs a VMA each, so small secrets share chunks:
 *
 *   arena:  [guard][chunk 0 data][guard][chunk 1 data] ... [guard]
 *
 * An arena is one PROT_NONE reservation (not charged to anything); a chunk
 * is mapped over its block when first needed and then kept: an emptied
 * chunk stays with its size class or goes to a small cache, so steady
 * allocation never maps, faults or unmaps.  Chunks are carved into slots of
 * one size class; each slot holds the caller's bytes followed by at least
 * CANARY_MIN canary bytes up to the end of the slot.  All bookkeeping
 * (slot sizes, free stacks) lives in ordinary memory: only secrets and
 * canaries take locked pages, which is what lets 100,000 32-byte secrets
 * fit the default 8 MiB RLIMIT_MEMLOCK.
 *
 * Secrets above MMKIT_SECRET_POOL_MAX (or asked for with MMKIT_SECRET_PAGES)
 * get a span: their own pages between two guard pages, the secret ending
 * at the upper guard page (rounded to 16 bytes), canary bytes in the slack
 * before and after.  Freed spans are cached for reuse too.
 *
 * After fork() the child starts with an empty allocator: the parent's
 * secrets become PROT_NONE in the child (both backends), so touching them
 * faults; freeing them there is allowed and does nothing.  A child made
 * without the atfork handlers (a raw clone) has holes there instead
 * (MADV_DONTFORK) or, with the fallback, zero pages (MADV_WIPEONFORK).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"

#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT	1
#endif
#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK	18
#endif

#define FALLBACK_WHAT	"mlock+MADV_DONTDUMP+MADV_WIPEONFORK"

enum backend { BACKEND_SECRETMEM, BACKEND_MLOCK, BACKEND_NONE };

/* Bytes after each pooled secret that an overflow must get through. */
#define CANARY_MIN		8
#define SLOT_ALIGN		16
#define BLOCKS_PER_ARENA	256
/* Empty chunks kept for reuse beyond one per size class, unless reserved. */
#define CACHE_KEEP		2
/* Freed spans kept for reuse: at most this many, of at most this many pages. */
#define SPAN_CACHE_MAX		32
#define SPAN_CACHE_PAGES	64

static const uint16_t class_size[] = {
	16, 32, 48, 64, 80, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768,
	1024, 1280, 1536, 2048,
};
#define NCLASSES	(sizeof(class_size) / sizeof(class_size[0]))
#define CLASS_SLOTS	(2048 / SLOT_ALIGN + 1)

enum chunk_state {
	CHUNK_UNUSED,	/* a guard reservation, nothing mapped */
	CHUNK_ACTIVE,	/* mapped, carved for a size class */
	CHUNK_CACHED,	/* mapped, empty, no class */
	CHUNK_DEAD,	/* the parent's, in a fork child: PROT_NONE, slots still owed a free */
	CHUNK_LOST,	/* the guard could not be put back: never used again */
};

struct chunk {
	char *data;
	struct chunk *next, *prev;	/* class list of chunks with free slots, or the cache */
	uint16_t *sizes;		/* bytes asked for, per slot; 0: free */
	uint16_t *free_slots;		/* stack of freed slot numbers */
	unsigned int nfree;
	unsigned int bump;		/* slots from here on were never handed out */
	unsigned int nslots;
	unsigned int live;
	unsigned int slot;
	uint32_t slot_inv;		/* ceil(2^32 / slot): division by multiplication */
	unsigned int cls;
	enum chunk_state state;
};

struct arena {
	char *base;
	struct chunk chunk[BLOCKS_PER_ARENA];
};

struct class {
	struct chunk *avail;		/* chunks with a free slot */
	unsigned int empty;		/* of those, chunks with no live slot */
};

struct span {
	char *base;			/* guard page, data pages, guard page */
	char *user;
	size_t pages;
	size_t size;
	int access;
	int dead;			/* the parent's, in a fork child */
	struct span *next;		/* in the cache */
};

static struct {
	pthread_mutex_t lock;
	pthread_once_t once;
	int init_error;
	enum backend backend;
	const char *required_by;	/* the variable that forbids the fallback */
	char reason[MMKIT_REASON_MAX];
	char last_error[MMKIT_REASON_MAX];
	int noticed;
	uint64_t canary_key;
	size_t page;
	size_t stride;
	unsigned int stride_shift;
	size_t chunk_len;
	unsigned char class_of[CLASS_SLOTS];

	struct arena **arenas;		/* sorted by base */
	size_t narenas;
	struct class cls[NCLASSES];
	struct chunk *cache;
	unsigned int ncached;
	unsigned int keep;

	struct span **table;		/* live spans by user pointer, linear probing */
	size_t table_cap;
	size_t table_count;
	struct span *span_cache;
	unsigned int nspan_cache;

	unsigned long long allocs_live;
	unsigned long long bytes_live;
	unsigned long long pages_mapped;
	unsigned long long span_cache_pages;
	unsigned long long bytes_locked;
	unsigned long long enomem;
	int charged_at_fault;		/* the kernel charges secretmem at fault, not at mmap */
} S = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.once = PTHREAD_ONCE_INIT,
	.keep = CACHE_KEEP,
};

static const char *errname(int err)
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
			 errname(-err));
	else
		snprintf(why, len, "%s: %s", what, errname(-err));
}

/* The fallback, or none if the environment forbids it; decided for good. */
static void fall_back(const char *why)
{
	if (S.required_by) {
		S.backend = BACKEND_NONE;
		snprintf(S.reason, sizeof(S.reason), "%.160s; the fallback is forbidden (%s)", why,
			 S.required_by);
	} else {
		S.backend = BACKEND_MLOCK;
		snprintf(S.reason, sizeof(S.reason), "%.160s; using " FALLBACK_WHAT, why);
	}
}

/*
 * Linux 6.1 maps secretmem without charging RLIMIT_MEMLOCK (VmLck stays
 * 0) and charges at fault time, where going over the limit is a SIGBUS;
 * later kernels charge at mmap and refuse with EAGAIN.  One page mapped
 * from @fd tells which: on the former, mmkit keeps the count itself.
 */
static int secretmem_charges_at_mmap(int fd)
{
	struct mmkit_memlock before, after;
	void *p;
	int charged;

	if (mmkit_memlock_check(NULL, 0, &before) || sys_ftruncate(fd, (off_t)S.page) ||
	    sys_mmap(NULL, S.page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0, &p))
		return 0;
	charged = !mmkit_memlock_check(NULL, 0, &after) && after.locked >= before.locked + S.page;
	sys_munmap(p, S.page);
	return charged;
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

static void choose_backend(void)
{
	const char *force = secure_getenv("MMKIT_SECRET_BACKEND");
	const char *require = secure_getenv("MMKIT_SECRET_REQUIRE");
	char why[160];
	int fd;

	if (require && !strcmp(require, "1"))
		S.required_by = "MMKIT_SECRET_REQUIRE=1";
	if (force && !strcmp(force, "memfd_secret"))
		S.required_by = "MMKIT_SECRET_BACKEND=memfd_secret";
	if (force && !strcmp(force, "mlock")) {
		fall_back("MMKIT_SECRET_BACKEND=mlock: memfd_secret not tried");
		return;
	}
	fd = sys_memfd_secret(O_CLOEXEC);
	if (fd < 0) {
		describe_refusal(why, sizeof(why), "memfd_secret", fd);
		fall_back(why);
		return;
	}
	S.charged_at_fault = !secretmem_charges_at_mmap(fd);
	sys_close(fd);
	S.backend = BACKEND_SECRETMEM;
	snprintf(S.reason, sizeof(S.reason), "memfd_secret(2) works: pages leave the kernel direct map%s",
		 force && strcmp(force, "memfd_secret") ?
		 " (MMKIT_SECRET_BACKEND value not understood: ignored)" : "");
}

static void atfork_prepare(void);
static void atfork_parent(void);
static void atfork_child(void);

static void init(void)
{
	unsigned int k, i;

	S.page = sys_page_size();
	/* 16 pages or 64 KiB: slot numbers stay below 2^16 for pages up to 64 KiB. */
	S.stride = S.page * 16 > 65536 ? S.page * 16 : 65536;
	S.stride_shift = (unsigned int)__builtin_ctzl(S.stride);
	S.chunk_len = S.stride - S.page;
	for (i = 0, k = 0; i < CLASS_SLOTS; i++) {
		while (class_size[k] < i * SLOT_ALIGN)
			k++;
		S.class_of[i] = (unsigned char)k;
	}
	choose_backend();
	S.init_error = sys_getrandom(&S.canary_key, sizeof(S.canary_key));
	if (!S.init_error)
		S.init_error = -pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

static int ensure_init(void)
{
	pthread_once(&S.once, init);
	return S.init_error;
}

/* ------------------------------------------------------------------ */
/* Mapping secret pages                                                 */
/* ------------------------------------------------------------------ */

/* Turns [addr, addr + len) back into a guard reservation, atomically. */
static int unmap_secret(void *addr, size_t len)
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

/* Records why mapping @len bytes failed, with the RLIMIT_MEMLOCK figures. */
static void note_failure(size_t len, int err)
{
	struct mmkit_memlock m;

	if (err != -ENOMEM || mmkit_memlock_check(NULL, 0, &m)) {
		snprintf(S.last_error, sizeof(S.last_error), "mapping %zu KiB of secret memory: %s",
			 len / 1024, errname(-err));
		return;
	}
	S.enomem++;
	if (m.exempt || m.limit == MMKIT_MEMLOCK_UNLIMITED)
		snprintf(S.last_error, sizeof(S.last_error),
			 "mapping %zu KiB of secret memory: ENOMEM (no RLIMIT_MEMLOCK applies: out of memory or address space)",
			 len / 1024);
	else
		snprintf(S.last_error, sizeof(S.last_error),
			 "mapping %zu KiB of secret memory would exceed RLIMIT_MEMLOCK: limit %llu KiB, %llu KiB locked (%llu KiB by mmkit)",
			 len / 1024, m.limit / 1024, m.locked / 1024, S.bytes_locked / 1024);
}

/*
 * Maps secret pages over the guard reservation [addr, addr + len).  On
 * failure the guard is put back; *lost tells when even that failed.
 */
static int map_secret(void *addr, size_t len, int *lost)
{
	int ret;

	*lost = 0;
	if (S.backend == BACKEND_SECRETMEM) {
		ret = secretmem_fits(len);
		if (ret) {
			note_failure(len, ret);
			return ret;
		}
		ret = map_secretmem(addr, len);
	} else {
		ret = map_fallback(addr, len);
	}
	if (!ret) {
		S.pages_mapped += len / S.page;
		S.bytes_locked += len;
		return 0;
	}
	*lost = !!unmap_secret(addr, len);
	/*
	 * Refused although memfd_secret worked at start (a seccomp filter or
	 * security policy installed since): fall back once, for good; the
	 * caller sees -ENOSYS and retries if the fallback is allowed.
	 */
	if (S.backend == BACKEND_SECRETMEM && (ret == -ENOSYS || ret == -EPERM || ret == -EACCES)) {
		char why[160];

		describe_refusal(why, sizeof(why), "memfd_secret refused after working", ret);
		fall_back(why);
		ret = -ENOSYS;
	}
	note_failure(len, ret);
	return ret;
}

static int release_secret(void *addr, size_t len)
{
	S.pages_mapped -= len / S.page;
	S.bytes_locked -= len;
	return unmap_secret(addr, len);
}

/* ------------------------------------------------------------------ */
/* Canaries                                                             */
/* ------------------------------------------------------------------ */

/*
 * The canary bytes of a slot come from a per-process random key and the
 * slot's address, so they cannot be guessed; no byte is zero, so an
 * off-by-one string terminator is caught too.  An 8-byte pattern repeats
 * over the canary, written and compared a word at a time.
 */
static uint64_t canary_pattern(const void *owner)
{
	uint64_t x = S.canary_key ^ (uintptr_t)owner;

	x *= 0x9e3779b97f4a7c15ULL;
	/* The low bit of every byte set: 56 random bits, no zero byte. */
	return (x ^ (x >> 29)) | 0x0101010101010101ULL;
}

static void canary_fill(unsigned char *at, size_t len, const void *owner)
{
	uint64_t pat = canary_pattern(owner);
	size_t i;

	for (i = 0; i + 8 <= len; i += 8)
		memcpy(at + i, &pat, 8);
	memcpy(at + i, &pat, len - i);
}

static int canary_ok(const unsigned char *at, size_t len, const void *owner)
{
	uint64_t pat = canary_pattern(owner), diff = 0, v;
	size_t i;

	for (i = 0; i + 8 <= len; i += 8) {
		memcpy(&v, at + i, 8);
		diff |= v ^ pat;
	}
	return !diff && !memcmp(at + i, &pat, len - i);
}

static void __attribute__((noreturn)) die(const void *p, const char *what)
{
	char msg[256];
	int n;

	n = snprintf(msg, sizeof(msg), "mmkit: mmkit_secret_free(%p): %s; aborting\n", p, what);
	sys_write(2, msg, n > 0 && (size_t)n < sizeof(msg) ? (size_t)n : strlen(msg));
	abort();
}

/* ------------------------------------------------------------------ */
/* The pool of small secrets                                            */
/* ------------------------------------------------------------------ */

static void list_add(struct chunk **head, struct chunk *c)
{
	c->prev = NULL;
	c->next = *head;
	if (*head)
		(*head)->prev = c;
	*head = c;
}

static void list_del(struct chunk **head, struct chunk *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else
		*head = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->next = c->prev = NULL;
}

static int arena_add(void)
{
	size_t len = BLOCKS_PER_ARENA * S.stride + S.page;
	struct arena *a, **bigger;
	void *base;
	size_t i, at;
	int ret;

	bigger = sys_reallocarray(S.arenas, S.narenas + 1, sizeof(*S.arenas));
	if (!bigger)
		return -ENOMEM;
	S.arenas = bigger;
	a = sys_calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	ret = sys_mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0, &base);
	if (ret) {
		free(a);
		return ret;
	}
	a->base = base;
	for (i = 0; i < BLOCKS_PER_ARENA; i++)
		a->chunk[i].data = a->base + i * S.stride + S.page;
	for (at = 0; at < S.narenas && S.arenas[at]->base < a->base; at++)
		;
	memmove(&S.arenas[at + 1], &S.arenas[at], (S.narenas - at) * sizeof(*S.arenas));
	S.arenas[at] = a;
	S.narenas++;
	return 0;
}

static struct chunk *chunk_of(const void *p)
{
	const char *c = p;
	size_t lo = 0, hi = S.narenas;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		struct arena *a = S.arenas[mid];

		if (c < a->base)
			hi = mid;
		else if (c >= a->base + BLOCKS_PER_ARENA * S.stride)
			lo = mid + 1;
		else
			return &a->chunk[(size_t)(c - a->base) >> S.stride_shift];
	}
	return NULL;
}

/* A block with nothing mapped, from a new arena if need be. */
static int block_find(struct chunk **out)
{
	size_t i, j;
	int ret;

	for (;;) {
		for (i = S.narenas; i-- > 0;)
			for (j = 0; j < BLOCKS_PER_ARENA; j++)
				if (S.arenas[i]->chunk[j].state == CHUNK_UNUSED) {
					*out = &S.arenas[i]->chunk[j];
					return 0;
				}
		ret = arena_add();
		if (ret)
			return ret;
	}
}

/* Maps a new chunk into the cache. */
static int chunk_map(struct chunk **out)
{
	struct chunk *c;
	int ret, lost;

	ret = block_find(&c);
	if (ret)
		return ret;
	ret = map_secret(c->data, S.chunk_len, &lost);
	if (ret) {
		if (lost)
			c->state = CHUNK_LOST;
		return ret;
	}
	c->state = CHUNK_CACHED;
	list_add(&S.cache, c);
	S.ncached++;
	*out = c;
	return 0;
}

/* Takes a chunk from the cache (mapping one if needed) for size class @k. */
static int chunk_assign(unsigned int k, struct chunk **out)
{
	unsigned int nslots = (unsigned int)(S.chunk_len / class_size[k]);
	struct chunk *c = S.cache;
	uint16_t *meta;
	int ret;

	meta = sys_calloc(2 * (size_t)nslots, sizeof(*meta));
	if (!meta)
		return -ENOMEM;
	if (!c) {
		ret = chunk_map(&c);
		if (ret) {
			free(meta);
			return ret;
		}
	}
	list_del(&S.cache, c);
	S.ncached--;
	c->sizes = meta;
	c->free_slots = meta + nslots;
	c->nfree = c->bump = c->live = 0;
	c->nslots = nslots;
	c->slot = class_size[k];
	/* Exact for offsets below 2^32 / slot, and chunks are far smaller. */
	c->slot_inv = (uint32_t)((((uint64_t)1 << 32) + c->slot - 1) / c->slot);
	c->cls = k;
	c->state = CHUNK_ACTIVE;
	list_add(&S.cls[k].avail, c);
	S.cls[k].empty++;
	*out = c;
	return 0;
}

/* An emptied chunk leaves its class: kept in the cache, or unmapped. */
static void chunk_unassign(struct chunk *c)
{
	list_del(&S.cls[c->cls].avail, c);
	S.cls[c->cls].empty--;
	free(c->sizes);
	c->sizes = c->free_slots = NULL;
	if (S.ncached < S.keep) {
		c->state = CHUNK_CACHED;
		list_add(&S.cache, c);
		S.ncached++;
		return;
	}
	c->state = release_secret(c->data, S.chunk_len) ? CHUNK_LOST : CHUNK_UNUSED;
}

static int pool_alloc(void **p, size_t size)
{
	unsigned int k = S.class_of[(size + CANARY_MIN + SLOT_ALIGN - 1) / SLOT_ALIGN];
	struct class *cl = &S.cls[k];
	struct chunk *c = cl->avail;
	unsigned int idx;
	char *slot;
	int ret;

	if (!c) {
		ret = chunk_assign(k, &c);
		if (ret)
			return ret;
	}
	if (!c->live)
		cl->empty--;
	idx = c->nfree ? c->free_slots[--c->nfree] : c->bump++;
	c->live++;
	if (!c->nfree && c->bump == c->nslots)
		list_del(&cl->avail, c);
	c->sizes[idx] = (uint16_t)size;
	slot = c->data + (size_t)idx * c->slot;
	canary_fill((unsigned char *)slot + size, c->slot - size, slot);
	*p = slot;
	return 0;
}

static void pool_free(struct chunk *c, char *p)
{
	size_t off = (size_t)(p - c->data);
	unsigned int idx;
	size_t size;
	int was_full;

	if (c->state != CHUNK_ACTIVE && c->state != CHUNK_DEAD)
		die(p, "invalid pointer: no secret was allocated there");
	if (p < c->data || off >= S.chunk_len)
		die(p, "invalid pointer: not the start of a secret");
	idx = (unsigned int)((off * c->slot_inv) >> 32);
	if ((size_t)idx * c->slot != off || idx >= c->bump)
		die(p, "invalid pointer: not the start of a secret");
	size = c->sizes[idx];
	if (!size)
		die(p, "double free: this secret was already freed");
	if (c->state == CHUNK_DEAD) {
		/* The parent's secret, PROT_NONE here: nothing to wipe. */
		c->sizes[idx] = 0;
		if (!--c->live) {
			free(c->sizes);
			c->sizes = c->free_slots = NULL;
			c->state = CHUNK_UNUSED;
		}
		return;
	}
	if (!canary_ok((unsigned char *)p + size, c->slot - size, p))
		die(p, "damaged canary: something wrote past the end of this secret");
	explicit_bzero(p, c->slot);
	was_full = !c->nfree && c->bump == c->nslots;
	c->sizes[idx] = 0;
	c->free_slots[c->nfree++] = (uint16_t)idx;
	c->live--;
	S.allocs_live--;
	S.bytes_live -= size;
	if (was_full)
		list_add(&S.cls[c->cls].avail, c);
	if (c->live)
		return;
	/* One empty chunk per class stays, so alloc/free ping-pong never remaps. */
	if (S.cls[c->cls].empty++)
		chunk_unassign(c);
}

/* ------------------------------------------------------------------ */
/* Spans: secrets with their own pages                                  */
/* ------------------------------------------------------------------ */

/* MurmurHash3's finalizer: spans' pointers differ in few, middle bits. */
static size_t hash_ptr(const void *p)
{
	uint64_t x = (uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return (size_t)x;
}

static size_t table_slot(const void *p)
{
	size_t i = hash_ptr(p) & (S.table_cap - 1);

	while (S.table[i] && S.table[i]->user != p)
		i = (i + 1) & (S.table_cap - 1);
	return i;
}

static struct span *table_find(const void *p)
{
	return S.table_cap ? S.table[table_slot(p)] : NULL;
}

static int table_insert(struct span *sp)
{
	if (2 * (S.table_count + 1) > S.table_cap) {
		size_t old_cap = S.table_cap, i;
		struct span **old = S.table;
		size_t cap = old_cap ? 2 * old_cap : 64;
		struct span **t = sys_calloc(cap, sizeof(*t));

		if (!t)
			return -ENOMEM;
		S.table = t;
		S.table_cap = cap;
		for (i = 0; i < old_cap; i++)
			if (old[i])
				S.table[table_slot(old[i]->user)] = old[i];
		free(old);
	}
	S.table[table_slot(sp->user)] = sp;
	S.table_count++;
	return 0;
}

/* Linear-probing removal: later entries of the run move back into the hole. */
static void table_remove(struct span *sp)
{
	size_t mask = S.table_cap - 1;
	size_t hole = table_slot(sp->user), i = hole;

	S.table[hole] = NULL;
	for (;;) {
		size_t home;

		i = (i + 1) & mask;
		if (!S.table[i])
			break;
		home = hash_ptr(S.table[i]->user) & mask;
		if (((i - home) & mask) >= ((i - hole) & mask)) {
			S.table[hole] = S.table[i];
			S.table[i] = NULL;
			hole = i;
		}
	}
	S.table_count--;
}

static void span_destroy(struct span *sp)
{
	if (!sp->dead) {
		S.pages_mapped -= sp->pages;
		S.bytes_locked -= sp->pages * S.page;
	}
	/* The whole reservation goes: nothing of mmkit's is left at those addresses. */
	sys_munmap(sp->base, (sp->pages + 2) * S.page);
	free(sp);
}

static struct span *span_cache_take(size_t pages)
{
	struct span **link;

	for (link = &S.span_cache; *link; link = &(*link)->next)
		if ((*link)->pages == pages) {
			struct span *sp = *link;

			*link = sp->next;
			S.nspan_cache--;
			S.span_cache_pages -= pages;
			return sp;
		}
	return NULL;
}

static int span_new(size_t pages, struct span **out)
{
	struct span *sp = sys_calloc(1, sizeof(*sp));
	void *base;
	int ret, lost;

	if (!sp)
		return -ENOMEM;
	ret = sys_mmap(NULL, (pages + 2) * S.page, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0, &base);
	if (ret) {
		free(sp);
		return ret;
	}
	sp->base = base;
	sp->pages = pages;
	ret = map_secret(sp->base + S.page, pages * S.page, &lost);
	if (ret) {
		sys_munmap(sp->base, (pages + 2) * S.page);
		free(sp);
		return ret;
	}
	*out = sp;
	return 0;
}

static int span_alloc(void **p, size_t size)
{
	size_t len = (size + SLOT_ALIGN - 1) & ~(size_t)(SLOT_ALIGN - 1);
	size_t pages = (len + S.page - 1) / S.page;
	struct span *sp;
	char *data;
	int ret;

	sp = span_cache_take(pages);
	if (!sp) {
		ret = span_new(pages, &sp);
		if (ret)
			return ret;
	}
	data = sp->base + S.page;
	sp->user = data + pages * S.page - len;
	sp->size = size;
	sp->access = MMKIT_SECRET_READWRITE;
	ret = table_insert(sp);
	if (ret) {
		span_destroy(sp);
		return ret;
	}
	canary_fill((unsigned char *)data, (size_t)(sp->user - data), sp->user);
	canary_fill((unsigned char *)sp->user + size, len - size, sp->user + size);
	*p = sp->user;
	return 0;
}

static void span_free(struct span *sp)
{
	char *data = sp->base + S.page;
	char *end = data + sp->pages * S.page;
	size_t head = (size_t)(sp->user - data);

	table_remove(sp);
	if (sp->dead) {
		span_destroy(sp);
		return;
	}
	if (sp->access != MMKIT_SECRET_READWRITE &&
	    sys_mprotect(data, sp->pages * S.page, PROT_READ | PROT_WRITE))
		die(sp->user, "cannot make the secret writable again to wipe it");
	if (!canary_ok((unsigned char *)data, head, sp->user))
		die(sp->user, "damaged canary: something wrote before the start of this secret");
	if (!canary_ok((unsigned char *)sp->user + sp->size, (size_t)(end - sp->user) - sp->size,
		       sp->user + sp->size))
		die(sp->user, "damaged canary: something wrote past the end of this secret");
	explicit_bzero(data, sp->pages * S.page);
	S.allocs_live--;
	S.bytes_live -= sp->size;
	if (S.nspan_cache < SPAN_CACHE_MAX && sp->pages <= SPAN_CACHE_PAGES) {
		sp->next = S.span_cache;
		S.span_cache = sp;
		S.nspan_cache++;
		S.span_cache_pages += sp->pages;
		return;
	}
	span_destroy(sp);
}

static int span_cached(const void *p)
{
	const struct span *sp;

	for (sp = S.span_cache; sp; sp = sp->next)
		if (sp->user == p)
			return 1;
	return 0;
}

/* ------------------------------------------------------------------ */
/* fork                                                                 */
/* ------------------------------------------------------------------ */

static void atfork_prepare(void)
{
	pthread_mutex_lock(&S.lock);
}

static void atfork_parent(void)
{
	pthread_mutex_unlock(&S.lock);
}

/*
 * The child has no locked or secret pages of its own (mlock is not
 * inherited, memfd_secret mappings were not copied): it forgets them all,
 * leaving PROT_NONE where the parent's secrets are.
 */
static void atfork_child(void)
{
	struct span *sp;
	size_t i, j;

	for (i = 0; i < S.narenas; i++)
		for (j = 0; j < BLOCKS_PER_ARENA; j++) {
			struct chunk *c = &S.arenas[i]->chunk[j];

			if (c->state != CHUNK_ACTIVE && c->state != CHUNK_CACHED)
				continue;
			if (unmap_secret(c->data, S.chunk_len))
				c->state = CHUNK_LOST;
			else if (c->live)
				c->state = CHUNK_DEAD;
			else
				c->state = CHUNK_UNUSED;
			if (c->state != CHUNK_DEAD) {
				free(c->sizes);
				c->sizes = c->free_slots = NULL;
			}
			c->next = c->prev = NULL;
		}
	memset(S.cls, 0, sizeof(S.cls));
	S.cache = NULL;
	S.ncached = 0;
	for (i = 0; i < S.table_cap; i++) {
		sp = S.table[i];
		if (sp && !sp->dead) {
			unmap_secret(sp->base + S.page, sp->pages * S.page);
			sp->dead = 1;
		}
	}
	while ((sp = S.span_cache)) {
		S.span_cache = sp->next;
		sys_munmap(sp->base, (sp->pages + 2) * S.page);
		free(sp);
	}
	S.nspan_cache = 0;
	S.allocs_live = S.bytes_live = 0;
	S.pages_mapped = S.span_cache_pages = S.bytes_locked = 0;
	pthread_mutex_unlock(&S.lock);
}

/* ------------------------------------------------------------------ */
/* API                                                                  */
/* ------------------------------------------------------------------ */

static int backend_allowed(unsigned int flags)
{
	static const char notice[] = "mmkit: secret memory: ";
	static const char hint[] = " (MMKIT_SECRET_REQUIRE=1 refuses this)\n";

	if (S.backend == BACKEND_NONE ||
	    (S.backend == BACKEND_MLOCK && (flags & MMKIT_SECRET_REQUIRE_SECRETMEM))) {
		snprintf(S.last_error, sizeof(S.last_error), "memfd_secret required: %.200s", S.reason);
		return -ENOSYS;
	}
	if (S.backend == BACKEND_MLOCK && !(flags & MMKIT_SECRET_QUIET) && !S.noticed) {
		S.noticed = 1;
		sys_write(2, notice, sizeof(notice) - 1);
		sys_write(2, S.reason, strlen(S.reason));
		sys_write(2, hint, sizeof(hint) - 1);
	}
	return 0;
}

MMKIT_EXPORT int mmkit_secret_alloc(void **p, size_t size, unsigned int flags)
{
	enum backend before;
	int ret;

	if (!p || !size ||
	    (flags & ~(MMKIT_SECRET_REQUIRE_SECRETMEM | MMKIT_SECRET_QUIET | MMKIT_SECRET_PAGES)))
		return -EINVAL;
	ret = ensure_init();
	if (ret)
		return ret;
	/* Beyond this, the guard pages and rounding could not be represented. */
	if (size > PTRDIFF_MAX - 4 * S.page)
		return -ENOMEM;
	pthread_mutex_lock(&S.lock);
	do {
		before = S.backend;
		ret = backend_allowed(flags);
		if (ret)
			break;
		if (size <= MMKIT_SECRET_POOL_MAX && !(flags & MMKIT_SECRET_PAGES))
			ret = pool_alloc(p, size);
		else
			ret = span_alloc(p, size);
	} while (ret == -ENOSYS && S.backend != before);
	if (!ret) {
		S.allocs_live++;
		S.bytes_live += size;
	}
	pthread_mutex_unlock(&S.lock);
	return ret;
}

MMKIT_EXPORT void mmkit_secret_free(void *p)
{
	struct chunk *c;
	struct span *sp;

	if (!p)
		return;
	if (ensure_init())
		die(p, "invalid pointer: the allocator never started");
	pthread_mutex_lock(&S.lock);
	c = chunk_of(p);
	if (c) {
		pool_free(c, p);
	} else {
		sp = table_find(p);
		if (sp)
			span_free(sp);
		else if (span_cached(p))
			die(p, "double free: this secret was already freed");
		else
			die(p, "invalid pointer: not a live secret (never allocated here, or freed long ago)");
	}
	pthread_mutex_unlock(&S.lock);
}

MMKIT_EXPORT int mmkit_secret_protect(void *p, int access)
{
	static const int prot[] = {
		[MMKIT_SECRET_NOACCESS] = PROT_NONE,
		[MMKIT_SECRET_READONLY] = PROT_READ,
		[MMKIT_SECRET_READWRITE] = PROT_READ | PROT_WRITE,
	};
	struct span *sp;
	int ret;

	if (!p || access < MMKIT_SECRET_NOACCESS || access > MMKIT_SECRET_READWRITE)
		return -EINVAL;
	ret = ensure_init();
	if (ret)
		return ret;
	pthread_mutex_lock(&S.lock);
	sp = table_find(p);
	if (!sp || sp->dead) {
		ret = -EINVAL;
	} else {
		ret = sys_mprotect(sp->base + S.page, sp->pages * S.page, prot[access]);
		if (!ret)
			sp->access = access;
	}
	pthread_mutex_unlock(&S.lock);
	return ret;
}

MMKIT_EXPORT int mmkit_secret_reserve(size_t bytes)
{
	enum backend before;
	size_t want, off;
	struct chunk *c;
	int ret;

	ret = ensure_init();
	if (ret)
		return ret;
	want = bytes / S.chunk_len + !!(bytes % S.chunk_len);
	if (want > UINT32_MAX)
		return -ENOMEM;
	pthread_mutex_lock(&S.lock);
	ret = backend_allowed(MMKIT_SECRET_QUIET);
	while (!ret && S.ncached < want) {
		before = S.backend;
		ret = chunk_map(&c);
		if (ret == -ENOSYS && S.backend != before) {
			ret = backend_allowed(MMKIT_SECRET_QUIET);
			continue;
		}
		/* Fault every page in now, so no allocation pays for it. */
		for (off = 0; !ret && off < S.chunk_len; off += S.page)
			*(volatile char *)(c->data + off) = 0;
	}
	if (!ret && want > S.keep)
		S.keep = (unsigned int)want;
	pthread_mutex_unlock(&S.lock);
	return ret;
}

MMKIT_EXPORT int mmkit_secret_stats(struct mmkit_secret_stats *st)
{
	static const char *const names[] = {
		[BACKEND_SECRETMEM] = "memfd_secret",
		[BACKEND_MLOCK] = "mlock",
		[BACKEND_NONE] = "none",
	};
	unsigned long long empty = 0;
	struct mmkit_memlock m;
	unsigned int k;
	int ret;

	if (!st)
		return -EINVAL;
	ret = ensure_init();
	if (!ret)
		ret = mmkit_memlock_check(NULL, 0, &m);
	if (ret)
		return ret;
	memset(st, 0, sizeof(*st));
	pthread_mutex_lock(&S.lock);
	snprintf(st->backend, sizeof(st->backend), "%s", names[S.backend]);
	snprintf(st->reason, sizeof(st->reason), "%s", S.reason);
	snprintf(st->last_error, sizeof(st->last_error), "%s", S.last_error);
	st->allocs_live = S.allocs_live;
	st->bytes_live = S.bytes_live;
	st->pages_mapped = S.pages_mapped;
	/* Empty chunks: in the cache, and the one each size class may keep. */
	for (k = 0; k < NCLASSES; k++)
		empty += S.cls[k].empty;
	st->pages_cached = (empty + S.ncached) * (S.chunk_len / S.page) + S.span_cache_pages;
	st->bytes_locked = S.bytes_locked;
	st->enomem = S.enomem;
	st->fallback = S.backend == BACKEND_MLOCK;
	pthread_mutex_unlock(&S.lock);
	st->memlock_limit = m.limit;
	st->memlock_exempt = m.exempt;
	return 0;
}

void mmkit__probe_secret(struct mmkit_feature *f)
{
	struct mmkit_memlock m = { 0 };
	int ret = ensure_init();

	if (ret) {
		mmkit__feature_set(f, MMKIT_STATUS_UNSUPPORTED, "none", "secret memory: %s",
				   errname(-ret));
		return;
	}
	mmkit_memlock_check(NULL, 0, &m);
	if (S.backend == BACKEND_SECRETMEM && (m.exempt || m.limit == MMKIT_MEMLOCK_UNLIMITED))
		mmkit__feature_set(f, MMKIT_STATUS_NATIVE, "memfd_secret",
				   "%s; RLIMIT_MEMLOCK does not apply (%s)", S.reason,
				   m.exempt ? "CAP_IPC_LOCK" : "unlimited");
	else if (S.backend == BACKEND_SECRETMEM)
		mmkit__feature_set(f, MMKIT_STATUS_NATIVE, "memfd_secret",
				   "%s; RLIMIT_MEMLOCK %llu KiB bounds it", S.reason, m.limit / 1024);
	else if (S.backend == BACKEND_MLOCK)
		mmkit__feature_set(f, MMKIT_STATUS_FALLBACK, "mlock", "%s", S.reason);
	else
		mmkit__feature_set(f, MMKIT_STATUS_UNSUPPORTED, "none", "%s", S.reason);
}
