// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * libmmkit-names.so: the names glibc 2.39's glibc.mem.decorate_maps gives
 * memory, for programs on an older glibc (Debian 12 has 2.36), with the
 * same labels, by the same prctl(PR_SET_VMA, PR_SET_VMA_ANON_NAME) call:
 *  - " glibc: pthread stack: TID", a thread's stack (guard page excluded)
 *    as the thread starts, for the stacks glibc allocates (a stack the
 *    program gives with pthread_attr_setstack() is its own, left alone);
 *  - " glibc: malloc", each mmapped chunk (a large block), the whole
 *    mapping, when malloc, calloc, realloc or an aligned allocation
 *    returns it;
 *  - " glibc: malloc arena", each heap of a non-main arena, as far as it
 *    is usable when the shim first meets a block of it.
 * mmkit run --names preloads it on glibc < 2.39 (and on 2.39+ turns the
 * tunable on instead); the kernel or mmkit's supervisor takes the calls.
 * Like glibc, the shim stops naming for good at the first EINVAL (a
 * kernel without CONFIG_ANON_VMA_NAME and no supervisor).
 *
 * The allocation functions pass the call on to the next malloc in the
 * search order (RTLD_NEXT), and read chunk headers only when that is
 * glibc's own: another malloc preloaded after the shim (jemalloc,
 * libmmkit-perturb.so) keeps its blocks, which glibc would not name.
 * Not named (glibc 2.39 names them from inside, where no preload
 * reaches): the loader's early malloc, stacks cached after their thread
 * ended, arenas that grow after the first block the shim sees.
 */
#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "glibc-chunk.h"
#include "shim.h"

#ifndef PR_SET_VMA
#define PR_SET_VMA		0x53564d41
#define PR_SET_VMA_ANON_NAME	0
#endif

/* Heaps of non-main arenas named, by address: more than any program has. */
#define HEAPS	4096

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *p, size_t size);
extern void *__libc_memalign(size_t align, size_t size);

static struct {
	void *(*malloc)(size_t size);
	void *(*calloc)(size_t n, size_t size);
	void *(*realloc)(void *p, size_t size);
	void *(*memalign)(size_t align, size_t size);
	void *(*aligned_alloc)(size_t align, size_t size);
	int (*posix_memalign)(void **p, size_t align, size_t size);
	int (*pthread_create)(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
			      void *arg);
	int glibc;		/* the next malloc is glibc's: its chunks can be read */
	int heap_max_unknown;	/* glibc.malloc.hugetlb may change HEAP_MAX: arenas not named */
	int off;		/* glibc 2.39+ names itself, or EINVAL: no more naming */
	int state;		/* 0: not set up, 1: being set up, 2: set up */
} next;

static uintptr_t heaps[HEAPS];

/* glibc 2.39 and later name their memory themselves (mmkit run turns the tunable on). */
static int glibc_names_itself(void)
{
	int major = 0, minor = 0;

	return sscanf(gnu_get_libc_version(), "%d.%d", &major, &minor) == 2 &&
	       (major > 2 || (major == 2 && minor >= 39));
}

/*
 * Finds the functions to pass the calls on to.  dlsym() may allocate:
 * meanwhile (state 1) the allocation functions call glibc's directly.
 */
static void setup(void)
{
	const char *tunables;
	int idle = 0;

	if (__atomic_load_n(&next.state, __ATOMIC_ACQUIRE) == 2 ||
	    !__atomic_compare_exchange_n(&next.state, &idle, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE))
		return;
	next.malloc = dlsym(RTLD_NEXT, "malloc");
	next.calloc = dlsym(RTLD_NEXT, "calloc");
	next.realloc = dlsym(RTLD_NEXT, "realloc");
	next.memalign = dlsym(RTLD_NEXT, "memalign");
	next.aligned_alloc = dlsym(RTLD_NEXT, "aligned_alloc");
	next.posix_memalign = dlsym(RTLD_NEXT, "posix_memalign");
	next.pthread_create = dlsym(RTLD_NEXT, "pthread_create");
	if (!next.malloc || !next.calloc || !next.realloc || !next.memalign ||
	    !next.aligned_alloc || !next.posix_memalign || !next.pthread_create)
		shim_die("names", "dlsym", NULL, "the next allocator or pthread_create is missing");
	next.glibc = next.malloc == (void *)__libc_malloc;
	tunables = secure_getenv("GLIBC_TUNABLES");
	next.heap_max_unknown = tunables && strstr(tunables, "glibc.malloc.hugetlb");
	next.off = glibc_names_itself();
	__atomic_store_n(&next.state, 2, __ATOMIC_RELEASE);
}

static int ready(void)
{
	setup();
	return __atomic_load_n(&next.state, __ATOMIC_ACQUIRE) == 2;
}

/* glibc's __set_vma_name(): the call, and no more calls once it answers EINVAL. */
static void set_name(uintptr_t start, size_t len, const char *name)
{
	int saved = errno;

	if (__atomic_load_n(&next.off, __ATOMIC_RELAXED))
		return;
	if (syscall(SYS_prctl, PR_SET_VMA, PR_SET_VMA_ANON_NAME, start, len, name) &&
	    errno == EINVAL)
		__atomic_store_n(&next.off, 1, __ATOMIC_RELAXED);
	errno = saved;
}

/* Names @heap the first time a block of it is met: a lock-free set of heaps seen. */
static void heap_seen(uintptr_t heap)
{
	size_t i = (size_t)(heap / HEAP_MAX * 0x9e3779b97f4a7c15ull >> 20) % HEAPS, k;
	uintptr_t empty;

	for (k = 0; k < HEAPS; k++, i = (i + 1) % HEAPS) {
		empty = 0;
		if (__atomic_load_n(&heaps[i], __ATOMIC_RELAXED) == heap)
			return;
		if (__atomic_compare_exchange_n(&heaps[i], &empty, heap, 0, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			break;
		if (empty == heap)
			return;
	}
	if (k < HEAPS)
		set_name(heap, ((const struct glibc_heap *)heap)->size, " glibc: malloc arena");
}

/* What glibc 2.39 names about block @p, which its malloc has just returned. */
static void *decorate(void *p)
{
	uintptr_t chunk = (uintptr_t)p - 2 * sizeof(size_t);
	size_t head, prev;

	if (!p || !next.glibc || __atomic_load_n(&next.off, __ATOMIC_RELAXED))
		return p;
	head = ((const size_t *)p)[-1];
	if (head & CHUNK_MMAPPED) {
		prev = ((const size_t *)chunk)[0];
		set_name(chunk - prev, prev + (head & ~CHUNK_FLAGS), " glibc: malloc");
	} else if ((head & CHUNK_NON_MAIN_ARENA) && !next.heap_max_unknown) {
		heap_seen(chunk & ~(uintptr_t)(HEAP_MAX - 1));
	}
	return p;
}

SHIM_EXPORT void *malloc(size_t size)
{
	return ready() ? decorate(next.malloc(size)) : __libc_malloc(size);
}

SHIM_EXPORT void *calloc(size_t n, size_t size)
{
	return ready() ? decorate(next.calloc(n, size)) : __libc_calloc(n, size);
}

SHIM_EXPORT void *realloc(void *p, size_t size)
{
	return ready() ? decorate(next.realloc(p, size)) : __libc_realloc(p, size);
}

SHIM_EXPORT void *memalign(size_t align, size_t size)
{
	return ready() ? decorate(next.memalign(align, size)) : __libc_memalign(align, size);
}

SHIM_EXPORT void *aligned_alloc(size_t align, size_t size)
{
	return ready() ? decorate(next.aligned_alloc(align, size)) : __libc_memalign(align, size);
}

SHIM_EXPORT int posix_memalign(void **p, size_t align, size_t size)
{
	int ret;

	if (!ready())
		return EAGAIN;
	ret = next.posix_memalign(p, align, size);
	if (!ret)
		decorate(*p);
	return ret;
}

/* A thread being started: the program's function and argument. */
struct start {
	void *(*fn)(void *);
	void *arg;
};

/* Names the stack of the thread starting, then runs the program's function. */
static void *start_named(void *arg)
{
	struct start s = *(struct start *)arg;
	pthread_attr_t attr;
	char name[64];
	size_t size;
	void *low;

	free(arg);
	if (!pthread_getattr_np(pthread_self(), &attr)) {
		if (!pthread_attr_getstack(&attr, &low, &size)) {
			snprintf(name, sizeof(name), " glibc: pthread stack: %u",
				 (unsigned int)syscall(SYS_gettid));
			set_name((uintptr_t)low, size, name);
		}
		pthread_attr_destroy(&attr);
	}
	return s.fn(s.arg);
}

SHIM_EXPORT int pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
			       void *arg)
{
	struct start *s;
	size_t size;
	void *user = NULL;
	int ret;

	setup();
	if (next.state != 2)
		return EAGAIN;
	/* A stack of the program's own (pthread_attr_setstack): glibc names it not so. */
	if (next.off || (attr && !pthread_attr_getstack(attr, &user, &size) && user))
		return next.pthread_create(t, attr, fn, arg);
	s = malloc(sizeof(*s));
	if (!s)
		return EAGAIN;
	s->fn = fn;
	s->arg = arg;
	ret = next.pthread_create(t, attr, start_named, s);
	if (ret)
		free(s);
	return ret;
}
