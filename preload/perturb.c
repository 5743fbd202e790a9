// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * libmmkit-perturb.so: glibc's MALLOC_PERTURB_ without its cost.
 *
 * With MALLOC_PERTURB_=BYTE glibc fills every fresh allocation with
 * BYTE ^ 0xff and every freed one with BYTE, so reads of uninitialised or
 * freed memory show.  The fill is a memset: a program that allocates
 * hundreds of MiB and touches a few pages (xz -9) pays for all of them in
 * time and RSS; and glibc skips it where its thread cache (tcache) hands
 * out or takes back a chunk, so a reused small chunk reads as BYTE and a
 * freed one keeps its data.  This wrapper fills small allocations (glibc's)
 * itself, every time, with glibc's own fill turned off (mallopt M_PERTURB),
 * and serves large ones from mmkit reference pages whose pattern is
 * BYTE ^ 0xff: they read as the fill but cost nothing until written.  Large calloc memory is fresh anonymous memory, zero for free.
 * A freed large range is unmapped, so a use after free faults instead of
 * reading BYTE.  Without MALLOC_PERTURB_ (or 0, or out of range, as glibc
 * reads it) every call goes straight to glibc.
 *
 * Large ranges are page aligned, so free() of a pointer that is not looks
 * no further; the others are looked up in a table of large ranges keyed
 * by address.  A small pointer is only ever handed to glibc, a large one
 * never: glibc never reads a chunk header that is not its own.
 *
 * A tool for finding memory bugs must not hide one: free() fills a small
 * block only once its chunk header is plausible (glibc_chunk_usable()),
 * and never the 16 bytes where glibc keeps its free-list links and the
 * thread cache's double-free key, so glibc still catches a double free
 * and an invalid pointer, as it does under its own MALLOC_PERTURB_.  Small
 * blocks go to the malloc that follows the shim (glibc's, or glibc's
 * libc_malloc_debug.so when it is preloaded after the shim, whose
 * MALLOC_CHECK_ then checks every call).
 *
 * This file is the allocator: the malloc family, the table of large
 * ranges and its lock.  madvise(2) and the mlock calls, which first make
 * the large blocks they cover anonymous memory, are perturb-lock.c;
 * perturb.h is what the two share.
 */
#include <errno.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include <mmkit.h>

#include "glibc-malloc.h"
#include "large-table.h"
#include "perturb.h"
#include "shim.h"

/*
 * Allocations from this size on are large: glibc's default mmap threshold,
 * below which glibc's memset fills memory that its heap recycles and the
 * program mostly writes anyway.
 */
#define LARGE_MIN	(128UL << 10)
/*
 * A large range is built from reference-page pieces of at most this size,
 * each moved into place.  The memfd backend grows its pattern file to the
 * largest range it is asked for (up to 64 MiB, filled and resident while
 * it is filled): asking for 2 MiB at a time keeps it at its smallest.
 */
#define PIECE		(2UL << 20)

/* The fills of fresh (MALLOC_PERTURB_ ^ 0xff) and freed memory; perturbing is 0 when off. */
static unsigned char fresh_fill, freed_fill;
static int perturbing;
static pthread_once_t setup_once = PTHREAD_ONCE_INIT;

/* The reference-page object, made at the first large block (get_refpage()). */
static struct mmkit_refpage *refpage;

/*
 * table_lock guards the table of large ranges: it is never held across
 * a call that takes a lock of the library (files_lock, when the memfd
 * backend's pattern file grows) or of the shim.  The one long stay under
 * it is perturb-lock.c's copy of a block to anonymous memory, which holds
 * it so that the block is not freed or resized under the copy: that walks
 * /proc/self/maps through libmmkit (no lock of the library; a buffer from
 * glibc's malloc, whose arena locks fork takes after every handler, and
 * glibc's malloc never calls back here), copies and mremaps.  So fork(2),
 * whose handlers take table_lock and the library's locks, cannot meet a
 * thread that holds one of those and waits for another.  (A large malloc used to map its pieces under
 * table_lock, taking files_lock inside it, while fork took files_lock,
 * registered later, before table_lock: the two hung each other.)  Both
 * are registered when the shim is loaded (here and in libmmkit's
 * refpage-memfd.c), before any handler a program started with the shim
 * registers, so that fork takes them after the program's own locks, which
 * a program may hold around a malloc that ends up here.
 */
static pthread_mutex_t table_lock = PTHREAD_MUTEX_INITIALIZER;

/*
 * Set while this thread is inside libmmkit, whose own allocations then go
 * straight to glibc: the library's memory is its own business, and a
 * call made under table_lock must not come back for it.
 */
__thread int in_library __attribute__((tls_model("initial-exec")));

/*
 * MMKIT_STATS=1 (mmkit run --stats): one line on stderr at exit, as each
 * shim prints: the large blocks served from reference pages, their bytes,
 * the large requests that went to glibc instead, the blocks still live.
 */
static unsigned long long large_blocks, large_bytes, large_from_glibc;
static struct shim_stats stats;

__attribute__((constructor)) static void stats_setup(void)
{
	shim_stats_setup(&stats);
}

__attribute__((destructor)) static void stats_report(void)
{
	if (!stats.wanted || getpid() != stats.pid)
		return;
	shim_stats_say(&stats, "mmkit-perturb: %s[%d]: large_blocks=%llu large_bytes=%llu "
		       "large_from_glibc=%llu live_at_exit=%zu\n", program_invocation_short_name,
		       (int)stats.pid, shim_counted(&large_blocks), shim_counted(&large_bytes),
		       shim_counted(&large_from_glibc), __atomic_load_n(&table_live, __ATOMIC_RELAXED));
}

static size_t page_size(void)
{
	return (size_t)getpagesize();
}

/*
 * MALLOC_PERTURB_ as glibc reads it: a number (0x hex, 0 octal) from 1 to
 * 255.  Runs once, at the first call; what it calls (dlsym may allocate)
 * goes straight to glibc.
 */
static void setup(void)
{
	const char *env = secure_getenv("MALLOC_PERTURB_");
	unsigned long byte = env ? strtoul(env, NULL, 0) : 0;

	in_library = 1;
	glibc_setup();
	kernel_setup();
	if (byte >= 1 && byte <= 0xff) {
		freed_fill = (unsigned char)byte;
		fresh_fill = (unsigned char)(byte ^ 0xff);
		mallopt(M_PERTURB, 0);
		perturbing = 1;
	}
	in_library = 0;
}

/* Runs setup() once, before anything uses what it finds. */
void set_up(void)
{
	pthread_once(&setup_once, setup);
}

/*
 * Whether to fill; false inside the library, whose memory is its own
 * business.  inline: every malloc asks, and the allocator's calls stay
 * inline as they were when this was static (perturb.h's declaration makes
 * this the external definition perturb-lock.c calls).
 */
inline int perturb_on(void)
{
	if (in_library)
		return 0;
	set_up();
	return perturbing;
}

/* A small (glibc's) allocation, filled from its start to its usable end. */
static void *fill_small(void *p)
{
	if (p)
		memset(p, fresh_fill, glibc.usable_size(p));
	return p;
}

static void lock_table(void)
{
	pthread_mutex_lock(&table_lock);
}

static void unlock_table(void)
{
	pthread_mutex_unlock(&table_lock);
}

/* The child of a fork(2) gets the table unlocked and consistent. */
__attribute__((constructor)) static void register_fork_handlers(void)
{
	pthread_atfork(lock_table, unlock_table, unlock_table);
}

/*
 * Copies the large range at @p into *@out, taking it out of the table if
 * @take; 0 if @p is not one (then it is glibc's).
 */
static int find_large(const void *p, struct large *out, int take)
{
	struct large *slot;

	if (!p || ((uintptr_t)p & (page_size() - 1)) ||
	    !__atomic_load_n(&have_large, __ATOMIC_ACQUIRE))
		return 0;
	lock_table();
	slot = table_find((uintptr_t)p);
	if (slot) {
		*out = *slot;
		if (take)
			table_remove(slot);
	}
	unlock_table();
	return slot != NULL;
}

/*
 * Takes @l out of the table before its addresses are given back: once
 * unmapped they may come back from mmap(2) as someone else's range.
 */
static void forget_large(const struct large *l)
{
	struct large *slot;

	lock_table();
	slot = table_find(l->addr);
	if (slot)
		table_remove(slot);
	unlock_table();
}

/* Marks the large range at @addr protected (struct large). */
void large_protected(uintptr_t addr)
{
	struct large *slot;

	lock_table();
	slot = table_find(addr);
	if (slot)
		slot->protected = 1;
	unlock_table();
}

/*
 * Calls @fn on every large range overlapping [start, end), with
 * table_lock held: perturb-lock.c's one way into the table.
 */
void large_each_overlapping(uintptr_t start, uintptr_t end, void (*fn)(struct large *l))
{
	struct large *l;
	size_t i;

	if (!__atomic_load_n(&have_large, __ATOMIC_ACQUIRE))
		return;
	lock_table();
	for (i = 0; i < table_slots; i++) {
		l = &table[i];
		if (l->addr > SLOT_GONE && l->addr < end && l->addr + l->cap > start)
			fn(l);
	}
	unlock_table();
}

/*
 * The reference-page object, made on first use: kmod where /dev/refpage
 * exists, else memfd, whatever MMKIT_REFPAGE_BACKEND says: uffd cannot
 * serve the kernel's own accesses (read(2) into a fresh buffer fails with
 * EFAULT) and its untouched pages read as zeros once moved, as every piece
 * here is.  Threads making their first large block at once each make one;
 * the first stored is kept, the others destroyed.  A failure is not
 * remembered: one passing EMFILE must not send every later large block to
 * glibc, and trying again costs a failed system call or two beside the
 * memset of 128 KiB or more that glibc's block then costs.
 */
struct mmkit_refpage *get_refpage(void)
{
	unsigned int backend = MMKIT_REFPAGE_BACKEND_KMOD;
	struct mmkit_refpage *rp = __atomic_load_n(&refpage, __ATOMIC_ACQUIRE), *none = NULL;

	if (rp)
		return rp;
	in_library = 1;
	if (mmkit_refpage_backend_available(backend, NULL, 0))
		backend = MMKIT_REFPAGE_BACKEND_MEMFD;
	if (mmkit_refpage_create(&rp, &fresh_fill, 1, backend)) {
		rp = NULL;
	} else if (!__atomic_compare_exchange_n(&refpage, &none, rp, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
		mmkit_refpage_destroy(rp);
		rp = none;
	}
	in_library = 0;
	return rp;
}

/*
 * Fills [start, start + len) with pattern pieces of @rp.  The range is
 * ours (a reservation nobody else knows of yet), so MREMAP_FIXED replaces
 * it.
 */
static int fill_with_pieces(struct mmkit_refpage *rp, uintptr_t start, size_t len)
{
	size_t off, n;
	void *piece;
	int ret = 0;

	in_library = 1;
	for (off = 0; off < len && !ret; off += n) {
		n = len - off < PIECE ? len - off : PIECE;
		ret = mmkit_refpage_map(rp, n, PROT_READ | PROT_WRITE, &piece);
		if (ret)
			break;
		if (mremap(piece, n, n, MREMAP_MAYMOVE | MREMAP_FIXED,
			   (void *)(start + off)) == MAP_FAILED) {
			munmap(piece, n);
			ret = -1;
		}
	}
	in_library = 0;
	return ret;
}

/*
 * [*start, *start + cap) aligned to @align, reading as the fill, or zero
 * when @zero (calloc: page aligned is enough); not under table_lock.
 * Zero memory or one page-aligned piece is one mmap; anything else is
 * fitted into a reservation.
 */
static int map_range(size_t cap, size_t align, int zero, uintptr_t *start)
{
	size_t page = page_size(), slack = align > page ? align - page : 0;
	struct mmkit_refpage *rp;
	uintptr_t base;
	void *mem;
	int ret;

	if (zero) {
		mem = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		*start = (uintptr_t)mem;
		return mem == MAP_FAILED ? -1 : 0;
	}
	rp = get_refpage();
	if (!rp)
		return -1;
	if (!slack && cap <= PIECE) {
		in_library = 1;
		ret = mmkit_refpage_map(rp, cap, PROT_READ | PROT_WRITE, &mem);
		in_library = 0;
		*start = (uintptr_t)mem;
		return ret;
	}
	if (cap + slack < cap)
		return -1;
	mem = mmap(NULL, cap + slack, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		   -1, 0);
	if (mem == MAP_FAILED)
		return -1;
	base = (uintptr_t)mem;
	*start = (base + align - 1) & ~(uintptr_t)(align - 1);
	if (*start > base)
		munmap(mem, *start - base);
	if (base + slack > *start)
		munmap((void *)(*start + cap), base + slack - *start);
	if (fill_with_pieces(rp, *start, cap)) {
		munmap((void *)*start, cap);
		return -1;
	}
	return 0;
}

/*
 * Maps a large range of @size bytes aligned to @align (a power of two):
 * reading as the fill, or zero when @zero.  NULL when it cannot, errno
 * untouched: the caller decides.  The range is mapped before table_lock
 * is taken (see there), then entered in the table: nobody else can know
 * its address before.
 */
static void *large_map(size_t size, size_t align, int zero)
{
	size_t page = page_size(), cap = (size + page - 1) & ~(page - 1);
	struct large l;
	uintptr_t start;
	int ret;

	if (size > PTRDIFF_MAX)
		return NULL;
	if (map_range(cap, align, zero, &start)) {
		shim_count(&large_from_glibc, 1);
		return NULL;
	}
	l.addr = start;
	l.cap = cap;
	l.anon = zero;
	lock_table();
	ret = table_insert(&l);
	unlock_table();
	if (ret) {
		munmap((void *)start, cap);
		shim_count(&large_from_glibc, 1);
		return NULL;
	}
	shim_count(&large_blocks, 1);
	shim_count(&large_bytes, size);
	return (void *)start;
}

static void large_unmap(const struct large *l)
{
	munmap((void *)l->addr, l->cap);
}

static void *set_enomem(void)
{
	errno = ENOMEM;
	return NULL;
}

static size_t round_align(size_t align)
{
	size_t a = MIN_ALIGN;

	while (a < align && a)
		a <<= 1;
	return a;
}

/*
 * Whether a block of @size bytes is served from reference pages: large,
 * and no mlockall(MCL_FUTURE) in force, under which it must be memory the
 * kernel can lock (glibc's, filled).
 */
static int refpage_block(size_t size)
{
	return size >= LARGE_MIN && !__atomic_load_n(&locking_future, __ATOMIC_RELAXED);
}

static void *glibc_alloc(size_t align, size_t size)
{
	return align <= MIN_ALIGN ? glibc.malloc(size) : glibc.memalign(align, size);
}

/*
 * memalign() for every entry point: @align a power of two, at least
 * MIN_ALIGN.  A large range that cannot be had (no memfd in a sandbox, no
 * VMA left) comes from glibc, filled: slow, but the same semantics.
 */
static void *aligned(size_t align, size_t size)
{
	void *p;

	if (!perturb_on())
		return glibc_alloc(align, size);
	p = refpage_block(size) ? large_map(size, align, 0) : NULL;
	return p ? p : fill_small(glibc_alloc(align, size));
}

SHIM_EXPORT void *malloc(size_t size)
{
	return aligned(MIN_ALIGN, size);
}

SHIM_EXPORT void free(void *p)
{
	struct large l;
	size_t usable;

	if (!perturb_on()) {
		glibc.free(p);
	} else if (find_large(p, &l, 1)) {
		large_unmap(&l);
	} else if (p) {
		usable = glibc_chunk_usable(p);
		if (usable > FREE_LIST_BYTES)
			memset((unsigned char *)p + FREE_LIST_BYTES, freed_fill,
			       usable - FREE_LIST_BYTES);
		glibc.free(p);
	}
}

SHIM_EXPORT void *calloc(size_t n, size_t size)
{
	size_t total;
	void *p;

	if (__builtin_mul_overflow(n, size, &total))
		return set_enomem();
	if (!perturb_on() || total < LARGE_MIN)
		return glibc.calloc(n, size);
	p = large_map(total, MIN_ALIGN, 1);
	return p ? p : glibc.calloc(n, size);
}

/*
 * Moves large range @l into the new range @to of more pages: whole pieces
 * move with mremap(2), so pages nobody touched stay untouched; the rest of
 * the old usable size (all its pages) is copied; past it @to reads as the
 * fill.
 */
static void large_move(const struct large *l, unsigned char *to)
{
	size_t off = 0;

	for (; off + PIECE <= l->cap; off += PIECE)
		if (mremap((void *)(l->addr + off), PIECE, PIECE, MREMAP_MAYMOVE | MREMAP_FIXED,
			   to + off) == MAP_FAILED)
			break;
	memcpy(to + off, (unsigned char *)l->addr + off, l->cap - off);
	munmap((void *)(l->addr + off), l->cap - off);
}

/*
 * realloc() of large range @l to @size bytes (not 0).  Whatever may fail
 * comes first, while @l is still whole and in the table.
 */
static void *large_realloc(const struct large *l, size_t size)
{
	size_t page = page_size(), cap = (size + page - 1) & ~(page - 1);
	struct large *slot;
	void *q;

	if (size < LARGE_MIN || size > l->cap) {
		q = refpage_block(size) ? large_map(size, MIN_ALIGN, 0) : NULL;
		if (q) {
			forget_large(l);
			large_move(l, q);
			/* Its pieces' protections moved with them. */
			if (l->protected)
				large_protected((uintptr_t)q);
			return q;
		}
		q = fill_small(glibc.malloc(size));
		if (!q)
			return set_enomem();
		forget_large(l);
		memcpy(q, (void *)l->addr, size < l->cap ? size : l->cap);
		large_unmap(l);
		return q;
	}
	/*
	 * In place: the bytes up to the old usable size are the program's,
	 * whole pages past the new end go.
	 */
	lock_table();
	slot = table_find(l->addr);
	if (slot)
		slot->cap = cap;
	unlock_table();
	if (cap < l->cap)
		munmap((void *)(l->addr + cap), l->cap - cap);
	return (void *)l->addr;
}

SHIM_EXPORT void *realloc(void *p, size_t size)
{
	struct large l;
	size_t old, new;
	void *q;

	if (!perturb_on())
		return glibc.realloc(p, size);
	if (!p)
		return malloc(size);
	/* glibc frees on realloc(p, 0) and returns NULL. */
	if (!size) {
		free(p);
		return NULL;
	}
	if (find_large(p, &l, 0))
		return large_realloc(&l, size);
	/* A chunk that does not look like glibc's is glibc's to judge, unfilled. */
	old = glibc_chunk_usable(p);
	if (!old)
		return glibc.realloc(p, size);
	if (size < LARGE_MIN) {
		/* What glibc adds past the old usable end is fresh. */
		q = glibc.realloc(p, size);
		new = q ? glibc.usable_size(q) : 0;
		if (new > old)
			memset((unsigned char *)q + old, fresh_fill, new - old);
		return q;
	}
	/* Small to large: the old usable bytes move, the rest is fresh. */
	q = refpage_block(size) ? large_map(size, MIN_ALIGN, 0) : NULL;
	if (!q)
		q = fill_small(glibc.malloc(size));
	if (!q)
		return set_enomem();
	memcpy(q, p, old < size ? old : size);
	free(p);
	return q;
}

SHIM_EXPORT void *memalign(size_t align, size_t size)
{
	/* glibc rounds an alignment that is not a power of two up to one. */
	size_t a = round_align(align);

	return a ? aligned(a, size) : set_enomem();
}

SHIM_EXPORT void *aligned_alloc(size_t align, size_t size)
{
	return memalign(align, size);
}

SHIM_EXPORT int posix_memalign(void **out, size_t align, size_t size)
{
	int saved = errno;
	void *p;

	if (!align || (align & (align - 1)) || align % sizeof(void *))
		return EINVAL;
	p = aligned(align < MIN_ALIGN ? MIN_ALIGN : align, size);
	if (!p) {
		errno = saved;
		return ENOMEM;
	}
	*out = p;
	return 0;
}

SHIM_EXPORT void *valloc(size_t size)
{
	return aligned(page_size(), size);
}

SHIM_EXPORT void *pvalloc(size_t size)
{
	size_t page = page_size(), rounded = (size + page - 1) & ~(page - 1);

	if (rounded < size)
		return set_enomem();
	return aligned(page, rounded ? rounded : page);
}

SHIM_EXPORT size_t malloc_usable_size(void *p)
{
	struct large l;

	if (!p)
		return 0;
	if (perturb_on() && find_large(p, &l, 0))
		return l.cap;
	return glibc.usable_size(p);
}
