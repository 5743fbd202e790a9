/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * Helpers of every lib/ file that are not system calls: allocation that
 * leaves errno alone, range arithmetic, which failures pass, and fork
 * handlers registered until it works.  Not installed.
 */
#ifndef MMKIT_UTIL_H
#define MMKIT_UTIL_H

#include <stddef.h>

#include "sys.h"

/* calloc() and reallocarray() that leave errno alone: NULL on failure. */
void *mmkit__calloc(size_t n, size_t size);
void *mmkit__reallocarray(void *p, size_t n, size_t size);

/*
 * 0 if [addr, addr + len) is a non-empty, non-wrapping range, -EINVAL
 * otherwise, with the reason.  Page alignment of @addr is required when
 * @aligned.
 */
int mmkit__check_range(const void *addr, size_t len, int aligned);

/*
 * 1 if -errno @err is a passing failure (out of descriptors or memory,
 * interrupted), which must not be remembered as an answer: the same call
 * may succeed a moment later.  Feature detection caches only what the
 * kernel answered.
 */
int mmkit__passing(int err);

/*
 * The one way lib/ registers fork handlers: with pthread_atfork(3), once,
 * unless *@state says they are; 0 or -errno.  Call it holding no lock,
 * least of all one the handlers take (util.c says why).  A failure (no
 * memory for the handler) is not remembered: the next call tries again.
 * *@state starts at 0; the handlers are those MMKIT__ATFORK_HANDLERS made.
 */
#define MMKIT__ATFORK_DONE	(-1)
int mmkit__atfork_register(int *state, void (*prepare)(void), void (*parent)(void),
			   void (*child)(void));

/*
 * @name_prepare, @name_parent and @name_child: @prepare, @parent and
 * @child run by the outermost of a thread's calls only, so that handlers
 * registered twice (see mmkit__atfork_register()) take a lock once.
 */
#define MMKIT__ATFORK_HANDLERS(name, prepare, parent, child)		\
	static __thread unsigned int name##_depth;			\
	static void name##_prepare(void)				\
	{								\
		if (!name##_depth++)					\
			prepare();					\
	}								\
	static void name##_parent(void)					\
	{								\
		if (!--name##_depth)					\
			parent();					\
	}								\
	static void name##_child(void)					\
	{								\
		if (!--name##_depth)					\
			child();					\
	}

/* @len rounded up to whole pages; 0 when that wraps. */
static inline size_t mmkit__page_round_up(size_t len)
{
	size_t page = sys_page_size();

	return (len + page - 1) & ~(page - 1);
}

#endif /* MMKIT_UTIL_H */
