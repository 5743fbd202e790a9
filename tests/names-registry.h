/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/* What the names tests need to find this process's registry memfd. */
#ifndef MMKIT_TEST_NAMES_REGISTRY_H
#define MMKIT_TEST_NAMES_REGISTRY_H

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/utsname.h>

#include "names.h"

/*
 * 1 if the kernel is 6.2 or later: it maps a memfd as anonymous shared
 * memory, which it names (and so does the registry where it cannot).
 */
static inline int kernel_names_memfd(void)
{
	struct utsname u;
	int a = 0, b = 0;

	return !uname(&u) && sscanf(u.release, "%d.%d", &a, &b) == 2 && (a > 6 || (a == 6 && b >= 2));
}

/* The registry descriptor of this process, -1 if none. */
static inline int registry_fd(void)
{
	char link[64], path[64];
	ssize_t n;
	int fd;

	for (fd = 0; fd < 1024; fd++) {
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		n = readlink(path, link, sizeof(link) - 1);
		if (n < 0)
			continue;
		link[n] = '\0';
		if (!strcmp(link, "/memfd:mmkit-names (deleted)"))
			return fd;
	}
	return -1;
}

/*
 * A registry written by hand, as another copy of the library or a hostile
 * process could: a memfd named like the library's, holding @h (its cap at
 * least @n) and the @n entries @e in the live area, at a descriptor above
 * @after_fd.  Returns the descriptor, -1 on failure.
 */
static inline int registry_forge(const struct mmkit__registry_header *h,
				 const struct mmkit__name_range *e, size_t n, int after_fd)
{
	size_t cap = h->cap > n ? h->cap : n;
	int fd = memfd_create(MMKIT__REGISTRY_NAME, MFD_CLOEXEC), moved;

	if (fd < 0)
		return -1;
	moved = fcntl(fd, F_DUPFD_CLOEXEC, after_fd + 1);
	close(fd);
	if (moved < 0 || ftruncate(moved, (off_t)(sizeof(*h) + 2 * cap * sizeof(*e))) ||
	    pwrite(moved, e, n * sizeof(*e), sizeof(*h)) != (ssize_t)(n * sizeof(*e)) ||
	    pwrite(moved, h, sizeof(*h), 0) != (ssize_t)sizeof(*h)) {
		if (moved >= 0)
			close(moved);
		return -1;
	}
	return moved;
}

/* A header of this version for @count entries, seq @seq. */
static inline struct mmkit__registry_header registry_forged_header(uint32_t count, uint32_t seq)
{
	struct mmkit__registry_header h = { .magic = MMKIT__REGISTRY_MAGIC,
					    .version = MMKIT__REGISTRY_VERSION,
					    .seq = seq, .count = count, .cap = count };

	return h;
}

#endif /* MMKIT_TEST_NAMES_REGISTRY_H */
