/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/* What the names tests need to find this process's registry memfd. */
#ifndef MMKIT_TEST_NAMES_REGISTRY_H
#define MMKIT_TEST_NAMES_REGISTRY_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

#endif /* MMKIT_TEST_NAMES_REGISTRY_H */
