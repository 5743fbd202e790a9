/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * What the stress programs share: each runs for the seconds given as its
 * argument, checks data as it goes and leaks at the end, prints
 * "NAME: N iterations" and exits like a test (0, 1, 77).
 */
#ifndef MMKIT_STRESS_H
#define MMKIT_STRESS_H

#include <stdint.h>
#include <time.h>

#include "harness.h"

static double stress_deadline;

/* Reads the seconds to run from argv[1]. */
static inline void stress_start(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 10;

	if (secs <= 0)
		T_FAIL("usage: %s SECONDS", argv[0]);
	stress_deadline = t_now() + secs;
}

static inline int stress_running(void)
{
	return t_now() < stress_deadline;
}

/* xorshift: each thread its own state. */
static inline uint32_t stress_rand(uint32_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

#endif /* MMKIT_STRESS_H */
