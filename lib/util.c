// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "error.h"
#include "util.h"

void *mmkit__calloc(size_t n, size_t size)
{
	int saved = errno;
	void *p = calloc(n, size);

	errno = saved;
	return p;
}

void *mmkit__reallocarray(void *p, size_t n, size_t size)
{
	int saved = errno;
	void *q = reallocarray(p, n, size);

	errno = saved;
	return q;
}

int mmkit__passing(int err)
{
	return err == -EMFILE || err == -ENFILE || err == -ENOMEM || err == -EAGAIN ||
	       err == -EINTR || err == -ENOBUFS;
}

/*
 * No lock is held around pthread_atfork(): a fork taken meanwhile would
 * copy it held, and the child's first registration would wait for good.
 * *@state is 0 (not registered), MMKIT__ATFORK_DONE, or the pid of the
 * process one of whose threads is registering: its other threads wait
 * (pthread_atfork() returns soon), and a child forked meanwhile, whose
 * copy names its parent, registers itself.  That child may register a
 * second time (the parent's registration done, its state not yet stored,
 * when the child was copied): MMKIT__ATFORK_HANDLERS make that harmless.
 */
int mmkit__atfork_register(int *state, void (*prepare)(void), void (*parent)(void),
			   void (*child)(void))
{
	int s, me = 0, ret;

	for (;;) {
		s = __atomic_load_n(state, __ATOMIC_ACQUIRE);
		if (s == MMKIT__ATFORK_DONE)
			return 0;
		if (!me)
			me = getpid();
		if (s == me) {
			sched_yield();
			continue;
		}
		if (__atomic_compare_exchange_n(state, &s, me, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE))
			break;
	}
	/* pthread_atfork() returns an error number and leaves errno alone. */
	ret = -pthread_atfork(prepare, parent, child);
	__atomic_store_n(state, ret ? 0 : MMKIT__ATFORK_DONE, __ATOMIC_RELEASE);
	return ret;
}

int mmkit__check_range(const void *addr, size_t len, int aligned)
{
	uintptr_t start = (uintptr_t)addr;

	if (!len) {
		mmkit__error_detail(-EINVAL, "length 0: the range holds no byte");
		return -EINVAL;
	}
	if (start + len < start) {
		mmkit__error_detail(-EINVAL, "%#lx+%zu wraps around the address space",
				    (unsigned long)start, len);
		return -EINVAL;
	}
	if (aligned && (start & (sys_page_size() - 1))) {
		mmkit__error_detail(-EINVAL, "address %#lx is not page aligned", (unsigned long)start);
		return -EINVAL;
	}
	return 0;
}
