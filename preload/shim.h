/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * What the secret-heap shims share: their counters and the line
 * MMKIT_STATS=1 prints at exit, dying with a message, and taking a secret
 * from memfd_secret first, else from the library's announced fallback.
 * A header of static functions: each shim is one object of its own.
 */
#ifndef MMKIT_PRELOAD_SHIM_H
#define MMKIT_PRELOAD_SHIM_H

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mmkit.h"

/* What a shim defines for the program: the only symbols its map exports. */
#define SHIM_EXPORT	__attribute__((visibility("default")))

/* Counted always (a few relaxed atomic adds), printed with MMKIT_STATS=1. */
struct shim_stats {
	unsigned long long allocs;	/* successful allocations */
	unsigned long long bytes;	/* bytes asked for by them */
	unsigned long long secretmem;	/* of those, in memfd_secret */
	unsigned long long fallback;	/* of those, in the mlock fallback */
	unsigned long long failed;	/* allocations that returned NULL */
	unsigned long long live;	/* allocated and not freed */
	int wanted;			/* MMKIT_STATS=1 */
	int fd;				/* stderr as it was at start, for the line */
	pid_t pid;			/* the process that loaded the shim: a fork
					   child does not report its parent's counts */
};

static inline void shim_count(unsigned long long *counter, unsigned long long n)
{
	__atomic_fetch_add(counter, n, __ATOMIC_RELAXED);
}

static inline void shim_uncount(unsigned long long *counter, unsigned long long n)
{
	__atomic_fetch_sub(counter, n, __ATOMIC_RELAXED);
}

static inline unsigned long long shim_counted(const unsigned long long *counter)
{
	return __atomic_load_n(counter, __ATOMIC_RELAXED);
}

/*
 * From the shim's constructor.  The line goes to a copy of stderr taken
 * now: programs close stderr before they exit to catch write errors (xz
 * does), and the line comes after that, from a destructor.
 */
static inline void shim_stats_setup(struct shim_stats *st)
{
	const char *v = secure_getenv("MMKIT_STATS");

	st->wanted = v && !strcmp(v, "1");
	st->pid = getpid();
	st->fd = st->wanted ? fcntl(2, F_DUPFD_CLOEXEC, 3) : -1;
}

/* Writes one line to @fd in one write(2): no stdio, which a destructor may find closed. */
static inline void shim_vsay(int fd, const char *fmt, va_list ap)
{
	char line[512];
	int n = vsnprintf(line, sizeof(line), fmt, ap);

	if (n > 0 && write(fd, line, (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1) < 0)
		return;
}

/* One line on stderr: a dying process should not trust stdio. */
static inline void __attribute__((format(printf, 1, 2))) shim_say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	shim_vsay(2, fmt, ap);
	va_end(ap);
}

/* The statistics line of @st, on the stderr the program started with. */
static inline void __attribute__((format(printf, 2, 3)))
shim_stats_say(const struct shim_stats *st, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	shim_vsay(st->fd >= 0 ? st->fd : 2, fmt, ap);
	va_end(ap);
}

/*
 * From the shim's destructor: "SHIM: PROG[PID]: allocations=N bytes=N
 * in_memfd_secret=N in_fallback=N failed=N live_at_exit=N" and @extra.
 */
static inline void shim_stats_report(const struct shim_stats *st, const char *shim,
				     const char *extra)
{
	if (!st->wanted || getpid() != st->pid)
		return;
	shim_stats_say(st, "%s: %s[%d]: allocations=%llu bytes=%llu in_memfd_secret=%llu in_fallback=%llu "
		 "failed=%llu live_at_exit=%llu%s\n", shim, program_invocation_short_name,
		 (int)st->pid, shim_counted(&st->allocs), shim_counted(&st->bytes),
		 shim_counted(&st->secretmem), shim_counted(&st->fallback),
		 shim_counted(&st->failed), shim_counted(&st->live), extra);
}

static inline void __attribute__((noreturn)) shim_die(const char *shim, const char *fn,
						       const void *p, const char *what)
{
	shim_say("%s: %s(%p): %s; aborting\n", shim, fn, p, what);
	abort();
}

/*
 * A secret of @size bytes into *@p: from memfd_secret, else from the
 * fallback (which the library announces once on stderr), counted in @st;
 * -errno when neither can serve it.
 */
static inline int shim_secret_alloc(struct shim_stats *st, void **p, size_t size,
				    unsigned int flags)
{
	int ret = mmkit_secret_alloc(p, size, flags | MMKIT_SECRET_REQUIRE_SECRETMEM);

	if (!ret) {
		shim_count(&st->secretmem, 1);
	} else if (ret == -ENOSYS) {
		ret = mmkit_secret_alloc(p, size, flags);
		if (!ret)
			shim_count(&st->fallback, 1);
	}
	if (ret) {
		shim_count(&st->failed, 1);
		return ret;
	}
	shim_count(&st->allocs, 1);
	shim_count(&st->bytes, size);
	shim_count(&st->live, 1);
	return 0;
}

#endif /* MMKIT_PRELOAD_SHIM_H */
