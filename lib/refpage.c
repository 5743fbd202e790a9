// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * Reference pages: memory whose never-written pages read as a pattern.
 *
 * The kernel proposal (refpage_create, 2021) was never merged, so the
 * backends build it from stock parts (struct refpage_backend, refpage.h):
 *
 *   kmod   /dev/refpage from refpage.ko: the kernel maps one shared page
 *          on read faults and copies it on write, with no chunks at all;
 *   memfd  a pattern-filled memfd mapped MAP_PRIVATE over the range: the
 *          kernel itself serves every fault, user or kernel mode, so the
 *          whole contract holds, but each chunk is one VMA and each first
 *          write is a file copy-on-write fault, slower than anonymous ones;
 *   uffd   userfaultfd resolved in the faulting thread: batches of pages
 *          per fault make it the fastest, but unprivileged it cannot serve
 *          faults taken by the kernel (contract item 8).
 *
 * The default is the first backend in that order that is available and
 * keeps the whole contract; uffd is only ever used when asked for.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "refpage.h"

#define REFPAGE_ENV		"MMKIT_REFPAGE_BACKEND"

#define PAGEMAP_PRESENT		(1ULL << 63)
#define PAGEMAP_SWAPPED		(1ULL << 62)
#define PAGEMAP_BATCH		512

/* In order of preference for the default. */
static const struct refpage_backend *const backends[] = {
	&refpage__kmod,
	&refpage__memfd,
	&refpage__uffd,
};

#define NBACKENDS	(sizeof(backends) / sizeof(backends[0]))

static const struct refpage_backend *backend_by_flag(unsigned int flag)
{
	size_t i;

	for (i = 0; i < NBACKENDS; i++)
		if (backends[i]->flag == flag)
			return backends[i];
	return NULL;
}

static const struct refpage_backend *backend_by_name(const char *name)
{
	size_t i;

	for (i = 0; i < NBACKENDS; i++)
		if (!strcmp(backends[i]->name, name))
			return backends[i];
	return NULL;
}

/*
 * The best fully correct backend, decided once per process: a backend the
 * kernel refused (no /dev/refpage, memfd_create failing) is not retried.
 */
static const struct refpage_backend *default_backend;
static int default_error;
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

static void choose_default(void)
{
	char why[MMKIT_REASON_MAX];
	size_t i;

	default_error = -ENOSYS;
	for (i = 0; i < NBACKENDS; i++) {
		if (backends[i]->contract != MMKIT_REFPAGE_FULL_CONTRACT)
			continue;
		default_error = backends[i]->available(why, sizeof(why));
		if (!default_error) {
			default_backend = backends[i];
			return;
		}
	}
}

/* The backend for @flags and the environment; -errno if it cannot work here. */
static int select_backend(unsigned int flags, const struct refpage_backend **out)
{
	const struct refpage_backend *be;
	char why[MMKIT_REASON_MAX];
	const char *env;
	int ret;

	if (flags) {
		be = backend_by_flag(flags);
		if (!be)
			return -EINVAL;
	} else {
		env = secure_getenv(REFPAGE_ENV);
		if (!env || !*env) {
			pthread_once(&default_once, choose_default);
			*out = default_backend;
			return default_backend ? 0 : default_error;
		}
		be = backend_by_name(env);
		if (!be)
			return -EINVAL;
	}
	ret = be->available(why, sizeof(why));
	if (ret)
		return ret;
	*out = be;
	return 0;
}

MMKIT_EXPORT int mmkit_refpage_backend_available(unsigned int flag, char *why, size_t why_len)
{
	const struct refpage_backend *be = backend_by_flag(flag);
	char buf[MMKIT_REASON_MAX];
	int ret;

	if (!be || (why_len && !why))
		return -EINVAL;
	ret = be->available(buf, sizeof(buf));
	if (why && why_len)
		snprintf(why, why_len, "%s", ret ? buf : "available");
	return ret;
}

MMKIT_EXPORT int mmkit_refpage_create(struct mmkit_refpage **rpp, const void *pattern,
				      size_t pattern_size, unsigned int flags)
{
	const struct refpage_backend *be;
	size_t page = sys_page_size(), i;
	struct mmkit_refpage *rp;
	void *mem;
	int ret;

	if (!rpp || !pattern || !pattern_size || pattern_size > page ||
	    (pattern_size & (pattern_size - 1)))
		return -EINVAL;
	ret = select_backend(flags, &be);
	if (ret)
		return ret;
	/* The pattern page, then the object: no malloc, which may touch errno. */
	ret = sys_mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0, &mem);
	if (ret)
		return ret;
	rp = (struct mmkit_refpage *)((unsigned char *)mem + page);
	rp->page = mem;
	for (i = 0; i < page; i += pattern_size)
		memcpy(rp->page + i, pattern, pattern_size);
	rp->backend = be;
	rp->fd = -1;
	pthread_mutex_init(&rp->lock, NULL);
	ret = be->create(rp);
	if (ret) {
		pthread_mutex_destroy(&rp->lock);
		sys_munmap(mem, 2 * page);
		return ret;
	}
	*rpp = rp;
	return 0;
}

MMKIT_EXPORT void mmkit_refpage_destroy(struct mmkit_refpage *rp)
{
	if (!rp)
		return;
	rp->backend->destroy(rp);
	pthread_mutex_destroy(&rp->lock);
	sys_munmap(rp->page, 2 * sys_page_size());
}

MMKIT_EXPORT int mmkit_refpage_map(struct mmkit_refpage *rp, size_t len, int prot, void **addr)
{
	size_t rounded = mmkit__page_round_up(len);

	/* Pattern memory is data: PROT_EXEC is refused (the memfd is sealed against it). */
	if (!rp || !addr || !len || rounded < len || (prot & ~(PROT_READ | PROT_WRITE)))
		return -EINVAL;
	return rp->backend->map(rp, rounded, prot, addr);
}

static int check_piece(struct mmkit_refpage *rp, const struct refpage_piece *piece, void *arg)
{
	(void)rp;
	(void)piece;
	(void)arg;
	return 0;
}

/* Checks the arguments of attach and unmap; the page-rounded length into *@rounded. */
static int check_user_range(const struct mmkit_refpage *rp, void *addr, size_t len,
			    size_t *rounded)
{
	*rounded = mmkit__page_round_up(len);
	if (!rp || !addr || *rounded < len)
		return -EINVAL;
	return mmkit__check_range(addr, *rounded, 1);
}

MMKIT_EXPORT int mmkit_refpage_attach(struct mmkit_refpage *rp, void *addr, size_t len)
{
	size_t rounded;
	int ret = check_user_range(rp, addr, len, &rounded);

	if (ret)
		return ret;
	/* Validate the whole range before changing any of it. */
	ret = refpage__for_each_piece(rp, addr, rounded, 1, check_piece, NULL);
	if (ret)
		return ret;
	return rp->backend->attach(rp, addr, rounded);
}

MMKIT_EXPORT int mmkit_refpage_unmap(struct mmkit_refpage *rp, void *addr, size_t len)
{
	size_t rounded;
	int ret = check_user_range(rp, addr, len, &rounded);

	return ret ? ret : rp->backend->unmap(rp, addr, rounded);
}

static int first_prot(struct mmkit_refpage *rp, const struct refpage_piece *piece, void *arg)
{
	(void)rp;
	*(int *)arg = piece->prot;
	/* Stop at the first piece. */
	return 1;
}

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

/*
 * A range is several mappings (memfd chunks, pieces split by mprotect or
 * attach) and mremap(2) moves one at a time; a userfaultfd registration
 * does not follow a move either.  So: map a fresh range of the new size,
 * move each piece of the old one to its place in it, then let the backend
 * serve the moved pieces.  If a move fails, the moved pieces go back.
 */
MMKIT_EXPORT int mmkit_refpage_remap(struct mmkit_refpage *rp, void *old_addr, size_t old_len,
				     size_t new_len, void **new_addr)
{
	size_t old_rounded = mmkit__page_round_up(old_len);
	size_t new_rounded = mmkit__page_round_up(new_len);
	size_t keep = old_rounded < new_rounded ? old_rounded : new_rounded;
	int prot = PROT_NONE, ret;
	uintptr_t done;
	void *dst;

	if (!rp || !old_addr || !new_addr || !new_len || old_rounded < old_len ||
	    new_rounded < new_len)
		return -EINVAL;
	ret = mmkit__check_range(old_addr, old_rounded, 1);
	if (ret)
		return ret;
	ret = refpage__for_each_piece(rp, old_addr, old_rounded, 0, check_piece, NULL);
	if (ret)
		return ret;
	refpage__for_each_piece(rp, old_addr, old_rounded, 0, first_prot, &prot);
	ret = rp->backend->map(rp, new_rounded, prot, &dst);
	if (ret)
		return ret;
	ret = refpage__move(rp, old_addr, keep, dst, &done);
	if (!ret && rp->backend->rebind)
		ret = rp->backend->rebind(rp, old_addr, dst, keep);
	if (ret) {
		if (done > (uintptr_t)old_addr)
			refpage__move(rp, dst, done - (uintptr_t)old_addr, old_addr, &done);
		rp->backend->unmap(rp, dst, new_rounded);
		return ret;
	}
	/* Only the tail that was not moved: the rest of the old range is free for others now. */
	if (old_rounded > keep)
		rp->backend->unmap(rp, (unsigned char *)old_addr + keep, old_rounded - keep);
	*new_addr = dst;
	return 0;
}

MMKIT_EXPORT const char *mmkit_refpage_backend(const struct mmkit_refpage *rp)
{
	return rp ? rp->backend->name : NULL;
}

MMKIT_EXPORT unsigned int mmkit_refpage_contract(const struct mmkit_refpage *rp)
{
	return rp ? rp->backend->contract : 0;
}

/* Parses one /proc/self/maps line into @piece; @anon: private anonymous memory. */
static int parse_maps_line(const char *line, struct refpage_piece *piece, int *anon)
{
	unsigned long start, end, off, inode;
	unsigned int major, minor;
	char perms[5];
	int pos = 0;
	const char *path;

	if (sscanf(line, "%lx-%lx %4s %lx %x:%x %lu%n", &start, &end, perms, &off, &major,
		   &minor, &inode, &pos) < 7 || !pos)
		return -EIO;
	/* Not " %n": that would skip the newline of a line without a path. */
	for (path = line + pos; *path == ' ' || *path == '\t'; path++)
		;
	piece->start = start;
	piece->end = end;
	piece->prot = (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) |
		      (perms[2] == 'x' ? PROT_EXEC : 0);
	/* The heap and named anonymous memory are anonymous too; [stack] and [vdso] are not ours. */
	*anon = perms[3] == 'p' && !inode &&
		(*path == '\n' || !*path || !strncmp(path, "[heap]", 6) ||
		 !strncmp(path, "[anon:", 6));
	return 0;
}

int refpage__for_each_piece(struct mmkit_refpage *rp, void *addr, size_t len,
			    int anon_only, refpage_piece_fn fn, void *arg)
{
	uintptr_t cursor = (uintptr_t)addr, end = cursor + len;
	struct refpage_piece piece;
	char *buf, *line;
	int anon, ret = 0;
	ssize_t n;

	n = sys_read_file("/proc/self/maps", &buf);
	if (n < 0)
		return (int)n;
	for (line = buf; line && *line && cursor < end; line = strchr(line, '\n'),
	     line = line ? line + 1 : NULL) {
		ret = parse_maps_line(line, &piece, &anon);
		if (ret)
			break;
		if (piece.end <= cursor)
			continue;
		/* A hole, like mprotect(2) and madvise(2) report it. */
		if (piece.start > cursor) {
			ret = -ENOMEM;
			break;
		}
		if (anon_only && !anon) {
			ret = -EINVAL;
			break;
		}
		piece.start = cursor;
		if (piece.end > end)
			piece.end = end;
		cursor = piece.end;
		ret = fn(rp, &piece, arg);
		if (ret)
			break;
	}
	free(buf);
	if (ret)
		return ret < 0 ? ret : 0;
	return cursor < end ? -ENOMEM : 0;
}

/*
 * Which of @count pages from @addr are present or swapped out, from
 * /proc/self/pagemap; fd -1: from mincore(2), which cannot see swapped-out
 * pages and is only used when no swap is on.
 */
static int pages_present(int fd, uintptr_t addr, size_t count, unsigned char *present)
{
	unsigned long long entries[PAGEMAP_BATCH];
	size_t page = sys_page_size(), i;
	ssize_t n;
	int ret;

	if (fd < 0) {
		ret = sys_mincore((void *)addr, count * page, present);
		for (i = 0; !ret && i < count; i++)
			present[i] &= 1;
		return ret;
	}
	n = sys_pread(fd, entries, count * sizeof(entries[0]),
		      (off_t)(addr / page * sizeof(entries[0])));
	if (n != (ssize_t)(count * sizeof(entries[0])))
		return n < 0 ? (int)n : -EIO;
	for (i = 0; i < count; i++)
		present[i] = !!(entries[i] & (PAGEMAP_PRESENT | PAGEMAP_SWAPPED));
	return 0;
}

/*
 * A process that changed its credentials (a daemon dropping root) is not
 * dumpable and may not read its own pagemap: then mincore(2), if no swap
 * could hold a page it would miss.
 */
static int open_pagemap(int *fd)
{
	char *swaps, *nl;
	ssize_t n;
	int swap_on;

	*fd = sys_open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC, 0);
	if (*fd >= 0)
		return 0;
	if (*fd != -EACCES && *fd != -EPERM)
		return *fd;
	n = sys_read_file("/proc/swaps", &swaps);
	if (n < 0)
		return *fd;
	/* A header line and nothing after it: no swap. */
	nl = strchr(swaps, '\n');
	swap_on = !nl || nl[1];
	free(swaps);
	if (swap_on)
		return *fd;
	*fd = -1;
	return 0;
}

int refpage__for_each_present_run(struct mmkit_refpage *rp, const struct refpage_piece *piece,
				  refpage_piece_fn fn, void *arg)
{
	size_t page = sys_page_size(), i, count;
	unsigned char present[PAGEMAP_BATCH];
	struct refpage_piece run = { 0, 0, piece->prot };
	uintptr_t addr = piece->start;
	int fd, ret = 0;

	ret = open_pagemap(&fd);
	if (ret)
		return ret;
	while (addr < piece->end && !ret) {
		count = (piece->end - addr) / page;
		if (count > PAGEMAP_BATCH)
			count = PAGEMAP_BATCH;
		ret = pages_present(fd, addr, count, present);
		for (i = 0; i < count && !ret; i++, addr += page) {
			if (present[i]) {
				if (run.end != addr)
					run.start = addr;
				run.end = addr + page;
				continue;
			}
			if (run.end == addr && run.start < run.end)
				ret = fn(rp, &run, arg);
			run.start = run.end = 0;
		}
	}
	if (!ret && run.start < run.end)
		ret = fn(rp, &run, arg);
	if (fd >= 0)
		sys_close(fd);
	return ret;
}

/* "1-10", "1-7,9,10": the items of @mask, for people. */
static void format_items(unsigned int mask, char *buf, size_t len)
{
	size_t used = 0;
	int n, first;

	buf[0] = '\0';
	for (n = 1; n <= 10; n++) {
		if (!(mask & MMKIT_REFPAGE_ITEM(n)))
			continue;
		first = n;
		while (n < 10 && (mask & MMKIT_REFPAGE_ITEM(n + 1)))
			n++;
		if (n - first >= 2)
			used += snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "", first, n);
		else if (n > first)
			used += snprintf(buf + used, len - used, "%s%d,%d", used ? "," : "", first, n);
		else
			used += snprintf(buf + used, len - used, "%s%d", used ? "," : "", n);
		if (used >= len)
			return;
	}
}

/* "uffd keeps items 1-7,9,10, not 8: ..." */
static void describe(const struct refpage_backend *be, char *buf, size_t len)
{
	char items[32];

	format_items(be->contract, items, sizeof(items));
	snprintf(buf, len, "%s keeps items %s%s", be->name, items,
		 be->contract & MMKIT_REFPAGE_ITEM(8) ? "" :
		 ", not 8: syscalls on untouched pages EFAULT");
}

void mmkit__probe_refpage(struct mmkit_feature *f)
{
	char kmod_why[64], why[128], chosen[96], other[160];
	const char *env = secure_getenv(REFPAGE_ENV);
	const struct refpage_backend *be;
	int ret;

	refpage__kmod.available(kmod_why, sizeof(kmod_why));
	ret = select_backend(0, &be);
	if (!ret && be == &refpage__uffd) {
		describe(&refpage__memfd, other, sizeof(other));
	} else if (refpage__uffd.available(why, sizeof(why))) {
		snprintf(other, sizeof(other), "uffd: %s", why);
	} else {
		describe(&refpage__uffd, why, sizeof(why));
		snprintf(other, sizeof(other), "opt-in %s", why);
	}
	if (ret) {
		mmkit__feature_set(f, MMKIT_STATUS_UNSUPPORTED, "none", "%s%s: %s; kmod: %s; %s",
				   env && *env ? REFPAGE_ENV "=" : "no backend",
				   env && *env ? env : "", strerror(-ret), kmod_why, other);
		return;
	}
	describe(be, chosen, sizeof(chosen));
	mmkit__feature_set(f, be == &refpage__kmod ? MMKIT_STATUS_NATIVE : MMKIT_STATUS_FALLBACK,
			   be->name, "%s%s; kmod: %s; %s", env && *env ? REFPAGE_ENV ": " : "",
			   chosen, kmod_why, other);
}
