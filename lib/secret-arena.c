// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The arenas the pool's chunks live in (secret-pool.c shows one): each
 * one PROT_NONE reservation, not charged to anything, aligned to its size
 * so that a pointer finds its arena by a hash of its high bits and its
 * chunk by a shift, with no lock and no search.  Arenas are only ever
 * added, under S.lock.
 */
#include <errno.h>
#include <stdlib.h>

#include "secret.h"

static size_t arena_hash(uintptr_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ULL) >> 32) & (ARENA_TABLE - 1);
}

/*
 * A reservation of @len bytes aligned to 1 << S.arena_shift: twice the
 * size is reserved and the ends trimmed.
 */
static int reserve_aligned(size_t len, void **out)
{
	size_t align = (size_t)1 << S.arena_shift;
	uintptr_t start, aligned;
	void *base;
	int ret;

	ret = sys_mmap(NULL, len + align, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0, &base);
	if (ret)
		return ret;
	start = (uintptr_t)base;
	aligned = (start + align - 1) & ~(uintptr_t)(align - 1);
	if (aligned > start)
		sys_munmap(base, aligned - start);
	if (start + align > aligned)
		sys_munmap((char *)aligned + len, start + align - aligned);
	*out = (void *)aligned;
	return 0;
}

static int arena_add(void)
{
	size_t len = BLOCKS_PER_ARENA * S.stride + S.page;
	struct arena *a, **bigger;
	void *base;
	size_t i, h;
	int ret;

	/* The table stays at most 3/4 full, so that a probe soon meets a hole. */
	if (4 * (S.narenas + 1) > 3 * ARENA_TABLE)
		return -ENOMEM;
	bigger = mmkit__reallocarray(S.arenas, S.narenas + 1, sizeof(*S.arenas));
	if (!bigger)
		return -ENOMEM;
	S.arenas = bigger;
	a = mmkit__calloc(1, sizeof(*a));
	if (!a)
		return -ENOMEM;
	ret = reserve_aligned(len, &base);
	if (ret) {
		free(a);
		return ret;
	}
	a->base = base;
	for (i = 0; i < BLOCKS_PER_ARENA; i++)
		a->chunk[i].data = a->base + i * S.stride + S.page;
	S.arenas[S.narenas++] = a;
	for (h = arena_hash((uintptr_t)base >> S.arena_shift); S.arena_table[h];
	     h = (h + 1) & (ARENA_TABLE - 1))
		;
	/* Published whole: readers without the lock see the arena or nothing. */
	__atomic_store_n(&S.arena_table[h], a, __ATOMIC_RELEASE);
	return 0;
}

/*
 * No lock: arenas are only ever added to the table, each published after
 * it is set up.  The arena's last guard page is the next aligned block's
 * first, where no arena can start: it finds nothing.
 */
struct chunk *secret__chunk_of(const void *p)
{
	uintptr_t key = (uintptr_t)p >> S.arena_shift;
	struct arena *a;
	size_t h;

	for (h = arena_hash(key); (a = __atomic_load_n(&S.arena_table[h], __ATOMIC_ACQUIRE));
	     h = (h + 1) & (ARENA_TABLE - 1))
		if ((uintptr_t)a->base >> S.arena_shift == key)
			return &a->chunk[((uintptr_t)p - (uintptr_t)a->base) >> S.stride_shift];
	return NULL;
}

int secret__block_find(struct chunk **out)
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
