/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * Reference pages: what the front end (refpage.c), its backends
 * (refpage-syscall.c, refpage-kmod.c, refpage-memfd.c, refpage-uffd.c)
 * and the layers below them (refpage-file.c, refpage-range.c) share.  Calls go one way: front
 * end, backends, layers.  Not installed.
 */
#ifndef MMKIT_REFPAGE_H
#define MMKIT_REFPAGE_H

#include <pthread.h>

#include "internal.h"
#include "mte.h"

struct mmkit_refpage;
/* memfd: the pattern file every object of one pattern and flags shares (refpage-memfd.c). */
struct refpage_pattern_file;

struct refpage_backend {
	const char *name;
	unsigned int flag;		/* MMKIT_REFPAGE_BACKEND_* */
	unsigned int contract;		/* MMKIT_REFPAGE_ITEM() mask */
	/*
	 * Whether it serves MMKIT_REFPAGE_TAGGED where MTE is available: 0,
	 * else -EOPNOTSUPP and why into @why.  NULL: it always does.
	 */
	int (*can_tag)(char *why, size_t len);
	/* 0 if usable by this process, else -errno and why into @why. */
	int (*available)(char *why, size_t len);
	int (*create)(struct mmkit_refpage *rp);
	void (*destroy)(struct mmkit_refpage *rp);
	int (*map)(struct mmkit_refpage *rp, size_t len, int prot, void **addr);
	/* The range is page aligned, private, anonymous and fully mapped. */
	int (*attach)(struct mmkit_refpage *rp, void *addr, size_t len);
	int (*unmap)(struct mmkit_refpage *rp, void *addr, size_t len);
	/*
	 * After mmkit_refpage_remap() moved [from, from + len) to @to: make
	 * the moved pieces serve the pattern again and forget @from.
	 */
	int (*rebind)(struct mmkit_refpage *rp, void *from, void *to, size_t len);
};

struct mmkit_refpage {
	const struct refpage_backend *backend;
	/* One page of the repeated pattern. */
	unsigned char *page;
	/*
	 * kmod, syscall: the refpage.ko or refpage_create(2) descriptor,
	 * whose every offset is the pattern.  memfd: the descriptor number of
	 * @file, which owns it (the file behind it is replaced as it grows).
	 */
	int fd;
	struct refpage_pattern_file *file;
	/* uffd: the pattern repeated over the largest batch, for UFFDIO_COPY. */
	unsigned char *batch_src;
	/* MMKIT_REFPAGE_TAGGED or 0. */
	unsigned int flags;
	/*
	 * Tagged: the MTE tag of each 16-byte granule of the page (the
	 * pattern's, repeated).  The object has the rest of its page for it.
	 */
	unsigned char tags[];
};

extern const struct refpage_backend refpage__syscall;
extern const struct refpage_backend refpage__kmod;
extern const struct refpage_backend refpage__memfd;
extern const struct refpage_backend refpage__uffd;

/* The largest memfd pattern file, the page cache one pattern costs at most. */
#define REFPAGE_MEMFD_WINDOW_MAX	(4UL << 20)
/* The page cache the memfd pattern files of this process hold (refpage-memfd.c). */
void refpage__memfd_stats(unsigned long long *files, unsigned long long *bytes);

/*
 * Mapping a file whose first @chunk bytes all hold the pattern,
 * MAP_PRIVATE, one mapping of offset 0 per @chunk bytes of the range:
 * shared by the memfd, kmod and syscall backends (refpage-file.c).
 * Attach maps through the backend's map.
 */
#define REFPAGE_CHUNK_UNLIMITED	SIZE_MAX
void refpage__file_destroy(struct mmkit_refpage *rp);
int refpage__file_map(struct mmkit_refpage *rp, size_t len, int prot, size_t chunk,
		      void **addr);
/* The map of a descriptor that is the pattern at every offset (kmod, syscall). */
int refpage__file_map_whole(struct mmkit_refpage *rp, size_t len, int prot, void **addr);
int refpage__file_attach(struct mmkit_refpage *rp, void *addr, size_t len);
int refpage__file_unmap(struct mmkit_refpage *rp, void *addr, size_t len);

/*
 * A page-aligned piece of one mapping, with its protection and the name
 * the kernel gave it ("NAME" of [anon:NAME], name_len bytes, 0 for none;
 * valid during the callback only).
 */
struct refpage_piece {
	uintptr_t start;
	uintptr_t end;
	int prot;
	const char *name;
	size_t name_len;
};

typedef int (*refpage_piece_fn)(struct mmkit_refpage *rp, const struct refpage_piece *piece,
				void *arg);

/* Walking and moving the mappings of a range (refpage-range.c). */

/*
 * Calls @fn for each mapping's share of [addr, addr + len), in order,
 * until it returns non-zero (a positive value stops the walk with 0).
 * -ENOMEM if part of the range is unmapped; -EINVAL if a piece is not
 * private anonymous memory when @anon_only.
 */
int refpage__for_each_piece(struct mmkit_refpage *rp, void *addr, size_t len,
			    int anon_only, refpage_piece_fn fn, void *arg);
/* Calls @fn for each run of pages of @piece that are present or swapped out. */
int refpage__for_each_present_run(struct mmkit_refpage *rp, const struct refpage_piece *piece,
				  refpage_piece_fn fn, void *arg);
/*
 * Moves each mapping of [from, from + len) to its place in [to, to + len)
 * with mremap(2), replacing what is there.  @done: how far it got.
 */
int refpage__move(struct mmkit_refpage *rp, void *from, size_t len, void *to, uintptr_t *done);

#endif /* MMKIT_REFPAGE_H */
