// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The address ranges the reference-page backends work on: the mappings
 * that make up a range (from /proc/self/maps), the pages of one that hold
 * data (from /proc/self/pagemap), and moving them with mremap(2).
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>

#include "procfs.h"
#include "refpage.h"

struct move {
	intptr_t delta;
	uintptr_t done;		/* moved up to here */
};

static int move_piece(struct mmkit_refpage *rp, const struct refpage_piece *piece, void *arg)
{
	struct move *mv = arg;
	size_t len = piece->end - piece->start;
	void *moved;
	int ret;

	(void)rp;
	ret = sys_mremap((void *)piece->start, len, len, MREMAP_MAYMOVE | MREMAP_FIXED,
			 (void *)(piece->start + mv->delta), &moved);
	if (!ret)
		mv->done = piece->end;
	return ret;
}

int refpage__move(struct mmkit_refpage *rp, void *from, size_t len, void *to, uintptr_t *done)
{
	struct move mv = { (intptr_t)((uintptr_t)to - (uintptr_t)from), (uintptr_t)from };
	int ret = refpage__for_each_piece(rp, from, len, 0, move_piece, &mv);

	*done = mv.done;
	return ret;
}

/* Private anonymous memory: the heap and named anonymous memory too; [stack] and [vdso] are not ours. */
static int private_anon(const struct mmkit__vma *v)
{
	return v->perms[3] == 'p' && !v->inode &&
	       (!v->path_len || mmkit__vma_path_is(v, "[heap]") ||
		(v->path_len > 6 && !memcmp(v->path, "[anon:", 6)));
}

int refpage__for_each_piece(struct mmkit_refpage *rp, void *addr, size_t len,
			    int anon_only, refpage_piece_fn fn, void *arg)
{
	uintptr_t cursor = (uintptr_t)addr, end = cursor + len;
	struct refpage_piece piece;
	struct mmkit__lines maps;
	const char *line, *eol;
	struct mmkit__vma v;
	int ret, more = 0;

	ret = mmkit__lines_open(&maps, AT_FDCWD, "/proc/self/maps");
	if (ret)
		return ret;
	while (!ret && cursor < end && (more = mmkit__lines_next(&maps, &line, &eol)) == 1) {
		if (mmkit__vma_parse(line, eol, &v))
			ret = -EIO;
		else if (v.end <= cursor)
			continue;
		/* A hole, like mprotect(2) and madvise(2) report it. */
		else if (v.start > cursor)
			ret = -ENOMEM;
		else if (anon_only && !private_anon(&v))
			ret = -EINVAL;
		if (ret)
			break;
		piece.start = cursor;
		piece.end = v.end < end ? v.end : end;
		piece.prot = (v.perms[0] == 'r' ? PROT_READ : 0) |
			     (v.perms[1] == 'w' ? PROT_WRITE : 0) |
			     (v.perms[2] == 'x' ? PROT_EXEC : 0);
		piece.name_len = 0;
		if (v.path_len > 7 && !memcmp(v.path, "[anon:", 6) && v.path[v.path_len - 1] == ']') {
			piece.name = v.path + 6;
			piece.name_len = v.path_len - 7;
		}
		cursor = piece.end;
		/* A positive return stops the walk early, successfully. */
		ret = fn(rp, &piece, arg);
	}
	mmkit__lines_close(&maps);
	if (ret)
		return ret < 0 ? ret : 0;
	if (more < 0)
		return more;
	return cursor < end ? -ENOMEM : 0;
}

/*
 * A process that changed its credentials (a daemon dropping root) is not
 * dumpable and may not read its own pagemap: then mincore(2) (fd -1), if
 * no swap could hold a page it would miss.
 */
static int open_pagemap(int *fd)
{
	struct mmkit__lines swaps;
	const char *line, *eol;
	int ret;

	*fd = sys_open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC, 0);
	if (*fd >= 0)
		return 0;
	if (*fd != -EACCES && *fd != -EPERM)
		return *fd;
	if (mmkit__lines_open(&swaps, AT_FDCWD, "/proc/swaps"))
		return *fd;
	/* A header line and nothing after it: no swap. */
	ret = mmkit__lines_next(&swaps, &line, &eol);
	if (ret == 1)
		ret = mmkit__lines_next(&swaps, &line, &eol);
	mmkit__lines_close(&swaps);
	if (ret)
		return *fd;
	*fd = -1;
	return 0;
}

struct present_walk {
	struct mmkit_refpage *rp;
	refpage_piece_fn fn;
	void *arg;
	int prot;
};

static int present_run(uint64_t start, uint64_t end, enum mmkit__page_state state, void *arg)
{
	struct present_walk *w = arg;
	struct refpage_piece run = { .start = (uintptr_t)start, .end = (uintptr_t)end,
				     .prot = w->prot };

	return state == MMKIT__PAGE_ABSENT ? 0 : w->fn(w->rp, &run, w->arg);
}

int refpage__for_each_present_run(struct mmkit_refpage *rp, const struct refpage_piece *piece,
				  refpage_piece_fn fn, void *arg)
{
	struct present_walk w = { rp, fn, arg, piece->prot };
	int fd, ret;

	ret = open_pagemap(&fd);
	if (ret)
		return ret;
	ret = mmkit__pagemap_walk(fd, piece->start, piece->end, present_run, &w);
	if (fd >= 0)
		sys_close(fd);
	return ret;
}
