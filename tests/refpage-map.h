/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/* The reference-page tests' one way to map a range, failing the test if it cannot. */
#ifndef MMKIT_TEST_REFPAGE_MAP_H
#define MMKIT_TEST_REFPAGE_MAP_H

#include <string.h>

#include "mmkit.h"
#include "harness.h"

static inline unsigned char *map(struct mmkit_refpage *rp, size_t len, int prot)
{
	void *p;
	int ret = mmkit_refpage_map(rp, len, prot, &p);

	if (ret)
		T_FAIL("mmkit_refpage_map(%zu): %s", len, strerror(-ret));
	return p;
}

#endif /* MMKIT_TEST_REFPAGE_MAP_H */
