// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * What the memfd, kmod and syscall backends share: a file whose every page holds
 * the pattern, mapped MAP_PRIVATE and MAP_FIXED chunk by chunk over the
 * range.  Reads map the file's shared pages, the first write to a page
 * copies it (a private file-backed copy on write), MADV_DONTNEED drops the
 * copy so the page reads as the pattern again, and fork(2) and the
 * kernel's own accesses (read(2) into a page nobody touched) need nothing
 * from user space.
 *
 * Each chunk is one VMA, counted against vm.max_map_count (65530 by
 * default), and each VMA costs a mmap and a munmap.  Every chunk maps the
 * file from offset 0, so adjacent chunks never merge into one VMA (the
 * kernel merges only mappings whose file offsets continue).  How big a
 * chunk is, is the backend's: the memfd's pattern file is at most a small
 * window (refpage-memfd.c); refpage.ko's descriptor is the pattern at
 * every offset, so one mapping serves any range (REFPAGE_CHUNK_UNLIMITED).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "refpage.h"

void refpage__file_destroy(struct mmkit_refpage *rp)
{
	/* Live mappings hold their own reference to the file and keep working. */
	sys_close(rp->fd);
}

/*
 * A tagged reference page's memfd or refpage_create() descriptor is mapped
 * PROT_MTE everywhere: the private copies then keep the tags, and accesses
 * are checked.  refpage.ko tags its mappings itself: the kernel refuses
 * PROT_MTE for device files.
 */
static int file_prot_mte(const struct mmkit_refpage *rp)
{
	return (rp->flags & MMKIT_REFPAGE_TAGGED) &&
	       (rp->backend == &refpage__memfd || rp->backend == &refpage__syscall) ?
	       MMKIT_PROT_MTE : 0;
}

int refpage__file_map(struct mmkit_refpage *rp, size_t len, int prot, size_t chunk,
		      void **addr)
{
	size_t off, n;
	void *mem, *mapped;
	int ret;

	prot |= file_prot_mte(rp);
	/*
	 * One mapping of the whole length places the range and serves its
	 * first chunk; what lies past the end of the file is covered by the
	 * other chunks before anyone can touch it.
	 */
	ret = sys_mmap(NULL, len, prot, MAP_PRIVATE, rp->fd, 0, &mem);
	if (ret)
		return ret;
	for (off = chunk; off < len && !ret; off += n) {
		n = len - off < chunk ? len - off : chunk;
		ret = sys_mmap((unsigned char *)mem + off, n, prot, MAP_PRIVATE | MAP_FIXED,
			       rp->fd, 0, &mapped);
	}
	if (ret) {
		sys_munmap(mem, len);
		return ret;
	}
	*addr = mem;
	return 0;
}

/* Every offset of the descriptor is the pattern: one mapping per range. */
int refpage__file_map_whole(struct mmkit_refpage *rp, size_t len, int prot, void **addr)
{
	return refpage__file_map(rp, len, prot, REFPAGE_CHUNK_UNLIMITED, addr);
}

/* Copies a run of present pages to the new mapping, @arg bytes away. */
static int copy_run(struct mmkit_refpage *rp, const struct refpage_piece *run, void *arg)
{
	size_t len = run->end - run->start;
	int ret = 0;

	(void)rp;
	if (!(run->prot & PROT_READ))
		ret = sys_mprotect((void *)run->start, len, PROT_READ);
	if (!ret)
		memcpy((void *)(run->start + *(intptr_t *)arg), (void *)run->start, len);
	return ret;
}

/*
 * The name the kernel gave the piece, in the registry now (the kernel
 * names no file mapping): names in the registry stay on their own, since
 * the range is nameable throughout.
 */
static int keep_name(const struct refpage_piece *piece)
{
	char name[MMKIT_NAME_MAX];

	if (!piece->name_len || piece->name_len >= sizeof(name))
		return 0;
	memcpy(name, piece->name, piece->name_len);
	name[piece->name_len] = '\0';
	return mmkit_name((void *)piece->start, piece->end - piece->start, name);
}

/*
 * Builds the pattern mapping elsewhere, copies the present pages into it,
 * then moves it over the piece chunk by chunk: mremap(2) replaces the old
 * pages atomically, so the range never has a hole another thread's mmap
 * could take, and if a move fails every page still holds its data.  Once
 * done, the whole piece is the memfd's, so MADV_DONTNEED on a kept page
 * brings the pattern back too; its name is kept.
 */
static int attach_piece(struct mmkit_refpage *rp, const struct refpage_piece *piece,
			void *arg)
{
	size_t len = piece->end - piece->start;
	uintptr_t done;
	intptr_t delta;
	void *fresh;
	int ret;

	(void)arg;
	ret = rp->backend->map(rp, len, PROT_READ | PROT_WRITE, &fresh);
	if (ret)
		return ret;
	delta = (intptr_t)((uintptr_t)fresh - piece->start);
	ret = refpage__for_each_present_run(rp, piece, copy_run, &delta);
	if (!ret && piece->prot != (PROT_READ | PROT_WRITE))
		ret = sys_mprotect(fresh, len, piece->prot);
	if (!ret)
		ret = refpage__move(rp, fresh, len, (void *)piece->start, &done);
	else
		done = (uintptr_t)fresh;
	if (ret) {
		sys_munmap((void *)done, (uintptr_t)fresh + len - done);
		sys_mprotect((void *)piece->start, len, piece->prot);
		return ret;
	}
	return keep_name(piece);
}

int refpage__file_attach(struct mmkit_refpage *rp, void *addr, size_t len)
{
	return refpage__for_each_piece(rp, addr, len, 1, attach_piece, NULL);
}

int refpage__file_unmap(struct mmkit_refpage *rp, void *addr, size_t len)
{
	(void)rp;
	return sys_munmap(addr, len);
}
