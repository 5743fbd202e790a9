// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * mmkit__ranges_set() against a reference model.  The input is a sequence
 * of operations, three bytes each: start, length and name (0 clears, else
 * one of a few names) over an address space of 256 units.  The model keeps
 * one name per unit; after each operation the array must be sorted, not
 * overlapping, without empty entries or touching neighbours of one name,
 * and say for every unit what the model says.  The entries outside the
 * span the call says it changed must be the ones before it: the registry
 * copies only that span to the memfd readers read.
 */
#include <string.h>

#include "names.h"
#include "fuzz.h"

#define UNITS	256
#define NAMES	4

static const char *const names[NAMES] = { NULL, "a", "b", "a-longer-name" };

static void check(const struct mmkit__name_range *e, size_t n, const int model[UNITS])
{
	int seen[UNITS] = { 0 };

	for (size_t i = 0; i < n; i++) {
		F_CHECK(e[i].start < e[i].end && e[i].end <= UNITS);
		F_CHECK(memchr(e[i].name, '\0', sizeof(e[i].name)));
		if (i) {
			F_CHECK(e[i - 1].end <= e[i].start);
			F_CHECK(e[i - 1].end < e[i].start || strcmp(e[i - 1].name, e[i].name));
		}
		for (uint64_t u = e[i].start; u < e[i].end; u++) {
			int k = 1;

			while (k < NAMES && strcmp(names[k], e[i].name))
				k++;
			F_CHECK(k < NAMES);
			seen[u] = k;
		}
	}
	F_CHECK(!memcmp(seen, model, sizeof(seen)));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* Never more entries than units; room for the 2 a call may add. */
	static struct mmkit__name_range e[UNITS + 2], before[UNITS + 2];
	int model[UNITS] = { 0 };
	size_t n = 0, was, first, last;

	for (size_t off = 0; off + 3 <= size; off += 3) {
		uint64_t start = data[off], end = start + 1 + data[off + 1] % (UNITS - start);
		int k = data[off + 2] % NAMES;

		memcpy(before, e, sizeof(e));
		was = n;
		first = mmkit__ranges_set(e, &n, start, end, names[k], &last);
		F_CHECK(first <= last && last <= n);
		F_CHECK(!memcmp(e, before, (first < n ? first : n) * sizeof(*e)));
		/* Past the span, a count unchanged means entries unmoved. */
		if (last < n) {
			F_CHECK(n == was);
			F_CHECK(!memcmp(&e[last], &before[last], (n - last) * sizeof(*e)));
		}
		for (uint64_t u = start; u < end; u++)
			model[u] = k;
		F_CHECK(n <= UNITS);
		check(e, n, model);
	}
	return 0;
}
