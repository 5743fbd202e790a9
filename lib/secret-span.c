// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Secrets above MMKIT_SECRET_POOL_MAX (or asked for with
 * MMKIT_SECRET_PAGES) get a span: their own pages between two guard pages,
 * the secret ending at the upper guard page (rounded to 16 bytes, or
 * exactly with MMKIT_SECRET_END_AT_GUARD), canary bytes in the slack
 * before and after.  Live spans are found by their pointer in a hash
 * table; freed ones are cached for reuse, oldest first.  A page secret's
 * (MMKIT_SECRET_PAGES) is PROT_NONE while cached, so that a stale pointer
 * faults; other spans stay accessible (two mprotect(2) calls made a 4 KiB
 * secret 17 times slower) and are checked all zero when handed out again,
 * as pooled slots are: a stale write aborts then.  S.lock is held
 * throughout.
 *
 * Freeing costs what the secret used, not its size: only pages that hold
 * data are wiped (span_pages_used), and a span of memfd_secret pages that is
 * unmapped is not wiped at all, the kernel zeroing each of its pages as it
 * frees it (secretmem's free_folio; every page mmkit maps there is its
 * own memfd's, whose last reference the mapping holds).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "secret.h"

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

struct span *secret__span_find(const void *p)
{
	return S.table_cap ? S.table[table_slot(p)] : NULL;
}

static int table_insert(struct span *sp)
{
	if (2 * (S.table_count + 1) > S.table_cap) {
		size_t old_cap = S.table_cap, i;
		struct span **old = S.table;
		size_t cap = old_cap ? 2 * old_cap : 64;
		struct span **t = mmkit__calloc(cap, sizeof(*t));

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

/* 1 if the page at @at is all zero; memcmp(3) stops at the first byte set. */
static int page_zero(const char *at)
{
	size_t off;

	for (off = 0; off < S.page; off += sizeof(secret__zeros))
		if (memcmp(at + off, secret__zeros, sizeof(secret__zeros)))
			return 0;
	return 1;
}

/*
 * mincore(2) tells which of @sp's pages are in use, unless the span is a
 * memfd_secret file this thread no longer owns (setuid(2) since it was
 * mapped): then it answers "resident" for every page.
 */
static int span_residency_known(const struct span *sp)
{
	/* A one-page span does not ask (span_pages_used): no system call for it. */
	return sp->pages == 1 || !sp->kernel_wipes || sp->fsuid == sys_fsuid();
}

/*
 * Calls @fn on each page of @sp's that may hold data: those resident
 * (mincore(2)), or all if mincore fails.  A page never touched has nothing
 * to wipe or check, and touching it would fault it in (with memfd_secret,
 * a TLB flush of every CPU each): wiping a whole 1 GiB secret with one
 * byte written took 7 to 10 s and 1 GiB of memory.  A one-page span is
 * resident without asking: its secret or its canary was written there,
 * and the call would double the cost of freeing it.
 */
static void span_pages_used(const struct span *sp, void (*fn)(const struct span *, char *))
{
	char *data = sp->base + S.page;
	unsigned char vec[4096];
	size_t done, n, i;

	if (sp->pages == 1) {
		fn(sp, data);
		return;
	}
	for (done = 0; done < sp->pages; done += n) {
		char *at = data + done * S.page;
		int known;

		n = sp->pages - done < sizeof(vec) ? sp->pages - done : sizeof(vec);
		known = !sys_mincore(at, n * S.page, vec);
		for (i = 0; i < n; i++)
			if (!known || (vec[i] & 1))
				fn(sp, at + i * S.page);
	}
}

/*
 * Wipes a page in use.  A memfd_secret page is wiped without reading it
 * first: resident, it is the span's own.  A fallback page all zero is
 * left unwritten: it may be the shared zero page, only read; not worth
 * the read for a one-page span, at most one page allocated.
 */
static void page_wipe(const struct span *sp, char *at)
{
	if (sp->kernel_wipes || sp->pages == 1 || !page_zero(at))
		explicit_bzero(at, S.page);
}

/* Aborts if a page in use of a span cached accessible was written since its free. */
static void page_check(const struct span *sp, char *at)
{
	if (!page_zero(at))
		secret__stale(sp->base + S.page);
}

/*
 * The oldest cached span of @pages pages, ready for use, or NULL; if it
 * cannot be made accessible again, it stays cached.
 */
static int span_cache_take(size_t pages, struct span **out)
{
	struct span **link;
	int ret;

	*out = NULL;
	for (link = &S.span_cache; *link; link = &(*link)->next)
		if ((*link)->pages == pages) {
			struct span *sp = *link;

			if (sp->guarded) {
				ret = sys_mprotect(sp->base + S.page, pages * S.page,
						   PROT_READ | PROT_WRITE);
				if (ret)
					return ret;
			} else {
				span_pages_used(sp, page_check);
			}
			*link = sp->next;
			S.nspan_cache--;
			S.span_cache_pages -= pages;
			*out = sp;
			return 0;
		}
	return 0;
}

/* Freed and wiped (and PROT_NONE if guarded): the newest, at the end. */
static void span_cache_add(struct span *sp)
{
	struct span **link;

	for (link = &S.span_cache; *link; link = &(*link)->next)
		;
	sp->next = NULL;
	*link = sp;
	S.nspan_cache++;
	S.span_cache_pages += sp->pages;
}

static int span_new(size_t pages, secret_reclaim_fn *reclaim, struct span **out)
{
	struct span *sp = mmkit__calloc(1, sizeof(*sp));
	size_t len = pages * S.page;
	void *base;
	int ret, lost;

	if (!sp)
		return -ENOMEM;
	ret = sys_mmap(NULL, (pages + 2) * S.page, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0, &base);
	if (ret) {
		mmkit__error_detail(ret, "reserving %zu KiB of address space for the secret and its guard pages: %s",
				    (pages + 2) * (S.page / 1024),
				    ret == -ENOMEM ? "no free range that large, or RLIMIT_AS or vm.max_map_count reached" :
				    strerrordesc_np(-ret));
		free(sp);
		return ret;
	}
	sp->base = base;
	sp->pages = pages;
	ret = secret__map(sp->base + S.page, &len, len, reclaim, &lost);
	if (ret) {
		sys_munmap(sp->base, (pages + 2) * S.page);
		free(sp);
		return ret;
	}
	sp->kernel_wipes = S.backend == BACKEND_SECRETMEM;
	sp->fsuid = sys_fsuid();
	*out = sp;
	return 0;
}

int secret__span_alloc(void **p, size_t size, int end_at_guard, int guarded,
		       secret_reclaim_fn *reclaim)
{
	/* The secret and the canary after it, up to the upper guard page. */
	size_t len = end_at_guard ? size : (size + SLOT_ALIGN - 1) & ~(size_t)(SLOT_ALIGN - 1);
	/* Ending at the guard leaves no canary after: 16 bytes before catch an underflow. */
	size_t pages = (len + (end_at_guard ? SLOT_ALIGN : 0) + S.page - 1) / S.page;
	struct span *sp;
	char *data;
	int ret;

	ret = span_cache_take(pages, &sp);
	if (ret)
		return ret;
	if (!sp) {
		ret = secret__backable(pages * S.page);
		if (!ret)
			ret = span_new(pages, reclaim, &sp);
		if (ret)
			return ret;
	}
	data = sp->base + S.page;
	sp->guarded = guarded;
	sp->user = data + pages * S.page - len;
	sp->size = size;
	sp->access = MMKIT_SECRET_READWRITE;
	ret = table_insert(sp);
	if (ret) {
		span_destroy(sp);
		return ret;
	}
	secret__canary_fill((unsigned char *)data, (size_t)(sp->user - data), sp->user);
	secret__canary_fill((unsigned char *)sp->user + size, len - size, sp->user + size);
	*p = sp->user;
	return 0;
}

void secret__span_free(struct span *sp)
{
	char *data = sp->base + S.page;
	char *end = data + sp->pages * S.page;
	size_t head = (size_t)(sp->user - data);

	/* The span record is ordinary memory: its numbers are checked before use. */
	if (sp->user < data || sp->user >= end || sp->size > (size_t)(end - sp->user))
		secret__corrupt(sp->base, "a span's secret outside its pages");
	table_remove(sp);
	if (sp->dead) {
		span_destroy(sp);
		return;
	}
	if (sp->access != MMKIT_SECRET_READWRITE &&
	    sys_mprotect(data, sp->pages * S.page, PROT_READ | PROT_WRITE))
		secret__die(sp->user, "cannot make the secret writable again to wipe it");
	if (!secret__canary_ok((unsigned char *)data, head, sp->user))
		secret__die(sp->user, "damaged canary: something wrote before the start of this secret");
	if (!secret__canary_ok((unsigned char *)sp->user + sp->size, (size_t)(end - sp->user) - sp->size,
		       sp->user + sp->size))
		secret__die(sp->user, "damaged canary: something wrote past the end of this secret");
	S.allocs_live--;
	S.bytes_live -= sp->size;
	/*
	 * A memfd_secret span whose pages mincore cannot tell is unmapped,
	 * not cached: probing or wiping every page would fault each in.
	 */
	if (S.nspan_cache < SPAN_CACHE_MAX && sp->pages <= SPAN_CACHE_PAGES &&
	    span_residency_known(sp)) {
		span_pages_used(sp, page_wipe);
		/*
		 * A page secret's pages fault until reused; should mprotect
		 * fail (ENOMEM), they stay wiped and accessible, checked at
		 * reuse: a free cannot fail.
		 */
		if (sp->guarded && sys_mprotect(data, sp->pages * S.page, PROT_NONE))
			sp->guarded = 0;
		span_cache_add(sp);
		return;
	} else if (!sp->kernel_wipes) {
		/* Unmapped anonymous pages go back to the kernel as they are. */
		span_pages_used(sp, page_wipe);
	}
	span_destroy(sp);
}

unsigned int secret__span_trim(void)
{
	unsigned int n = 0;
	struct span *sp;

	while ((sp = S.span_cache)) {
		S.span_cache = sp->next;
		S.nspan_cache--;
		S.span_cache_pages -= sp->pages;
		span_destroy(sp);
		n++;
	}
	return n;
}

int secret__span_cached(const void *p)
{
	const struct span *sp;

	for (sp = S.span_cache; sp; sp = sp->next)
		if (sp->user == p)
			return 1;
	return 0;
}


void secret__spans_forget(void)
{
	struct span *sp;
	size_t i;

	for (i = 0; i < S.table_cap; i++) {
		sp = S.table[i];
		if (sp && !sp->dead) {
			secret__unmap(sp->base + S.page, sp->pages * S.page);
			sp->dead = 1;
		}
	}
	while ((sp = S.span_cache)) {
		S.span_cache = sp->next;
		sys_munmap(sp->base, (sp->pages + 2) * S.page);
		free(sp);
	}
	S.nspan_cache = 0;
	S.span_cache_pages = 0;
}
