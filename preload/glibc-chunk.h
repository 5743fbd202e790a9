/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * glibc's malloc chunks as the shims read them (perturb.c through
 * glibc-malloc.h, names.c).
 */
#ifndef MMKIT_PRELOAD_GLIBC_CHUNK_H
#define MMKIT_PRELOAD_GLIBC_CHUNK_H

#include <stddef.h>

/*
 * glibc's chunk layout (malloc/malloc.c, unchanged since 2.26): a size
 * word before the block, its low bits flags; a chunk in use has
 * PREV_INUSE set in the size word of the chunk after it.  A chunk not in
 * the main arena lies in a heap aligned to HEAP_MAX whose header starts
 * with the arena pointer, the previous heap and the heap's size.  An
 * mmapped chunk (CHUNK_MMAPPED) is its own mapping: its first word, the
 * previous size, holds how far into the mapping it starts.
 */
#define CHUNK_PREV_INUSE	0x1UL
#define CHUNK_MMAPPED		0x2UL
#define CHUNK_NON_MAIN_ARENA	0x4UL
#define CHUNK_FLAGS		0x7UL
#define CHUNK_MIN		(4 * sizeof(size_t))
#define HEAP_MAX		(2 * 4 * 1024 * 1024 * sizeof(long))

struct glibc_heap {
	void *arena;
	struct glibc_heap *prev;
	size_t size;
};

#endif /* MMKIT_PRELOAD_GLIBC_CHUNK_H */
