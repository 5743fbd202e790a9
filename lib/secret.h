/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * Secret memory, in six files that call one way:
 *   secret.c       the API: set-up, the lock, fork, statistics, probe;
 *   secret-cache.c per-thread caches of free slots: the lock-free fast path;
 *   secret-pool.c  small secrets in slots of shared chunks;
 *   secret-arena.c the reservations those chunks are mapped in;
 *   secret-span.c  big secrets, each on pages of its own;
 *   secret-mem.c   the memory under both: the backend (memfd_secret or the
 *                  mlock fallback), mapping secret pages, canaries.
 * They share one state, S, under S.lock; only secret-cache.c's fast path
 * works outside it, on a thread's own cache and on slots it holds.  Not
 * installed.
 */
#ifndef MMKIT_SECRET_H
#define MMKIT_SECRET_H

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "internal.h"

#define FALLBACK_WHAT	"mlock+MADV_DONTDUMP+MADV_WIPEONFORK"

enum secret_backend { BACKEND_SECRETMEM, BACKEND_MLOCK, BACKEND_NONE };

/* Bytes after each pooled secret that an overflow must get through. */
#define CANARY_MIN		8
#define SLOT_ALIGN		16
#define BLOCKS_PER_ARENA	256
/* Arenas are found by a hash of their aligned base: at most 3/4 of this many. */
#define ARENA_TABLE		4096
/*
 * Bytes of empty chunks kept mapped for reuse beyond one per size class:
 * remapping costs a fault per page, and with memfd_secret each fault also
 * flushes every CPU's TLB.  Given back when a mapping does not fit the lock
 * limit (secret__pool_trim), down to what mmkit_secret_reserve() asked for.
 */
#define CACHE_KEEP_BYTES	((size_t)16 << 20)
/*
 * Freed spans kept for reuse, PROT_NONE until reused, the oldest first: at
 * most this many, of at most this many pages.
 */
#define SPAN_CACHE_MAX		32
#define SPAN_CACHE_PAGES	64

/* The size classes of pooled secrets (secret-pool.c). */
#define NCLASSES	19
#define CLASS_SLOTS	(2048 / SLOT_ALIGN + 1)

enum chunk_state {
	CHUNK_UNUSED,	/* a guard reservation, nothing mapped */
	CHUNK_ACTIVE,	/* mapped, carved for a size class */
	CHUNK_CACHED,	/* mapped, empty, no class */
	CHUNK_DEAD,	/* the parent's, in a fork child: PROT_NONE, slots still owed a free */
	CHUNK_LOST,	/* the guard could not be put back: never used again */
};

/*
 * A slot is live (its size in sizes[]), free in its chunk (its bit set in
 * free_map), held in quarantine (its bit set in held_map), or held by a
 * thread's cache (none of these); a slot not live was
 * never handed out (size 0) or was freed (SLOT_FREED), which tells a bad
 * pointer from a double free.  Only the thread
 * holding a slot writes its sizes[] entry; everything else in a chunk
 * changes under S.lock.
 */
struct chunk {
	char *data;
	/* Bytes mapped at data: S.chunk_len, or one page near the lock limit. */
	size_t len;
	struct chunk *next, *prev;	/* class list of chunks with free slots, or the cache */
	void *meta;			/* the allocation sizes, free_map and free_sum live in */
	uint16_t *sizes;		/* bytes asked for, per slot; 0 or SLOT_FREED: not live */
	uint64_t *free_map;		/* a bit per slot: free in the chunk */
	uint64_t *free_sum;		/* a bit per free_map word: it has a bit set */
	/* A bit per slot: held in quarantine for a thread that exited (secret__pool_hold). */
	uint64_t *held_map;
	unsigned int nfree;		/* bits set in free_map */
	unsigned int nheld;		/* bits set in held_map */
	unsigned long long held_when;	/* S.held_clock at its latest held slot */
	unsigned int nslots;
	unsigned int owed;		/* CHUNK_DEAD: the parent's live slots, owed a free */
	unsigned int slot;
	uint32_t slot_inv;		/* ceil(2^32 / slot): division by multiplication */
	unsigned int cls;
	enum chunk_state state;
	/*
	 * The thread cache refilling from this chunk alone (the address of
	 * its chunk[] entry), or NULL: two threads drawing slots from one
	 * chunk would write neighbouring sizes[] entries and slot bytes,
	 * sharing cache lines.
	 */
	struct chunk **owner;
};

struct arena {
	char *base;
	struct chunk chunk[BLOCKS_PER_ARENA];
};

/*
 * A slot held by a thread's cache (or on its way to quarantine), with its
 * canary pattern (secret-mem.c); @freed: it was freed into the cache, not
 * taken fresh from its chunk.
 */
struct cached_slot {
	struct chunk *chunk;
	unsigned int idx;
	unsigned int freed;
	uint64_t canary;
};

#define CACHE_MAX	32
/*
 * The slots a thread freed last of a size class, up to this many, are not
 * handed out again while others can be: a stale pointer to a freed secret
 * reads zeros rather than the next secret.  A thread's slots of a class
 * are a ring of CACHE_RING, the oldest first: fresh slots go in at the
 * front, freed ones at the back, and allocation takes from the front.
 * The quarantine outlives the thread: when it exits (or when a secret is
 * freed without a cache), its freed slots are held in their chunks, not
 * freed there, and handed out only when no chunk can be had, as a live
 * thread's (secret-pool.c).
 */
#define QUARANTINE	16
/*
 * Bytes of held slots a class keeps at most when it needs a new chunk:
 * a process that starts and ends threads for ever (each exit holds its
 * quarantine) would otherwise map more for them until the lock limit, or
 * without one for good.  The chunks held longest give way, down to half.
 */
#define HELD_KEEP_BYTES	((size_t)1 << 20)

struct class {
	struct chunk *avail;		/* chunks with a free slot */
	unsigned int empty;		/* of those, chunks with every slot free */
	unsigned int cache_max;		/* slots a thread's cache holds at most */
	unsigned int quarantine;	/* freed slots it holds back from reuse */
	unsigned int nheld;		/* slots held in its chunks' held_map */
};

#define CACHE_RING	64
/* The size recorded for a slot freed since its chunk was carved. */
#define SLOT_FREED	0x8000

struct thread_cache {
	struct thread_cache *next, *prev;	/* every thread's, under S.lock */
	/*
	 * What this thread allocated less what it freed, wrapping: the
	 * statistics add these to S.allocs_live and S.bytes_live.  Written by
	 * the owner, read by others, so both with relaxed atomics.
	 */
	unsigned long long allocs, bytes;
	struct chunk *chunk[NCLASSES];		/* per class, the chunk it owns and refills from */
	unsigned int head[NCLASSES];		/* the oldest slot's place in the ring, wrapping */
	unsigned int n[NCLASSES];
	/*
	 * After a refill that got nothing: allocations of the class served
	 * from the quarantine before the next try under the lock.
	 */
	unsigned int wait[NCLASSES];
	struct cached_slot slot[NCLASSES][CACHE_RING];
};

struct span {
	char *base;			/* guard page, data pages, guard page */
	char *user;
	size_t pages;
	size_t size;
	int access;
	int dead;			/* the parent's, in a fork child */
	/* On memfd_secret: the kernel zeroes its pages when the mapping goes. */
	int kernel_wipes;
	/*
	 * Its file's owner (memfd_secret): mincore(2) answers "resident" for
	 * every page of a file the caller neither owns nor may write.
	 */
	uid_t fsuid;
	/* Asked for with MMKIT_SECRET_PAGES: PROT_NONE from its free to its reuse. */
	int guarded;
	struct span *next;		/* in the cache, oldest first */
};

struct secret_state {
	pthread_mutex_t lock;
	pthread_once_t once;
	int init_done;			/* the canary key and the fork handlers are set */
	int atfork_state;	/* mmkit__atfork_register()'s */
	int backend_done;		/* the backend is decided, for good */
	enum secret_backend backend;
	const char *required_by;	/* the variable that forbids the fallback */
	char reason[MMKIT_REASON_MAX];
	char last_error[MMKIT_REASON_MAX];
	int noticed;
	uint64_t canary_key[2];		/* SipHash key of the canaries */
	size_t page;
	size_t stride;
	unsigned int stride_shift;
	size_t chunk_len;
	unsigned char class_of[CLASS_SLOTS];

	unsigned int arena_shift;	/* arenas are aligned to 1 << arena_shift */
	struct arena **arenas;
	size_t narenas;
	/* Arenas by base >> arena_shift, open addressing; read without the lock. */
	struct arena *arena_table[ARENA_TABLE];
	struct class cls[NCLASSES];
	struct chunk *cache;
	size_t cached_bytes;		/* of the chunks in the cache */
	size_t keep;			/* bytes mmkit_secret_reserve() asked to keep cached */

	struct span **table;		/* live spans by user pointer, linear probing */
	size_t table_cap;
	size_t table_count;
	struct span *span_cache;
	unsigned int nspan_cache;

	pthread_key_t cache_key;	/* its destructor flushes an exiting thread's cache */
	int cache_key_done;
	struct thread_cache *caches;

	unsigned long long held_clock;	/* slots held so far: their order */
	unsigned long long allocs_live;
	unsigned long long bytes_live;
	unsigned long long pages_mapped;
	unsigned long long span_cache_pages;
	unsigned long long bytes_locked;
	unsigned long long enomem;
	int charged_at_fault;		/* the kernel charges secretmem at fault, not at mmap */
	int memlock_exempt;		/* CAP_IPC_LOCK at start-up: RLIMIT_MEMLOCK does not apply */
};

/* The allocator's state, defined in secret-mem.c. */
extern struct secret_state S;

/*
 * Gives back idle secret memory that the layers above keep mapped for
 * reuse: how many mappings it released.  secret-mem.c calls it when a
 * mapping would exceed the lock limit; it is passed down to it, so that the
 * memory layer calls nothing above itself.
 */
typedef unsigned int secret_reclaim_fn(void);

/* secret-mem.c */
const char *secret__errname(int err);
/* Decides between memfd_secret and the fallback: 0, or -errno and nothing decided. */
int secret__choose_backend(void);
/*
 * Maps secret pages over the guard reservation [addr, addr + *len).  When
 * they would exceed the lock limit, calls @reclaim and tries again, while
 * it releases something, then tries @least bytes (a page multiple, at
 * most *len); *len: the bytes mapped.  On failure the guard is put back;
 * *lost tells when even that failed.
 */
int secret__map(void *addr, size_t *len, size_t least, secret_reclaim_fn *reclaim, int *lost);
/*
 * 1 if 2 * @len more bytes fit RLIMIT_MEMLOCK, counting what mmkit has
 * locked (what else the process locks only /proc tells, too slowly to ask
 * for every chunk), or if no limit applies.
 */
int secret__lock_roomy(size_t len);
/*
 * 0 if @len bytes of secret pages could ever be backed; else -ENOMEM, the
 * reason (RLIMIT_MEMLOCK or physical memory) in S.last_error and the
 * thread's error.
 */
int secret__backable(size_t len);
/* Unmaps secret pages mapped by secret__map(), putting the guard back. */
int secret__release(void *addr, size_t len);
/* Turns [addr, addr + len) back into a guard reservation, atomically. */
int secret__unmap(void *addr, size_t len);
/* SipHash-2-4 of the 8 little-endian bytes of @m under @key. */
uint64_t secret__siphash24(const uint64_t key[2], uint64_t m);
/* The 8-byte pattern of the canary of the secret at @owner. */
uint64_t secret__canary_pattern(const void *owner);
void secret__canary_fill(unsigned char *at, size_t len, const void *owner);
int secret__canary_ok(const unsigned char *at, size_t len, const void *owner);
void secret__pattern_fill(unsigned char *at, size_t len, uint64_t pat);
int secret__pattern_ok(const unsigned char *at, size_t len, uint64_t pat);
/* Reports a bad free of @p and aborts. */
void __attribute__((noreturn)) secret__die(const void *p, const char *what);
/* Reports bookkeeping found damaged (a stray write of the application) and aborts. */
void __attribute__((noreturn)) secret__corrupt(const void *where, const char *what);
/* Zeros to compare freed memory with: a page of 4 KiB, a slot of 2 KiB. */
extern const char secret__zeros[4096];
/* Reports a write into the freed slot at @slot and aborts. */
void __attribute__((noreturn)) secret__stale(const void *slot);
/*
 * Aborts, saying so, unless the @len bytes of the slot at @slot, about to
 * be handed out, are all zero, as free left them: a stale pointer wrote
 * it since (a use after free), which would leak into the next secret.
 * The whole slot: a write past the next owner's size would be erased by
 * its canary unseen.
 */
static inline void secret__slot_unused(const char *slot, size_t len)
{
	typedef uint64_t __attribute__((may_alias)) word;
	const word *w = (const word *)slot;
	uint64_t any = 0;
	size_t i;

	/*
	 * Slots are aligned and a multiple of 16 bytes: whole words, inline,
	 * for the small ones; memcmp(3)'s vector loop for the big ones (a
	 * word at a time took 100 ns of a 2 KiB slot).
	 */
	if (len > 256) {
		any = memcmp(slot, secret__zeros, len);
	} else {
		for (i = 0; i < len / sizeof(*w); i++)
			any |= w[i];
	}
	if (__builtin_expect(any != 0, 0))
		secret__stale(slot);
}

/* secret-pool.c */
/* Computes the size classes' tables; S.page must be set. */
void secret__pool_init(void);
/* The size class of a pooled secret of @size bytes. */
static inline unsigned int secret__class_of(size_t size)
{
	return S.class_of[(size + CANARY_MIN + SLOT_ALIGN - 1) / SLOT_ALIGN];
}
int secret__pool_alloc(void **p, size_t size, secret_reclaim_fn *reclaim);
/*
 * The slot number of the live secret @p in active chunk @c, checked:
 * aborts on a pointer that is not one.  Its size in *size.
 */
unsigned int secret__slot_check(const struct chunk *c, const char *p, size_t *size);
void secret__pool_free(struct chunk *c, char *p);
/*
 * Moves up to @room free slots of class @k, near each other, lowest
 * first, into @out, from the chunk the cache owns through *@mine
 * (claiming one if need be).  Without @may_map, -EAGAIN rather than map a
 * new chunk.
 */
int secret__pool_take(unsigned int k, struct chunk **mine, struct cached_slot *out,
		      unsigned int room, unsigned int *n, secret_reclaim_fn *reclaim, int may_map);
/* A cache's chunks, owned through @mine[NCLASSES], go back to being anyone's. */
void secret__pool_disown(struct chunk **mine);
/* Gives slots held by a cache back to their chunks. */
void secret__pool_give(const struct cached_slot *in, unsigned int n);
/*
 * Holds freed slots that no cache holds back any more in quarantine: in
 * their chunks, handed out only when their class has no free slot and no
 * chunk can be had.
 */
void secret__pool_hold(const struct cached_slot *in, unsigned int n);
/*
 * The size asked for by the secret starting at @p in @c, or 0 if none does;
 * needs no lock in an active chunk (as secret__slot_check()).
 */
size_t secret__pool_size(const struct chunk *c, const char *p);
/*
 * Maps a new chunk into the cache: S.chunk_len bytes, or one page near
 * the lock limit.
 */
int secret__chunk_map(struct chunk **out, secret_reclaim_fn *reclaim);
/*
 * Pages of empty chunks, in the cache or kept by a size class, or with
 * nothing in them but held slots.
 */
unsigned long long secret__pool_empty_pages(void);
/* In a fork child: forgets every chunk, the parent's live slots PROT_NONE. */
void secret__pool_forget(void);
/*
 * Unmaps empty chunks beyond the reserve; how many.  @unhold: the held
 * slots of every class go back to their chunks first, so that the chunks
 * only they kept may go: the last resort, when nothing else could.
 */
unsigned int secret__pool_trim(int unhold);

/* secret-arena.c */
/* The chunk @p lies in, or NULL if it is not in the pool; needs no lock. */
struct chunk *secret__chunk_of(const void *p);
/* A block with nothing mapped, from a new arena if need be. */
int secret__block_find(struct chunk **out);

/* secret-cache.c */
/* Sets up the thread-exit flush, once. */
int secret__cache_init(void);
/* 1: take the locked path (no cache, a notice due, a flag the cache cannot honour). */
int secret__cache_alloc(void **p, size_t size, unsigned int flags, secret_reclaim_fn *reclaim);
/* 1: not a live slot of an active chunk, or no cache: take the locked path. */
int secret__cache_free(void *p);
/* What every thread's cache adds to the live counts (S.lock held). */
void secret__cache_counts(unsigned long long *allocs, unsigned long long *bytes);
/* In a fork child: the other threads' caches are gone, this one's slots dead. */
void secret__cache_forget(void);

/* secret-span.c */
/* @end_at_guard: the secret ends at the upper guard page, unaligned. */
/* @guarded: asked for with MMKIT_SECRET_PAGES, its pages to fault once freed. */
int secret__span_alloc(void **p, size_t size, int end_at_guard, int guarded,
		       secret_reclaim_fn *reclaim);
struct span *secret__span_find(const void *p);
void secret__span_free(struct span *sp);
/* 1 if @p was a span's secret now freed and cached. */
int secret__span_cached(const void *p);
/* In a fork child: live spans PROT_NONE, cached ones unmapped. */
void secret__spans_forget(void);
/* Unmaps the freed spans kept for reuse; how many. */
unsigned int secret__span_trim(void);

#endif /* MMKIT_SECRET_H */
