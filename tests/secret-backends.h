/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * The secret-memory tests run their suite once per backend, each in a
 * child whose MMKIT_SECRET_BACKEND forces it: the fallback everywhere,
 * memfd_secret where the kernel has it (else the test skips, saying so).
 */
#ifndef MMKIT_TEST_SECRET_BACKENDS_H
#define MMKIT_TEST_SECRET_BACKENDS_H

#include <sys/syscall.h>

#include "harness.h"

/* The backend the current child runs: "mlock" or "memfd_secret". */
static const char *backend;

static void (*backend_suite)(void);

static void run_backend_suite(void *arg)
{
	backend = arg;
	setenv("MMKIT_SECRET_BACKEND", backend, 1);
	printf("backend %s\n", backend);
	backend_suite();
	fflush(NULL);
}

/* 1 if memfd_secret(2) works here; else 0 and the reason in @why. */
static inline int t_memfd_secret_works(char *why, size_t len)
{
	int fd = (int)syscall(SYS_memfd_secret, 0);

	if (fd < 0) {
		snprintf(why, len, "memfd_secret: %s (boot with secretmem.enable=1)", strerror(errno));
		return 0;
	}
	close(fd);
	return 1;
}

/* Runs @suite on the fallback, then on memfd_secret or skips naming why not. */
static inline void t_secret_backends(void (*suite)(void))
{
	char why[128];

	backend_suite = suite;
	T_CHILD_OK(t_in_child(run_backend_suite, "mlock"));
	if (!t_memfd_secret_works(why, sizeof(why)))
		T_SKIP("%s: only the fallback was tested", why);
	T_CHILD_OK(t_in_child(run_backend_suite, "memfd_secret"));
}

#endif /* MMKIT_TEST_SECRET_BACKENDS_H */
