// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>

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

int mmkit__atfork_register(int *done, void (*prepare)(void), void (*parent)(void),
			   void (*child)(void))
{
	int ret;

	if (*done)
		return 0;
	/* pthread_atfork() returns an error number and leaves errno alone. */
	ret = -pthread_atfork(prepare, parent, child);
	*done = !ret;
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
