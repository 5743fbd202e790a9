// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The pool of small secrets (secret.c says why):
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
 * canaries take locked pages.  S.lock is held throughout.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "secret.h"

static const uint16_t class_size[NCLASSES] = {
	16, 32, 48, 64, 80, 96, 128, 160, 192, 256, 320, 384, 512, 640, 768,
	1024, 1280, 1536, 2048,
};

void secret__pool_init(void)
{
	unsigned int k, i;

	/* 16 pages or 64 KiB: slot numbers stay below 2^16 for pages up to 64 KiB. */
	S.stride = S.page * 16 > 65536 ? S.page * 16 : 65536;
	S.stride_shift = (unsigned int)__builtin_ctzl(S.stride);
	S.chunk_len = S.stride - S.page;
	for (i = 0, k = 0; i < CLASS_SLOTS; i++) {
		while (class_size[k] < i * SLOT_ALIGN)
			k++;
		S.class_of[i] = (unsigned char)k;
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

static int arena_add(void)
{
	size_t len = BLOCKS_PER_ARENA * S.stride + S.page;
	struct arena *a, **bigger;
	void *base;
	size_t i, at;
	int ret;

	bigger = mmkit__reallocarray(S.arenas, S.narenas + 1, sizeof(*S.arenas));
	if (!bigger)
		return -ENOMEM;
	S.arenas = bigger;
	a = mmkit__calloc(1, sizeof(*a));
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

struct chunk *secret__chunk_of(const void *p)
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
int secret__chunk_map(struct chunk **out)
{
	struct chunk *c;
	int ret, lost;

	ret = block_find(&c);
	if (ret)
		return ret;
	ret = secret__map(c->data, S.chunk_len, &lost);
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

	meta = mmkit__calloc(2 * (size_t)nslots, sizeof(*meta));
	if (!meta)
		return -ENOMEM;
	if (!c) {
		ret = secret__chunk_map(&c);
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
	c->state = secret__release(c->data, S.chunk_len) ? CHUNK_LOST : CHUNK_UNUSED;
}

/*
 * The slot sizes and the free stack live in ordinary memory (only secrets
 * take locked pages), where a stray write of the application can reach
 * them, and so do the counts that index them: every number read back is
 * checked before it is used as an index or a length.
 */
static void chunk_check(const struct chunk *c)
{
	if (c->cls >= NCLASSES || c->slot != class_size[c->cls] ||
	    c->nslots != (unsigned int)(S.chunk_len / c->slot) || c->bump > c->nslots ||
	    c->nfree > c->bump || c->live > c->bump)
		secret__corrupt(c->data, "slot counts out of range");
}

int secret__pool_alloc(void **p, size_t size)
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
	chunk_check(c);
	if (!c->live)
		cl->empty--;
	if (c->nfree) {
		idx = c->free_slots[--c->nfree];
		/* Only a slot handed out before and free now can be on the stack. */
		if (idx >= c->bump || c->sizes[idx])
			secret__corrupt(c->data, "a freed-slot number out of range or in use");
	} else {
		idx = c->bump++;
	}
	c->live++;
	if (!c->nfree && c->bump == c->nslots)
		list_del(&cl->avail, c);
	c->sizes[idx] = (uint16_t)size;
	slot = c->data + (size_t)idx * c->slot;
	secret__canary_fill((unsigned char *)slot + size, c->slot - size, slot);
	*p = slot;
	return 0;
}

size_t secret__pool_size(const struct chunk *c, const char *p)
{
	size_t off = (size_t)(p - c->data);
	unsigned int idx;

	if ((c->state != CHUNK_ACTIVE && c->state != CHUNK_DEAD) || off >= S.chunk_len)
		return 0;
	chunk_check(c);
	idx = (unsigned int)((off * c->slot_inv) >> 32);
	if ((size_t)idx * c->slot != off || idx >= c->bump)
		return 0;
	return c->sizes[idx];
}

void secret__pool_free(struct chunk *c, char *p)
{
	size_t off = (size_t)(p - c->data);
	unsigned int idx;
	size_t size;
	int was_full;

	if (c->state != CHUNK_ACTIVE && c->state != CHUNK_DEAD)
		secret__die(p, "invalid pointer: no secret was allocated there");
	chunk_check(c);
	if (p < c->data || off >= S.chunk_len)
		secret__die(p, "invalid pointer: not the start of a secret");
	idx = (unsigned int)((off * c->slot_inv) >> 32);
	if ((size_t)idx * c->slot != off || idx >= c->bump)
		secret__die(p, "invalid pointer: not the start of a secret");
	size = c->sizes[idx];
	if (!size)
		secret__die(p, "double free: this secret was already freed");
	if (size > c->slot - CANARY_MIN)
		secret__corrupt(c->data, "a slot size larger than its slot");
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
	if (!secret__canary_ok((unsigned char *)p + size, c->slot - size, p))
		secret__die(p, "damaged canary: something wrote past the end of this secret");
	explicit_bzero(p, c->slot);
	/* A live slot is not on the free stack: there is room for it. */
	if (c->nfree >= c->bump)
		secret__corrupt(c->data, "slot counts out of range");
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


unsigned long long secret__pool_empty_chunks(void)
{
	unsigned long long empty = S.ncached;
	unsigned int k;

	for (k = 0; k < NCLASSES; k++)
		empty += S.cls[k].empty;
	return empty;
}

void secret__pool_forget(void)
{
	size_t i, j;

	for (i = 0; i < S.narenas; i++)
		for (j = 0; j < BLOCKS_PER_ARENA; j++) {
			struct chunk *c = &S.arenas[i]->chunk[j];

			if (c->state != CHUNK_ACTIVE && c->state != CHUNK_CACHED)
				continue;
			if (secret__unmap(c->data, S.chunk_len))
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
}
