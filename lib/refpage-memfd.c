// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The memfd backend: a memfd holding the pattern, mapped over the range
 * by refpage-file.c, one mapping of the file per window of the range.
 *
 * What it costs is the file's page cache (Shmem), so the file is small
 * and shared: every object of one pattern and flags in a process uses one
 * pattern file (a reference-counted table under files_lock), which grows
 * from WINDOW_MIN with the largest range asked for, up to WINDOW_MAX.  A
 * range larger than the window is tiled by more mappings of it, each one
 * VMA, which never merge (they all map offset 0): with a 4 MiB window, the
 * default vm.max_map_count of 65,530 reaches 255 GiB of ranges if nothing
 * else is mapped, and 128 GiB takes 32,768 of it.
 *
 * The file is sealed.  Unsealed, a process that may open this one's
 * descriptors (/proc/PID/fd/N: the same user) could write it, and the
 * untouched pages of every object of the pattern would read its bytes, or
 * truncate it, and the next read of an untouched page would be SIGBUS.
 * A sealed file cannot grow, so each growth makes a new file of the size
 * wanted (file_make()): sealed against shrinking and growing, filled with
 * pwritev(2) (not through a mapping, so filling it adds nothing to the
 * resident set), tagged, sealed against writes (F_SEAL_WRITE: private
 * mappings stay writable, copy on write), then read back and compared
 * with the pattern, which catches a peer that opened it and wrote it
 * before the seals.  dup3(2) then puts it at the descriptor number every
 * object of the pattern maps, atomically: a map running meanwhile maps
 * the old file or the new one, each whole up to the size it read.  The
 * old file lives on in the mappings made of it, and its page cache with
 * it: while ranges mapped before a growth live, a pattern can cost up to
 * twice its window.  After fork(2) parent and child each grow the files
 * in their own descriptor table (files_lock is not held across the fork).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "procfs.h"
#include "refpage.h"

#define WINDOW_MIN		(64UL << 10)
#define WINDOW_MAX		REFPAGE_MEMFD_WINDOW_MAX
/* Pages written by one pwritev(2): the iovec array lives on the stack. */
#define FILL_IOV		64
/* Bytes read back by one pread(2) when a file is checked: a stack buffer. */
#define CHECK_BYTES		4096
/* What seals a pattern file once filled: nobody writes, shrinks, grows or unseals it. */
#define FILE_SEALS		(F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)

struct refpage_pattern_file {
	struct refpage_pattern_file *next;
	unsigned long refs;
	/* A sealed memfd, replaced (dup3) by a larger one at each growth. */
	int fd;
	/* Bytes of pattern in it: read without files_lock, set under it after the dup3. */
	size_t size;
	/* MMKIT_REFPAGE_TAGGED or 0. */
	unsigned int flags;
	/* The pattern page: the first page of this allocation, before this header. */
	unsigned char *page;
	/* Tagged: the tag of each granule of the page. */
	unsigned char tags[];
};

static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static struct refpage_pattern_file *files;
/* The fork handlers that hold files_lock across fork(2) are registered: under files_lock. */
static int atfork_done;

/*
 * MFD_NOEXEC_SEAL (6.3) keeps the pattern from ever being executable and
 * is required where vm.memfd_noexec=2; older kernels refuse the flag with
 * EINVAL, so drop it once and remember.
 */
static int noexec_refused;

static int memfd_open(void)
{
	int fd;

	if (!__atomic_load_n(&noexec_refused, __ATOMIC_RELAXED)) {
		fd = sys_memfd_create(MMKIT__REFPAGE_MEMFD_NAME,
				      MFD_CLOEXEC | MFD_ALLOW_SEALING | MFD_NOEXEC_SEAL);
		if (fd != -EINVAL)
			return fd;
		__atomic_store_n(&noexec_refused, 1, __ATOMIC_RELAXED);
	}
	return sys_memfd_create(MMKIT__REFPAGE_MEMFD_NAME, MFD_CLOEXEC | MFD_ALLOW_SEALING);
}

static int memfd_available(char *why, size_t len)
{
	int fd = memfd_open();

	if (fd < 0) {
		snprintf(why, len, "memfd_create: %s", strerror(-fd));
		return fd;
	}
	sys_close(fd);
	return 0;
}

/*
 * Tagged: shmem takes PROT_MTE (the file's pages keep the tags set through
 * a shared mapping, and the kernel's copy on write copies them); a kernel
 * that refuses it cannot tag the file.
 */
static int memfd_check_tags(int fd)
{
	void *mem;
	int ret;

	ret = sys_mmap(NULL, sys_page_size(), PROT_READ | MMKIT_PROT_MTE, MAP_SHARED, fd, 0,
		       &mem);
	if (ret)
		return ret == -EINVAL ? -EOPNOTSUPP : ret;
	sys_munmap(mem, sys_page_size());
	return 0;
}

/* A fork while files_lock is held would leave the child's copy locked for good. */
static void files_lock_take(void)
{
	pthread_mutex_lock(&files_lock);
}

static void files_lock_release(void)
{
	pthread_mutex_unlock(&files_lock);
}

MMKIT__ATFORK_HANDLERS(files_fork, files_lock_take, files_lock_release, files_lock_release)

/* Not under files_lock: the fork handlers, unless they are registered; 0 or -errno. */
static int atfork_register(void)
{
	return mmkit__atfork_register(&atfork_done, files_fork_prepare, files_fork_parent,
				      files_fork_child);
}

/*
 * The handlers are registered when the library is loaded.  Linked in, that
 * is before the program starts threads or registers handlers of its own
 * (a program that dlopen()s the library has registered its own already:
 * fork takes files_lock before their locks then, see mmkit_refpage(3)).
 * fork(2) runs
 * prepare handlers last registered first, so it takes files_lock after
 * every lock a program's handlers take, and a program may hold one of
 * those around a call that takes files_lock (a malloc that the perturb
 * shim serves from reference pages, a binding's own lock around
 * mmkit_refpage_map()).  Registered at the first object instead, the
 * order would depend on what the program did first, and a fork racing
 * that first object could copy files_lock held into the child.
 */
__attribute__((constructor)) static void atfork_at_load(void)
{
	atfork_register();
}

static int same_pattern(const struct refpage_pattern_file *f, const struct mmkit_refpage *rp)
{
	size_t page = sys_page_size();

	return f->flags == rp->flags && !memcmp(f->page, rp->page, page) &&
	       (!(f->flags & MMKIT_REFPAGE_TAGGED) ||
		!memcmp(f->tags, rp->tags, page / MMKIT_MTE_GRANULE));
}

/* Under files_lock: a new, empty pattern file for @rp's pattern, or -errno. */
static int file_new(const struct mmkit_refpage *rp, struct refpage_pattern_file **out)
{
	size_t page = sys_page_size();
	struct refpage_pattern_file *f;
	int fd = memfd_open(), ret;
	void *mem;

	if (fd < 0)
		return fd;
	ret = rp->flags & MMKIT_REFPAGE_TAGGED ? memfd_check_tags(fd) : 0;
	/* Empty and never mapped until it grows (file_grow()), but nobody else's to write either. */
	if (!ret)
		ret = sys_fcntl(fd, F_ADD_SEALS, FILE_SEALS);
	/* The pattern page, then the header and tags: no malloc, which may touch errno. */
	if (!ret)
		ret = sys_mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0, &mem);
	if (ret) {
		sys_close(fd);
		return ret;
	}
	f = (struct refpage_pattern_file *)((unsigned char *)mem + page);
	f->page = mem;
	memcpy(f->page, rp->page, page);
	memcpy(f->tags, rp->tags, page / MMKIT_MTE_GRANULE);
	f->flags = rp->flags;
	f->fd = fd;
	f->next = files;
	files = f;
	*out = f;
	return 0;
}

static int memfd_create_backend(struct mmkit_refpage *rp)
{
	struct refpage_pattern_file *f;
	int ret;

	ret = atfork_register();
	pthread_mutex_lock(&files_lock);
	for (f = files; !ret && f && !same_pattern(f, rp); f = f->next)
		;
	if (!ret && !f)
		ret = file_new(rp, &f);
	if (!ret) {
		f->refs++;
		rp->file = f;
		rp->fd = f->fd;
	}
	pthread_mutex_unlock(&files_lock);
	return ret;
}

static void memfd_destroy(struct mmkit_refpage *rp)
{
	struct refpage_pattern_file *f = rp->file, **link;

	pthread_mutex_lock(&files_lock);
	if (!--f->refs) {
		for (link = &files; *link != f; link = &(*link)->next)
			;
		*link = f->next;
		/* Live mappings hold their own reference to the file and keep working. */
		sys_close(f->fd);
		sys_munmap(f->page, 2 * sys_page_size());
	}
	pthread_mutex_unlock(&files_lock);
}

/*
 * Tagged: the tags of the @size bytes of @fd, set through a shared
 * PROT_MTE mapping, gone before the file is sealed against writes.
 */
static int file_tag(struct refpage_pattern_file *f, int fd, size_t size)
{
	size_t page = sys_page_size(), off, g;
	unsigned char *p;
	void *mem;
	int ret;

	ret = sys_mmap(NULL, size, PROT_READ | PROT_WRITE | MMKIT_PROT_MTE, MAP_SHARED, fd, 0,
		       &mem);
	if (ret)
		return ret;
	p = mem;
	for (off = 0; off < size; off += page)
		for (g = 0; g < page / MMKIT_MTE_GRANULE; g++)
			mmkit__mte_set_tag(mmkit__mte_with_tag(p + off + g * MMKIT_MTE_GRANULE,
							       f->tags[g]));
	sys_munmap(mem, size);
	return 0;
}

/*
 * Writes the pattern over the @size bytes of @fd, then the tags.  A short
 * write goes on from where it stopped, mid-page too.
 */
static int file_fill(struct refpage_pattern_file *f, int fd, size_t size)
{
	size_t page = sys_page_size(), off, in_page, n, i;
	struct iovec iov[FILL_IOV];
	ssize_t done;

	for (i = 0; i < FILL_IOV; i++)
		iov[i] = (struct iovec){ f->page, page };
	for (off = 0; off < size; off += (size_t)done) {
		in_page = off % page;
		if (in_page) {
			done = sys_pwrite(fd, f->page + in_page, page - in_page, (off_t)off);
		} else {
			n = (size - off) / page < FILL_IOV ? (size - off) / page : FILL_IOV;
			done = sys_pwritev(fd, iov, (int)n, (off_t)off);
		}
		if (done <= 0)
			return done ? (int)done : -EIO;
	}
	return f->flags & MMKIT_REFPAGE_TAGGED ? file_tag(f, fd, size) : 0;
}

/*
 * The @size bytes of the sealed @fd read back, CHECK_BYTES at a time:
 * each must be the pattern.  A peer that opened the file and wrote it
 * before the seals (it may have, between memfd_create() and
 * F_SEAL_WRITE) fails the growth, with -EBUSY.  The tags cannot be read
 * this way: a peer's tags would fault the first access they do not fit.
 */
static int file_check(const struct refpage_pattern_file *f, int fd, size_t size)
{
	size_t page = sys_page_size(), off, in_page, want;
	unsigned char buf[CHECK_BYTES];
	ssize_t got;

	for (off = 0; off < size; off += (size_t)got) {
		in_page = off % page;
		/* Never past the end of the pattern page, whatever a short read left. */
		want = page - in_page < sizeof(buf) ? page - in_page : sizeof(buf);
		got = sys_pread(fd, buf, want, (off_t)off);
		if (got <= 0)
			return got ? (int)got : -EIO;
		if (memcmp(buf, f->page + in_page, (size_t)got)) {
			mmkit__error_detail(-EBUSY, "the new memfd pattern file was written by another process before it was sealed (at offset %zu)",
					    off);
			return -EBUSY;
		}
	}
	return 0;
}

/*
 * A new pattern file of @size bytes into *@out: sealed against shrinking
 * and growing before it is filled (a peer that truncated it meanwhile
 * would make the fill fail, not our mappings fault), against writes once
 * filled, then checked.
 */
static int file_make(struct refpage_pattern_file *f, size_t size, int *out)
{
	int fd = memfd_open(), ret;

	if (fd < 0)
		return fd;
	ret = sys_ftruncate(fd, (off_t)size);
	if (!ret)
		ret = sys_fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW);
	if (!ret)
		ret = file_fill(f, fd, size);
	if (!ret) {
		ret = sys_fcntl(fd, F_ADD_SEALS, FILE_SEALS);
		if (ret == -EBUSY)
			mmkit__error_detail(ret, "another process mapped the new memfd pattern file writable before it was sealed");
	}
	if (!ret)
		ret = file_check(f, fd, size);
	if (ret) {
		sys_close(fd);
		return ret;
	}
	*out = fd;
	return 0;
}

/* The window a range of @len bytes wants: all of it, from WINDOW_MIN up to WINDOW_MAX. */
static size_t window_for(size_t len)
{
	size_t want = WINDOW_MIN;

	while (want < WINDOW_MAX && want < len)
		want *= 2;
	return want;
}

/*
 * Grows @f to at least @want bytes of pattern; its size into *@size.  A
 * new file replaces the old one at the same descriptor number (dup3):
 * mappings made of the old one keep it, and use only offsets below the
 * size they were made with.
 */
static int file_grow(struct refpage_pattern_file *f, size_t want, size_t *size)
{
	int fd, ret = 0;

	*size = __atomic_load_n(&f->size, __ATOMIC_ACQUIRE);
	if (*size >= want)
		return 0;
	pthread_mutex_lock(&files_lock);
	if (f->size < want) {
		ret = file_make(f, want, &fd);
		if (!ret) {
			ret = sys_dup3(fd, f->fd, O_CLOEXEC);
			ret = ret < 0 ? ret : 0;
			sys_close(fd);
		}
		/* After the dup3: a map that reads this size maps the new file. */
		if (!ret)
			__atomic_store_n(&f->size, want, __ATOMIC_RELEASE);
	}
	*size = f->size;
	pthread_mutex_unlock(&files_lock);
	return ret;
}

static int memfd_map(struct mmkit_refpage *rp, size_t len, int prot, void **addr)
{
	size_t size;
	int ret = file_grow(rp->file, window_for(len), &size);

	return ret ? ret : refpage__file_map(rp, len, prot, size, addr);
}

void refpage__memfd_stats(unsigned long long *nfiles, unsigned long long *bytes)
{
	const struct refpage_pattern_file *f;

	*nfiles = *bytes = 0;
	pthread_mutex_lock(&files_lock);
	for (f = files; f; f = f->next) {
		(*nfiles)++;
		*bytes += f->size;
	}
	pthread_mutex_unlock(&files_lock);
}

const struct refpage_backend refpage__memfd = {
	.name		= "memfd",
	.flag		= MMKIT_REFPAGE_BACKEND_MEMFD,
	.contract	= MMKIT_REFPAGE_FULL_CONTRACT,
	.available	= memfd_available,
	.create		= memfd_create_backend,
	.destroy	= memfd_destroy,
	.map		= memfd_map,
	.attach		= refpage__file_attach,
	.unmap		= refpage__file_unmap,
};
