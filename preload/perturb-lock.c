// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * libmmkit-perturb.so's wrappers of madvise(2), mlock(2), mlock2(2),
 * mlockall(2) and munlockall(2), and of mprotect(2) and pkey_mprotect(2),
 * which only note which blocks the program protected.  A large block on reference pages is a
 * file or device mapping, on which some advice fails (MADV_WIPEONFORK) and
 * mlock of refpage.ko's pages locks nothing: before such a call goes on
 * to the kernel, every large block it covers becomes anonymous memory with
 * the same bytes and the same protection.  After mlockall(MCL_FUTURE), until munlockall(), new
 * large blocks are glibc's (refpage_block() in perturb.c).
 *
 * A file of its own beside the allocator (perturb.c): what the kernel's
 * calls on memory need of the blocks, not how blocks are handed out.  It
 * reaches the allocator's table of large ranges only through
 * large_each_overlapping() (perturb.h).
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "perturb.h"
#include "refpage.h"
#include "shim.h"

/* mlockall(MCL_FUTURE) is in force: see refpage_block(). */
int locking_future;

/* The calls on memory the shim passes on once it has made its blocks anonymous. */
static struct {
	int (*madvise)(void *addr, size_t len, int advice);
	int (*mlock)(const void *addr, size_t len);
	int (*mlock2)(const void *addr, size_t len, unsigned int flags);
	int (*mlockall)(int flags);
	int (*munlockall)(void);
	int (*mprotect)(void *addr, size_t len, int prot);
	int (*pkey_mprotect)(void *addr, size_t len, int prot, int pkey);
} kernel;

/* Finds the calls to pass on; from setup(), once, inside the library (dlsym may allocate). */
void kernel_setup(void)
{
	kernel.madvise = dlsym(RTLD_NEXT, "madvise");
	kernel.mlock = dlsym(RTLD_NEXT, "mlock");
	kernel.mlock2 = dlsym(RTLD_NEXT, "mlock2");
	kernel.mlockall = dlsym(RTLD_NEXT, "mlockall");
	kernel.munlockall = dlsym(RTLD_NEXT, "munlockall");
	kernel.mprotect = dlsym(RTLD_NEXT, "mprotect");
	kernel.pkey_mprotect = dlsym(RTLD_NEXT, "pkey_mprotect");
	if (!kernel.madvise || !kernel.mlock || !kernel.mlock2 || !kernel.mlockall ||
	    !kernel.munlockall || !kernel.mprotect || !kernel.pkey_mprotect)
		abort();
}

/* A large range being made anonymous memory: its copy, and how much of that is in place. */
struct conversion {
	uintptr_t addr;
	unsigned char *copy;
	size_t moved;		/* bytes from the start */
};

/*
 * The bytes of the unreadable piece [@from, @from + @len) into @to,
 * without making the piece readable, where another thread's read would
 * not fault meanwhile (a guard page must): its pages move to a scratch
 * range with MREMAP_DONTUNMAP (Linux 5.13 and later for a file mapping),
 * which leaves the piece mapped and unreadable, and are read there.
 * *@held: that scratch range, the piece's own pages, to put back if the
 * piece is not replaced.  Where the kernel cannot (an older kernel,
 * refpage.ko's device mapping), the piece is made readable for the copy
 * only, as libmmkit-perturb(7) says.
 */
static int read_unreadable(void *from, size_t len, int prot, void *to, void **held)
{
	struct iovec dst = { to, len }, src = { from, len };
	void *scratch = mremap(from, len, len, MREMAP_MAYMOVE | MREMAP_DONTUNMAP);
	int ret = 0;

	if (scratch != MAP_FAILED) {
		*held = scratch;
		if (kernel.mprotect(scratch, len, PROT_READ))
			return -EACCES;
		memcpy(to, scratch, len);
		return kernel.mprotect(scratch, len, prot) ? -EACCES : 0;
	}
	if (kernel.mprotect(from, len, prot | PROT_READ))
		return -EACCES;
	if (process_vm_readv(getpid(), &dst, 1, &src, 1, 0) != (ssize_t)len)
		ret = -EFAULT;
	kernel.mprotect(from, len, prot);
	return ret;
}

/*
 * Copies @piece (one mapping of the range, one protection; pieces come in
 * address order) into its place in the copy, gives it the piece's
 * protection and moves it over the piece with mremap(2), which replaces
 * the old pages at once: the block never has a hole, nor a page with
 * another protection than the program gave it.  The copy goes through
 * process_vm_readv(2), which fails where memcpy would fault (the program
 * unmapped part of its block meanwhile); a piece the program made
 * unreadable is read with read_unreadable().
 */
static int convert_piece(struct mmkit_refpage *rp, const struct refpage_piece *piece, void *arg)
{
	struct conversion *c = arg;
	size_t len = piece->end - piece->start, off = piece->start - c->addr;
	struct iovec to = { c->copy + off, len }, from = { (void *)piece->start, len };
	void *held = NULL;
	int ret = 0;

	(void)rp;
	if (!(piece->prot & PROT_READ))
		ret = read_unreadable(from.iov_base, len, piece->prot, to.iov_base, &held);
	else if (process_vm_readv(getpid(), &to, 1, &from, 1, 0) != (ssize_t)len)
		ret = -EFAULT;
	if (!ret && piece->prot != (PROT_READ | PROT_WRITE) &&
	    kernel.mprotect(to.iov_base, len, piece->prot))
		ret = -EACCES;
	if (!ret && mremap(to.iov_base, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, from.iov_base) ==
	    MAP_FAILED)
		ret = -ENOMEM;
	/*
	 * Not replaced: the piece gets its own pages back, with its
	 * protection.  That cannot fail (the scratch range is ours and the
	 * same shape); were it to, the program's bytes would be lost unseen.
	 */
	if (held && ret && (kernel.mprotect(held, len, piece->prot) ||
			    mremap(held, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, from.iov_base) ==
			    MAP_FAILED))
		abort();
	else if (held && !ret)
		munmap(held, len);
	if (!ret)
		c->moved = off + len;
	return ret;
}

/*
 * Replaces large range @l with anonymous memory holding the same bytes
 * with the same protection, page for page (PROT_EXEC too), unless it is
 * anonymous memory already; called with table_lock held, so that the
 * block is neither freed nor resized under the copy.  Its pieces and
 * their protection are read from /proc/self/maps (libmmkit's walk of a
 * range, which takes no lock); with no descriptor left to read it, a
 * block the program never protected through libc is read-write all
 * through: one piece.  Should a step fail, the pieces not moved yet stay as they
 * are, the block whole: the next call tries again.  A write by another
 * thread to the block while it is copied may be lost.
 */
static void copy_to_anonymous(struct large *l)
{
	struct conversion c = { l->addr, NULL, 0 };
	struct refpage_piece whole = { l->addr, l->addr + l->cap, PROT_READ | PROT_WRITE, NULL, 0 };
	int saved = in_library, ret;
	struct mmkit_refpage *rp;
	void *mem;

	if (l->anon)
		return;
	/* Made with the block, which is not anonymous memory. */
	rp = get_refpage();
	mem = mmap(NULL, l->cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED)
		return;
	c.copy = mem;
	/* The walk's buffer is the library's: glibc's. */
	in_library = 1;
	ret = refpage__for_each_piece(rp, (void *)l->addr, l->cap, 0, convert_piece, &c);
	in_library = saved;
	if ((ret == -EMFILE || ret == -ENFILE) && !c.moved && !l->protected)
		ret = convert_piece(rp, &whole, &c);
	if (c.moved < l->cap)
		munmap(c.copy + c.moved, l->cap - c.moved);
	l->anon = !ret;
}

/*
 * Makes every large block overlapping [addr, addr + len) anonymous memory
 * (reference pages are a file or device mapping, where the call to come
 * fails or does nothing).  Costs the block's size in resident memory.
 */
static void make_anonymous(const void *addr, size_t len)
{
	uintptr_t start = (uintptr_t)addr, end = start + len < start ? UINTPTR_MAX : start + len;

	if (perturb_on())
		large_each_overlapping(start, end, copy_to_anonymous);
}

static void mark_protected(struct large *l)
{
	l->protected = 1;
}

/*
 * Before the kernel changes it, so that a conversion under table_lock
 * that saw the mark not set copies a block still read-write all through.
 */
static void note_protection(const void *addr, size_t len)
{
	uintptr_t start = (uintptr_t)addr, end = start + len < start ? UINTPTR_MAX : start + len;

	if (perturb_on())
		large_each_overlapping(start, end, mark_protected);
}

SHIM_EXPORT int mprotect(void *addr, size_t len, int prot)
{
	set_up();
	note_protection(addr, len);
	return kernel.mprotect(addr, len, prot);
}

SHIM_EXPORT int pkey_mprotect(void *addr, size_t len, int prot, int pkey)
{
	set_up();
	note_protection(addr, len);
	return kernel.pkey_mprotect(addr, len, prot, pkey);
}

/* Advice that works on reference pages as on anonymous memory. */
static int same_on_refpages(int advice)
{
	switch (advice) {
	case MADV_NORMAL:
	case MADV_RANDOM:
	case MADV_SEQUENTIAL:
	case MADV_WILLNEED:
	case MADV_DONTNEED:
	case MADV_COLD:
	case MADV_PAGEOUT:
	case MADV_POPULATE_READ:
	case MADV_POPULATE_WRITE:
		return 1;
	}
	return 0;
}

SHIM_EXPORT int madvise(void *addr, size_t len, int advice)
{
	set_up();
	if (!same_on_refpages(advice))
		make_anonymous(addr, len);
	return kernel.madvise(addr, len, advice);
}

SHIM_EXPORT int mlock(const void *addr, size_t len)
{
	set_up();
	make_anonymous(addr, len);
	return kernel.mlock(addr, len);
}

SHIM_EXPORT int mlock2(const void *addr, size_t len, unsigned int flags)
{
	set_up();
	make_anonymous(addr, len);
	return kernel.mlock2(addr, len, flags);
}

SHIM_EXPORT int mlockall(int flags)
{
	int ret;

	set_up();
	if (flags & MCL_CURRENT)
		make_anonymous(NULL, SIZE_MAX);
	ret = kernel.mlockall(flags);
	if (!ret && (flags & MCL_FUTURE) && perturb_on())
		__atomic_store_n(&locking_future, 1, __ATOMIC_RELAXED);
	return ret;
}

SHIM_EXPORT int munlockall(void)
{
	int ret;

	set_up();
	ret = kernel.munlockall();

	if (!ret && perturb_on())
		__atomic_store_n(&locking_future, 0, __ATOMIC_RELAXED);
	return ret;
}
