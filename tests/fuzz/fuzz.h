/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * What the libFuzzer targets share.  A target feeds its input to one
 * parser of untrusted bytes and checks what a correct parser must give;
 * a failed check aborts, which libFuzzer reports as a crash.
 */
#ifndef MMKIT_FUZZ_H
#define MMKIT_FUZZ_H

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/mman.h>

#define F_CHECK(cond) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__,	\
			__LINE__, #cond);				\
		abort();						\
	}								\
} while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* A memfd named @name holding @data (an input as the file a parser reads), or -1. */
static inline int f_memfd(const char *name, const void *data, size_t size)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (size && write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	return fd;
}

#endif /* MMKIT_FUZZ_H */
