/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * What the mmkit run --names tests share: running a target with pipes to
 * and from it, and reading the names of its pages from outside.
 */
#ifndef MMKIT_TEST_NAMES_CHECK_H
#define MMKIT_TEST_NAMES_CHECK_H

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "mmkit.h"

static inline double seconds(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Runs @argv with a pipe to and from it: *@in to write, *@f to read. */
static inline pid_t spawn(const char *const argv[], int *in, FILE **f)
{
	int to[2], from[2];
	pid_t run;

	T_ASSERT(!pipe(to) && !pipe(from));
	run = fork();
	T_ASSERT(run >= 0);
	if (!run) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		close(to[1]);
		close(from[0]);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(to[0]);
	close(from[1]);
	*in = to[1];
	*f = fdopen(from[0], "r");
	T_ASSERT(*f);
	return run;
}

/* The checker's side: the name mmkit_regions() gives the page at an address. */
struct lookup {
	unsigned long addr;
	char name[sizeof(((struct mmkit_region *)0)->name)];
	int found;
	int others;		/* named regions other than @only, for the exec'd child */
	const char *only;
};

static inline int lookup_fn(const struct mmkit_region *r, void *arg)
{
	struct lookup *q = arg;

	if (q->only && (r->kind == MMKIT_REGION_ANON_NAMED || r->kind == MMKIT_REGION_REGISTRY) &&
	    strcmp(r->name, q->only))
		q->others++;
	if (q->addr >= r->start && q->addr < r->end) {
		memcpy(q->name, r->name, sizeof(q->name));
		q->found = 1;
	}
	return 0;
}

/*
 * The name at @addr in process @pid must become @want (NULL: none).  A
 * supervisor puts the names an mremap() moves once it has seen the call
 * done, soon after the call returned: looked at again until then, for
 * 10 s at most (a bound for a loaded machine, not a timing).
 */
static inline void expect_name(pid_t pid, unsigned long addr, const char *want, const char *what)
{
	struct lookup q = { .addr = addr };
	const char *full = want ? want : "";
	double t0 = seconds();
	int ret;

	while ((ret = mmkit_regions(pid, lookup_fn, &q)) == 0 && q.found && strcmp(q.name, full) &&
	       seconds() - t0 < 10) {
		usleep(10000);
		q.found = 0;
	}
	if (ret || !q.found || strcmp(q.name, full))
		T_FAIL("%s (pid %d, %#lx): '%s', expected '%s' (mmkit_regions: %d)", what, (int)pid,
		       addr, q.found ? q.name : "(unmapped)", full, ret);
}

#endif
