// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The pagemap walker over a pagemap-like file made from the input: its
 * first four bytes choose the range walked (first page, page count), the
 * rest are the 64-bit entries.  The runs must tile the range in order,
 * each in one valid state, and agree with the entries; a file too short
 * for the range is an error, never a run made up.
 */
#include <errno.h>
#include <string.h>

#include "procfs.h"
#include "sys.h"
#include "fuzz.h"

struct walk {
	uint64_t next;
	const uint8_t *entries;
	size_t nentries;
	size_t page;
};

static int check_run(uint64_t start, uint64_t end, enum mmkit__page_state state, void *arg)
{
	struct walk *w = arg;

	F_CHECK(start == w->next && end > start);
	F_CHECK(start % w->page == 0 && end % w->page == 0);
	F_CHECK(state == MMKIT__PAGE_ABSENT || state == MMKIT__PAGE_PRESENT ||
		state == MMKIT__PAGE_SWAPPED);
	for (uint64_t a = start; a < end; a += w->page) {
		uint64_t e;

		F_CHECK(a / w->page < w->nentries);
		memcpy(&e, w->entries + a / w->page * 8, 8);
		F_CHECK(state == (e >> 63 ? MMKIT__PAGE_PRESENT :
				  e >> 62 & 1 ? MMKIT__PAGE_SWAPPED : MMKIT__PAGE_ABSENT));
	}
	w->next = end;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct walk w = { 0 };
	uint64_t start, end;
	int fd, ret;

	if (size < 4)
		return 0;
	w.page = sys_page_size();
	start = (uint64_t)(data[0] | data[1] << 8) % 2048 * w.page;
	end = start + (uint64_t)(data[2] | data[3] << 8) % 2048 * w.page;
	w.entries = data + 4;
	w.nentries = (size - 4) / 8;
	w.next = start;
	fd = f_memfd("fuzz-pagemap", data + 4, size - 4);
	if (fd < 0)
		return 0;
	ret = mmkit__pagemap_walk(fd, start, end, check_run, &w);
	if (ret == 0)
		F_CHECK(w.next == end);
	else
		F_CHECK(ret == -EIO && end / w.page > w.nentries);
	close(fd);
	return 0;
}
