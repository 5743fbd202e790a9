/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * glibc's malloc as libmmkit-perturb.so sees it: which malloc small
 * blocks go to, and whether a pointer has a plausible glibc chunk header
 * before the shim writes into the block.  A header of static functions
 * for its one user, the allocator (perturb.c).
 */
#ifndef MMKIT_PRELOAD_GLIBC_MALLOC_H
#define MMKIT_PRELOAD_GLIBC_MALLOC_H

#include <dlfcn.h>
#include <gnu/lib-names.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "glibc-chunk.h"

/* Alignment glibc guarantees, which every pointer handed out has. */
#define MIN_ALIGN	16UL

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void __libc_free(void *p);
extern void *__libc_memalign(size_t align, size_t size);

/*
 * The malloc small blocks go to: glibc's own until setup() has looked,
 * then glibc's debugging malloc (libc_malloc_debug.so) when it follows
 * the shim in LD_PRELOAD.  Any other malloc that follows is passed by:
 * its pointers have no glibc chunk headers to check.  usable_size is set
 * by setup(): glibc's malloc_usable_size is not exported under another
 * name.
 */
static struct {
	void *(*malloc)(size_t size);
	void *(*calloc)(size_t n, size_t size);
	void *(*realloc)(void *p, size_t size);
	void (*free)(void *p);
	void *(*memalign)(size_t align, size_t size);
	size_t (*usable_size)(void *p);
} glibc = {
	__libc_malloc, __libc_calloc, __libc_realloc, __libc_free, __libc_memalign, NULL,
};

/* The bytes of a free chunk where glibc keeps its list links and tcache key. */
#define FREE_LIST_BYTES		(2 * sizeof(size_t))

/* The program break when the shim started: the main arena lies above it. */
static uintptr_t heap_start;
/* glibc.malloc.hugetlb may change HEAP_MAX: chunks of other arenas are then not checked. */
static int heap_max_unknown;

/*
 * The base symbol version of glibc's malloc on this architecture
 * (GLIBC_2.2.5 on x86_64, GLIBC_2.17 on arm64, ...) in @buf; NULL if none
 * fits.  libc_malloc_debug.so defines its functions only under that
 * version, not as the default one, which dlsym() cannot see.
 */
static const char *malloc_version(void *libc, char *buf, size_t len)
{
	void *want = dlsym(libc, "malloc");
	int minor;

	snprintf(buf, len, "GLIBC_2.2.5");
	if (want && dlvsym(libc, "malloc", buf) == want)
		return buf;
	for (minor = 0; minor < 100; minor++) {
		snprintf(buf, len, "GLIBC_2.%d", minor);
		if (want && dlvsym(libc, "malloc", buf) == want)
			return buf;
	}
	return NULL;
}

/*
 * Finds glibc's malloc_usable_size and the heap's start, and sends small
 * blocks to libc_malloc_debug.so when it is the malloc after the shim:
 * glibc's MALLOC_CHECK_ then sees (and checks) every one.  Called once,
 * before the first block, first thing.
 */
static void glibc_setup(void)
{
	const char *tunables = secure_getenv("GLIBC_TUNABLES");
	const char *version;
	void *libc, *next;
	char buf[32];
	Dl_info info;

	/* Before anything here allocates: glibc's heap starts at the break. */
	heap_start = (uintptr_t)sbrk(0);
	heap_max_unknown = tunables && strstr(tunables, "glibc.malloc.hugetlb");
	libc = dlopen(LIBC_SO, RTLD_LAZY | RTLD_NOLOAD);
	glibc.usable_size = libc ? dlsym(libc, "malloc_usable_size") : NULL;
	if (!glibc.usable_size)
		abort();
	version = malloc_version(libc, buf, sizeof(buf));
	next = version ? dlvsym(RTLD_NEXT, "malloc", version) : NULL;
	if (!next || next == (void *)__libc_malloc || !dladdr(next, &info) || !info.dli_fname ||
	    !strstr(info.dli_fname, "libc_malloc_debug.so"))
		return;
	glibc.malloc = next;
	glibc.calloc = dlvsym(RTLD_NEXT, "calloc", version);
	glibc.realloc = dlvsym(RTLD_NEXT, "realloc", version);
	glibc.free = dlvsym(RTLD_NEXT, "free", version);
	glibc.memalign = dlvsym(RTLD_NEXT, "memalign", version);
	glibc.usable_size = dlvsym(RTLD_NEXT, "malloc_usable_size", version);
	if (!glibc.calloc || !glibc.realloc || !glibc.free || !glibc.memalign ||
	    !glibc.usable_size)
		abort();
}

/*
 * The usable size of glibc block @p if its chunk header is plausible, 0
 * if not (then the caller writes nothing and leaves @p to glibc, which
 * decides whether it aborts).  Plausible: aligned, not mmapped (an
 * mmapped chunk is unmapped by free anyway), a size glibc accepts, the
 * chunk and the size word after it inside its heap, and in use by that
 * word's PREV_INUSE bit.  It reads what glibc's free() reads first (the
 * size word, a heap's header) and the next size word only once it is
 * known to be inside the heap, so a forged size cannot make it read or
 * write out of bounds.  A chunk in the thread cache or a fast bin still
 * looks in use: the caller keeps off its first FREE_LIST_BYTES.
 */
static size_t glibc_chunk_usable(void *p)
{
	uintptr_t chunk = (uintptr_t)p - 2 * sizeof(size_t), start, end;
	const struct glibc_heap *heap;
	size_t head, size;

	if ((uintptr_t)p & (MIN_ALIGN - 1))
		return 0;
	head = ((const size_t *)p)[-1];
	size = head & ~CHUNK_FLAGS;
	if ((head & CHUNK_MMAPPED) || size < CHUNK_MIN || (size & (MIN_ALIGN - 1)) ||
	    size > HEAP_MAX)
		return 0;
	if (head & CHUNK_NON_MAIN_ARENA) {
		if (heap_max_unknown)
			return 0;
		heap = (const struct glibc_heap *)(chunk & ~(uintptr_t)(HEAP_MAX - 1));
		start = (uintptr_t)(heap + 1);
		end = (uintptr_t)heap + (heap->size < HEAP_MAX ? heap->size : HEAP_MAX);
	} else {
		start = heap_start;
		end = (uintptr_t)sbrk(0);
	}
	if (chunk < start || chunk >= end || end - chunk < size + 2 * sizeof(size_t))
		return 0;
	if (!(*(const size_t *)(chunk + size + sizeof(size_t)) & CHUNK_PREV_INUSE))
		return 0;
	size = glibc.usable_size(p);
	return size < (head & ~CHUNK_FLAGS) ? size : 0;
}

#endif /* MMKIT_PRELOAD_GLIBC_MALLOC_H */
