/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * What the hostile targets share.  A target sets up what it attacks the
 * readers with, prints one line "ready ..." and waits to be killed
 * (tests/test-hostile.sh reads that line, runs mmkit on the target, and
 * kills it).  A target that cannot set up prints "skip REASON" and exits
 * 77, or a message and exits 1 on a failure.
 */
#ifndef MMKIT_HOSTILE_H
#define MMKIT_HOSTILE_H

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "names.h"

static inline void hostile_vsay(const char *fmt, va_list ap)
{
	vprintf(fmt, ap);
	putchar('\n');
	fflush(stdout);
}

static inline __attribute__((noreturn, format(printf, 1, 2))) void hostile_ready(const char *fmt, ...)
{
	va_list ap;

	fputs("ready ", stdout);
	va_start(ap, fmt);
	hostile_vsay(fmt, ap);
	va_end(ap);
	for (;;)
		pause();
}

static inline __attribute__((noreturn, format(printf, 1, 2))) void hostile_skip(const char *fmt, ...)
{
	va_list ap;

	fputs("skip ", stdout);
	va_start(ap, fmt);
	hostile_vsay(fmt, ap);
	va_end(ap);
	exit(77);
}

/* A failure to set up: the message with @ret (-errno) and exit 1. */
static inline __attribute__((noreturn)) void hostile_fail(const char *what, int ret)
{
	printf("failed %s: %s\n", what, strerror(-ret));
	fflush(stdout);
	exit(1);
}

/* Names [addr, addr + len) through the registry, on kernels that name VMAs too. */
static inline void hostile_name(void *addr, size_t len, const char *name)
{
	int ret = mmkit__registry_name((uintptr_t)addr, (uintptr_t)addr + len, name, 0);

	if (ret)
		hostile_fail(name, ret);
}

#endif /* MMKIT_HOSTILE_H */
