// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The pool of small secrets (secret.c says why):
 *
 *   arena:  [guard][chunk 0 data][guard][chunk 1 data] ... [guard]
 *
 * An arena is one PROT_NONE reservation (not charged to anything), aligned
 * to its size so that a pointer finds its arena by a hash of its high bits
 * and its chunk by a shift, with no lock and no search; a chunk is mapped
 * over its block when first needed and then kept: an emptied chunk stays
 * with its size class or goes to a cache of up to CACHE_KEEP_BYTES, so
 * steady allocation, and a second burst like the first, never maps, faults
 * or unmaps; the cache is unmapped when a mapping would exceed the lock
 * limit (secret__pool_trim).  Chunks are carved into slots of one size class;
 * each slot holds the caller's bytes followed by at least CANARY_MIN canary
 * bytes up to the end of the slot.  A bitmap per chunk, with a summary
 * bitmap over its words, finds a free slot in a few find-first-set steps
 * however many are live.  All bookkeeping (slot sizes, bitmaps) lives in
 * ordinary memory: only secrets and canaries take locked pages.  S.lock is
 * held throughout, except in secret__chunk_of() and secret__slot_check(),
 * which the threads' caches call on slots they hold.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "secret.h"

static const uint16_t class_size[NCLASSES] = {
	16, 32, 48, 64, 80, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768,
	1024, 1280, 1536, 2048,
};

/*
 * Slots per chunk of each class, in one page [0] and in a whole chunk [1]:
 * the checks compare, never divide.
 */
static unsigned int class_nslots[2][NCLASSES];

void secret__pool_init(void)
{
	unsigned int k, i;

	/* 16 pages or 64 KiB: slot numbers stay below 2^16 for pages up to 64 KiB. */
	S.stride = S.page * 16 > 65536 ? S.page * 16 : 65536;
	S.stride_shift = (unsigned int)__builtin_ctzl(S.stride);
	S.arena_shift = S.stride_shift + (unsigned int)__builtin_ctz(BLOCKS_PER_ARENA);
	S.chunk_len = S.stride - S.page;
	for (i = 0, k = 0; i < CLASS_SLOTS; i++) {
		while (class_size[k] < i * SLOT_ALIGN)
			k++;
		S.class_of[i] = (unsigned char)k;
	}
	/* A thread holds about 16 KiB of big slots at most, so idle caches pin few chunks. */
	for (k = 0; k < NCLASSES; k++) {
		S.cls[k].cache_max = class_size[k] <= 512 ? CACHE_MAX : 16384u / class_size[k];
		S.cls[k].quarantine = S.cls[k].cache_max < QUARANTINE ? S.cls[k].cache_max : QUARANTINE;
		class_nslots[0][k] = (unsigned int)(S.page / class_size[k]);
		class_nslots[1][k] = (unsigned int)(S.chunk_len / class_size[k]);
	}
}

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

static void cache_add(struct chunk *c)
{
	c->state = CHUNK_CACHED;
	list_add(&S.cache, c);
	S.cached_bytes += c->len;
}

static void cache_del(struct chunk *c)
{
	list_del(&S.cache, c);
	S.cached_bytes -= c->len;
}

/*
 * Near the lock limit (no room for two whole chunks) a chunk is one page,
 * so that the size classes and the spans share what is left: a whole
 * chunk that fits but leaves too little would starve the next size class
 * (under a 64 KiB limit, OpenSSL's random generator needs three).  The
 * rest of its block stays a guard reservation, not locked.
 */
int secret__chunk_map(struct chunk **out, secret_reclaim_fn *reclaim)
{
	size_t len = secret__lock_roomy(S.chunk_len) ? S.chunk_len : S.page;
	struct chunk *c;
	int ret, lost;

	ret = secret__block_find(&c);
	if (ret)
		return ret;
	ret = secret__map(c->data, &len, S.page, reclaim, &lost);
	if (ret) {
		if (lost)
			c->state = CHUNK_LOST;
		return ret;
	}
	c->len = len;
	cache_add(c);
	*out = c;
	return 0;
}

static int slot_live(uint16_t size)
{
	return size && size != SLOT_FREED;
}

static unsigned int map_words(unsigned int nslots)
{
	return (nslots + 63) / 64;
}

/* Takes a chunk from the cache (mapping one if needed) for size class @k. */
static int chunk_assign(unsigned int k, secret_reclaim_fn *reclaim, struct chunk **out)
{
	unsigned int nslots, words, sums, w;
	struct chunk *c = S.cache;
	size_t sizes_len;
	char *meta, *at;
	int ret;

	if (!c) {
		ret = secret__chunk_map(&c, reclaim);
		if (ret)
			return ret;
	}
	nslots = class_nslots[c->len == S.chunk_len][k];
	words = map_words(nslots);
	sums = map_words(words);
	/*
	 * Room for a whole chunk's sizes, whatever its length (chunk_check_shape()
	 * says why), in whole cache lines: threads writing theirs do not share one.
	 */
	sizes_len = ((size_t)class_nslots[1][k] * sizeof(uint16_t) + 63) & ~(size_t)63;
	/* Without it the chunk stays in the cache, for the next try. */
	meta = mmkit__calloc(1, 64 + sizes_len + (2 * words + sums) * sizeof(uint64_t));
	if (!meta)
		return -ENOMEM;
	cache_del(c);
	c->meta = meta;
	at = (char *)(((uintptr_t)meta + 63) & ~(uintptr_t)63);
	c->sizes = (uint16_t *)at;
	c->free_map = (uint64_t *)(at + sizes_len);
	c->free_sum = c->free_map + words;
	c->held_map = c->free_sum + sums;
	c->nheld = 0;
	for (w = 0; w < words; w++)
		c->free_map[w] = w + 1 < words || !(nslots % 64) ? ~0ULL : (1ULL << (nslots % 64)) - 1;
	for (w = 0; w < sums; w++)
		c->free_sum[w] = w + 1 < sums || !(words % 64) ? ~0ULL : (1ULL << (words % 64)) - 1;
	c->nfree = c->nslots = nslots;
	c->slot = class_size[k];
	/* Exact for offsets below 2^32 / slot, and chunks are far smaller. */
	c->slot_inv = (uint32_t)((((uint64_t)1 << 32) + c->slot - 1) / c->slot);
	c->cls = k;
	c->owner = NULL;
	c->state = CHUNK_ACTIVE;
	list_add(&S.cls[k].avail, c);
	S.cls[k].empty++;
	*out = c;
	return 0;
}

static void chunk_meta_free(struct chunk *c)
{
	free(c->meta);
	c->meta = NULL;
	c->sizes = NULL;
	c->free_map = c->free_sum = c->held_map = NULL;
}

/* An emptied chunk leaves its class: kept in the cache, or unmapped. */
static void chunk_unassign(struct chunk *c)
{
	list_del(&S.cls[c->cls].avail, c);
	S.cls[c->cls].empty--;
	c->owner = NULL;
	chunk_meta_free(c);
	if (S.cached_bytes < S.keep || S.cached_bytes < CACHE_KEEP_BYTES) {
		cache_add(c);
		return;
	}
	c->state = secret__release(c->data, c->len) ? CHUNK_LOST : CHUNK_UNUSED;
}

/*
 * The slot sizes and the bitmaps live in ordinary memory (only secrets
 * take locked pages), where a stray write of the application can reach
 * them, and so do the counts that index them: every number read back is
 * checked before it is used as an index or a length.  Without the lock (a
 * thread's cache freeing) only what bounds a slot index, as cheaply as
 * before chunks had two lengths: below a whole chunk's count, sizes[] has
 * room for it (it always has for a whole chunk) and the slot lies in the
 * chunk's block (past a one-page chunk, in its guard reservation, which
 * faults at the canary check).
 */
static void chunk_check_shape(const struct chunk *c)
{
	if (c->cls >= NCLASSES || c->slot != class_size[c->cls] ||
	    c->nslots > class_nslots[1][c->cls])
		secret__corrupt(c->data, "slot counts out of range");
}

/* With the lock held: the count exactly that of the chunk's length, and the free count. */
static void chunk_check(const struct chunk *c)
{
	chunk_check_shape(c);
	if ((c->len != S.chunk_len && c->len != S.page) ||
	    c->nslots != class_nslots[c->len == S.chunk_len][c->cls] || c->nfree > c->nslots)
		secret__corrupt(c->data, "slot counts out of range");
}

/* Takes slot @idx off the free bitmap. */
static void slot_take(struct chunk *c, unsigned int idx)
{
	unsigned int w = idx / 64;

	c->free_map[w] &= ~(1ULL << (idx % 64));
	if (!c->free_map[w])
		c->free_sum[w / 64] &= ~(1ULL << (w % 64));
	if (c->nfree-- == c->nslots)
		S.cls[c->cls].empty--;
	if (!c->nfree)
		list_del(&S.cls[c->cls].avail, c);
}

/* The first free_map word with a free slot; the chunk has one. */
static unsigned int first_free_word(const struct chunk *c)
{
	unsigned int words = map_words(c->nslots), s, w;

	for (s = 0; s < map_words(words); s++)
		if (c->free_sum[s]) {
			w = s * 64 + (unsigned int)__builtin_ctzll(c->free_sum[s]);
			if (w >= words || !c->free_map[w])
				secret__corrupt(c->data, "the free-slot summary names a word out of range or empty");
			return w;
		}
	secret__corrupt(c->data, "a chunk with free slots has none in its bitmap");
}

static void held_release(unsigned int k);
static void held_trim(unsigned int k);

/* A chunk of class @k with a free slot, a new one if need be, else a held slot's. */
static int chunk_avail(unsigned int k, secret_reclaim_fn *reclaim, struct chunk **out)
{
	struct chunk *c = S.cls[k].avail;
	int ret;

	if (!c) {
		held_trim(k);
		c = S.cls[k].avail;
	}
	if (!c) {
		ret = chunk_assign(k, reclaim, &c);
		if (ret) {
			held_release(k);
			c = S.cls[k].avail;
			if (!c)
				return ret;
		}
	}
	chunk_check(c);
	*out = c;
	return 0;
}

int secret__pool_alloc(void **p, size_t size, secret_reclaim_fn *reclaim)
{
	struct chunk *c;
	unsigned int w, idx;
	char *slot;
	int ret;

	ret = chunk_avail(secret__class_of(size), reclaim, &c);
	if (ret)
		return ret;
	w = first_free_word(c);
	idx = w * 64 + (unsigned int)__builtin_ctzll(c->free_map[w]);
	if (idx >= c->nslots || slot_live(c->sizes[idx]))
		secret__corrupt(c->data, "a free slot out of range or in use");
	slot_take(c, idx);
	c->sizes[idx] = (uint16_t)size;
	slot = c->data + (size_t)idx * c->slot;
	secret__slot_unused(slot, c->slot);
	secret__canary_fill((unsigned char *)slot + size, c->slot - size, slot);
	*p = slot;
	return 0;
}

/*
 * The chunk of class @k a cache owning through @mine refills from: its own
 * while it has a free slot, else the first no other cache owns, else a new
 * one (from the cache of empty chunks only, without @may_map); when none
 * can be had, any with a free slot (shared, not owned), after the held
 * slots go back if need be.
 */
static int chunk_owned(unsigned int k, struct chunk **mine, secret_reclaim_fn *reclaim,
		       int may_map, struct chunk **out)
{
	struct chunk *c = *mine;
	int ret;

	if (c && c->owner == mine && c->state == CHUNK_ACTIVE && c->cls == k && c->nfree) {
		chunk_check(c);
		*out = c;
		return 0;
	}
	if (c && c->owner == mine)
		c->owner = NULL;
	*mine = NULL;
	for (c = S.cls[k].avail; c && c->owner; c = c->next)
		;
	if (!c) {
		held_trim(k);
		for (c = S.cls[k].avail; c && c->owner; c = c->next)
			;
	}
	if (!c) {
		ret = may_map || S.cache ? chunk_assign(k, reclaim, &c) : -EAGAIN;
		if (ret && may_map && !S.cls[k].avail)
			held_release(k);
		if (ret && !S.cls[k].avail)
			return ret;
		if (ret) {
			chunk_check(S.cls[k].avail);
			*out = S.cls[k].avail;
			return 0;
		}
	}
	chunk_check(c);
	c->owner = mine;
	*mine = c;
	*out = c;
	return 0;
}

void secret__pool_disown(struct chunk **mine)
{
	unsigned int k;

	for (k = 0; k < NCLASSES; k++) {
		if (mine[k] && mine[k]->owner == &mine[k])
			mine[k]->owner = NULL;
		mine[k] = NULL;
	}
}

/*
 * The slots of one half word of the bitmap at most, so that the slots one
 * thread holds and the sizes it writes are not interleaved with another's.
 */
int secret__pool_take(unsigned int k, struct chunk **mine, struct cached_slot *out,
		      unsigned int room, unsigned int *n, secret_reclaim_fn *reclaim, int may_map)
{
	struct chunk *c;
	unsigned int w, idx, got = 0;
	uint64_t bits;
	int ret;

	ret = chunk_owned(k, mine, reclaim, may_map, &c);
	if (ret)
		return ret;
	w = first_free_word(c);
	bits = c->free_map[w];
	bits &= __builtin_ctzll(bits) < 32 ? 0xffffffffULL : ~0xffffffffULL;
	while (bits && got < room) {
		idx = w * 64 + (unsigned int)__builtin_ctzll(bits);
		bits &= bits - 1;
		if (idx >= c->nslots || slot_live(c->sizes[idx]))
			secret__corrupt(c->data, "a free slot out of range or in use");
		slot_take(c, idx);
		out[got].chunk = c;
		out[got].idx = idx;
		out[got].freed = 0;
		got++;
	}
	*n = got;
	return 0;
}

unsigned int secret__slot_check(const struct chunk *c, const char *p, size_t *size)
{
	size_t off = (size_t)(p - c->data);
	unsigned int idx;

	/* Without the lock (a thread's cache): only what is fixed while the chunk is active. */
	chunk_check_shape(c);
	/* Bounds the offset for the division below; the slot count bounds the chunk. */
	if (p < c->data || off >= S.chunk_len)
		secret__die(p, "invalid pointer: not the start of a secret");
	idx = (unsigned int)((off * c->slot_inv) >> 32);
	if ((size_t)idx * c->slot != off || idx >= c->nslots)
		secret__die(p, "invalid pointer: not the start of a secret");
	*size = c->sizes[idx];
	if (!*size)
		secret__die(p, "invalid pointer: no secret was allocated there");
	if (*size == SLOT_FREED)
		secret__die(p, "double free: this secret was already freed");
	if (*size > c->slot - CANARY_MIN)
		secret__corrupt(c->data, "a slot size larger than its slot");
	return idx;
}

size_t secret__pool_size(const struct chunk *c, const char *p)
{
	size_t off = (size_t)(p - c->data);
	unsigned int idx;

	if ((c->state != CHUNK_ACTIVE && c->state != CHUNK_DEAD) || p < c->data || off >= S.chunk_len)
		return 0;
	/* Only what is fixed while the chunk is in use: called without the lock too. */
	chunk_check_shape(c);
	idx = (unsigned int)((off * c->slot_inv) >> 32);
	if ((size_t)idx * c->slot != off || idx >= c->nslots || !slot_live(c->sizes[idx]))
		return 0;
	return c->sizes[idx];
}

/* Aborts with @what unless slot @idx of @c is neither live, free nor held. */
static void slot_check_unused(struct chunk *c, unsigned int idx, const char *what)
{
	unsigned int w = idx / 64;

	chunk_check(c);
	if (idx >= c->nslots || slot_live(c->sizes[idx]) || (c->free_map[w] >> (idx % 64) & 1) ||
	    (c->held_map[w] >> (idx % 64) & 1) || c->nfree + c->nheld >= c->nslots)
		secret__corrupt(c->data, what);
}

/* Puts slot @idx, neither live nor cached, back on the free bitmap. */
static void slot_put(struct chunk *c, unsigned int idx)
{
	struct class *cl = &S.cls[c->cls];
	unsigned int w = idx / 64;

	slot_check_unused(c, idx, "a slot given back that is free, held or live");
	c->free_map[w] |= 1ULL << (idx % 64);
	c->free_sum[w / 64] |= 1ULL << (w % 64);
	if (!c->nfree++)
		list_add(&cl->avail, c);
	if (c->nfree < c->nslots)
		return;
	/* One empty chunk per class stays, so alloc/free ping-pong never remaps. */
	if (cl->empty++)
		chunk_unassign(c);
}

void secret__pool_give(const struct cached_slot *in, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		slot_put(in[i].chunk, in[i].idx);
}

/*
 * A freed slot is not handed out again while others can be, whatever its
 * thread does: a thread's exit used to give its cache's slots back to
 * their chunks at once, where the next allocation of another thread took
 * the one just freed, and a stale pointer read that thread's secret.
 * Every exited thread's quarantine is held, in its chunks, not only the
 * last one's: a slot is held until its class has no free slot and no
 * chunk can be had (held_release()), as a live thread's quarantine is.
 */
void secret__pool_hold(const struct cached_slot *in, unsigned int n)
{
	struct chunk *c;
	unsigned int i, idx, w;

	for (i = 0; i < n; i++) {
		c = in[i].chunk;
		idx = in[i].idx;
		w = idx / 64;
		slot_check_unused(c, idx, "a slot held that is free, held or live");
		c->held_map[w] |= 1ULL << (idx % 64);
		c->held_when = ++S.held_clock;
		c->nheld++;
		S.cls[c->cls].nheld++;
	}
}

/* The held slots of @c go back to its chunk, which may leave its class once empty. */
static void chunk_held_release(struct chunk *c)
{
	unsigned int w = 0, idx;

	/* c->nheld, not the bitmap, ends the loop: the last slot_put() may free it. */
	while (c->nheld) {
		while (!c->held_map[w])
			if (++w >= map_words(c->nslots))
				secret__corrupt(c->data, "held slots counted but not in the bitmap");
		idx = w * 64 + (unsigned int)__builtin_ctzll(c->held_map[w]);
		c->held_map[w] &= c->held_map[w] - 1;
		c->nheld--;
		S.cls[c->cls].nheld--;
		slot_put(c, idx);
	}
}

/*
 * The held slots of class @k go back to their chunks: the quarantine
 * gives way rather than an allocation fail (no chunk can be mapped, or
 * one would exceed the lock limit), as a thread's own does.  Rare: a scan
 * of every chunk, which is what a held slot needs no list for.
 */
static void held_release(unsigned int k)
{
	struct chunk *c;
	size_t i, j;

	for (i = 0; i < S.narenas && S.cls[k].nheld; i++)
		for (j = 0; j < BLOCKS_PER_ARENA; j++) {
			c = &S.arenas[i]->chunk[j];
			if (c->state == CHUNK_ACTIVE && c->cls == k && c->nheld)
				chunk_held_release(c);
		}
}

/*
 * Class @k needs a new chunk: if its held slots take more than
 * HELD_KEEP_BYTES, those of the chunks held longest (by their latest
 * held slot) go back, down to half of it.
 */
static void held_trim(unsigned int k)
{
	struct chunk *c, *oldest;
	size_t i, j;

	if ((size_t)S.cls[k].nheld * class_size[k] <= HELD_KEEP_BYTES)
		return;
	while ((size_t)S.cls[k].nheld * class_size[k] > HELD_KEEP_BYTES / 2) {
		oldest = NULL;
		for (i = 0; i < S.narenas; i++)
			for (j = 0; j < BLOCKS_PER_ARENA; j++) {
				c = &S.arenas[i]->chunk[j];
				if (c->state == CHUNK_ACTIVE && c->cls == k && c->nheld &&
				    (!oldest || c->held_when < oldest->held_when))
					oldest = c;
			}
		if (!oldest)
			secret__corrupt(NULL, "held slots counted in no chunk");
		chunk_held_release(oldest);
	}
}

void secret__pool_free(struct chunk *c, char *p)
{
	unsigned int idx;
	size_t size;

	if (c->state != CHUNK_ACTIVE && c->state != CHUNK_DEAD)
		secret__die(p, "invalid pointer: no secret was allocated there");
	idx = secret__slot_check(c, p, &size);
	if (c->state == CHUNK_DEAD) {
		/* The parent's secret, PROT_NONE here: nothing to wipe. */
		c->sizes[idx] = SLOT_FREED;
		if (!c->owed || !--c->owed) {
			chunk_meta_free(c);
			c->state = CHUNK_UNUSED;
		}
		return;
	}
	if (!secret__canary_ok((unsigned char *)p + size, c->slot - size, p))
		secret__die(p, "damaged canary: something wrote past the end of this secret");
	explicit_bzero(p, c->slot);
	c->sizes[idx] = SLOT_FREED;
	S.allocs_live--;
	S.bytes_live -= size;
	secret__pool_hold(&(struct cached_slot){ .chunk = c, .idx = idx, .freed = 1 }, 1);
}

/*
 * A chunk whose only used slots are held in quarantine counts: nothing
 * live is in it, and a mapping over the lock limit takes it back.  Not on
 * a class's list when every slot is held: a scan of every chunk.
 */
unsigned long long secret__pool_empty_pages(void)
{
	size_t bytes = S.cached_bytes, i, j;
	const struct chunk *c;

	for (i = 0; i < S.narenas; i++)
		for (j = 0; j < BLOCKS_PER_ARENA; j++) {
			c = &S.arenas[i]->chunk[j];
			if (c->state == CHUNK_ACTIVE && c->nfree + c->nheld == c->nslots)
				bytes += c->len;
		}
	return bytes / S.page;
}

unsigned int secret__pool_trim(int unhold)
{
	struct chunk *c, *next;
	unsigned int n = 0, k;

	for (k = 0; k < NCLASSES; k++) {
		if (unhold)
			held_release(k);
		if (!S.cls[k].empty)
			continue;
		for (c = S.cls[k].avail; c && c->nfree < c->nslots; c = c->next)
			;
		if (c) {
			list_del(&S.cls[k].avail, c);
			S.cls[k].empty--;
			chunk_meta_free(c);
			cache_add(c);
		}
	}
	/* What mmkit_secret_reserve() asked for stays. */
	for (c = S.cache; c; c = next) {
		next = c->next;
		if (S.cached_bytes - c->len < S.keep)
			continue;
		cache_del(c);
		c->state = secret__release(c->data, c->len) ? CHUNK_LOST : CHUNK_UNUSED;
		n++;
	}
	return n;
}

/* The live slots of @c: cached ones have no size. */
static unsigned int live_slots(const struct chunk *c)
{
	unsigned int i, n = 0;

	for (i = 0; i < c->nslots; i++)
		n += slot_live(c->sizes[i]);
	return n;
}

void secret__pool_forget(void)
{
	size_t i, j;

	for (i = 0; i < S.narenas; i++)
		for (j = 0; j < BLOCKS_PER_ARENA; j++) {
			struct chunk *c = &S.arenas[i]->chunk[j];

			if (c->state != CHUNK_ACTIVE && c->state != CHUNK_CACHED)
				continue;
			c->owed = c->state == CHUNK_ACTIVE ? live_slots(c) : 0;
			c->nheld = 0;
			if (secret__unmap(c->data, c->len))
				c->state = CHUNK_LOST;
			else if (c->owed)
				c->state = CHUNK_DEAD;
			else
				c->state = CHUNK_UNUSED;
			if (c->state != CHUNK_DEAD)
				chunk_meta_free(c);
			c->next = c->prev = NULL;
			/* The owners were the parent's threads' caches. */
			c->owner = NULL;
		}
	for (i = 0; i < NCLASSES; i++) {
		S.cls[i].avail = NULL;
		S.cls[i].empty = 0;
		S.cls[i].nheld = 0;
	}
	S.cache = NULL;
	S.cached_bytes = 0;
}
