// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The syscall backend: refpage_create(2) of kernels built with the
 * reference-page series (kernel/patches/6.12/).  It returns a descriptor
 * like refpage.ko's, whose every offset reads as the pattern and whose
 * private mappings the kernel copies on the first write, so mapping,
 * attach and unmap are the memfd backend's.  Unlike the module's mappings,
 * these are ordinary private file mappings: mlock() locks them.
 *
 * The call has no number in any upstream kernel, and the one the series
 * takes may belong to another call on another kernel.  So the backend
 * calls only the number the running kernel publishes in
 * /sys/kernel/mm/refpage/syscall_nr, read each time it is asked: without
 * that file there is no call to make.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "refpage.h"

#define SYSCALL_NR_FILE	"/sys/kernel/mm/refpage/syscall_nr"

/* Numbers of system calls are small; anything else is not the series' file. */
#define SYSCALL_NR_MAX	4096

/* Parses "NNN\n"; -EINVAL for anything else. */
static long parse_nr(const char *buf, size_t len)
{
	long nr = 0;
	size_t i;

	for (i = 0; i < len && buf[i] >= '0' && buf[i] <= '9'; i++) {
		nr = nr * 10 + (buf[i] - '0');
		if (nr >= SYSCALL_NR_MAX)
			return -EINVAL;
	}
	if (!i || i + 1 != len || buf[i] != '\n')
		return -EINVAL;
	return nr;
}

/* The call's number here, or -errno and why into @why (@why may be NULL). */
static long syscall_nr(char *why, size_t len)
{
	char buf[16];
	ssize_t n;
	long nr;
	int fd;

	fd = sys_open(SYSCALL_NR_FILE, O_RDONLY | O_CLOEXEC, 0);
	if (fd == -ENOENT) {
		if (why)
			snprintf(why, len, "no refpage_create(2) here");
		return -ENODEV;
	}
	if (fd < 0) {
		if (why)
			snprintf(why, len, "open " SYSCALL_NR_FILE ": %s", strerror(-fd));
		return fd;
	}
	n = sys_read(fd, buf, sizeof(buf));
	sys_close(fd);
	nr = n < 0 ? n : parse_nr(buf, (size_t)n);
	if (nr < 0 && why)
		snprintf(why, len, "read " SYSCALL_NR_FILE ": %s",
			 n < 0 ? strerror((int)-n) : "not a system call number");
	if (nr >= 0 && why)
		snprintf(why, len, "refpage_create() is system call %ld", nr);
	return nr;
}

static int syscall_available(char *why, size_t len)
{
	long nr = syscall_nr(why, len);

	return nr < 0 ? (int)nr : 0;
}

/*
 * REFPAGE_TAGGED (kernel/patches/6.12/0005): the page gets the tags of the
 * pattern's own memory, which must be mapped PROT_MTE; the kernel reads
 * data and tags through the pages, so any pointer tag will do.
 */
#define REFPAGE_TAGGED	0x1

/*
 * Creates a descriptor for the @size bytes at @content with @tags (one per
 * granule, or NULL for zero tags): tagged, through a PROT_MTE copy of the
 * content, written while its tags are still zero (the process may check
 * tags), then tagged granule by granule.
 */
static int syscall_create_tagged(long nr, const unsigned char *content, size_t size,
				 const unsigned char *tags)
{
	size_t page = sys_page_size(), g;
	unsigned char *copy;
	void *mem;
	int ret;

	if (!tags)
		return sys_refpage_create(nr, content, size, 0);
	ret = sys_mmap(NULL, page, PROT_READ | PROT_WRITE | MMKIT_PROT_MTE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0, &mem);
	if (ret)
		return ret;
	copy = mem;
	memcpy(copy, content, size);
	for (g = 0; g < size / MMKIT_MTE_GRANULE; g++)
		mmkit__mte_set_tag(mmkit__mte_with_tag(copy + g * MMKIT_MTE_GRANULE, tags[g]));
	ret = sys_refpage_create(nr, copy, size, REFPAGE_TAGGED);
	sys_munmap(mem, page);
	return ret;
}

/*
 * Whether this kernel's refpage_create() tags, found by asking it for a
 * tagged page and remembered once it made one; a refusal is asked again
 * next time (as every answer that is no page).  A kernel with the series
 * but not its arm64 part refuses the flag with EINVAL; one without MTE,
 * with EOPNOTSUPP.
 */
static int syscall_tags;

static int syscall_can_tag(char *why, size_t len)
{
	static const unsigned char granule[MMKIT_MTE_GRANULE], tag;
	long nr;
	int fd;

	if (__atomic_load_n(&syscall_tags, __ATOMIC_RELAXED))
		return 0;
	nr = syscall_nr(why, len);
	if (nr < 0)
		return -EOPNOTSUPP;
	if (mmkit__mte_available(why, len))
		return -EOPNOTSUPP;
	fd = syscall_create_tagged(nr, granule, sizeof(granule), &tag);
	if (fd >= 0) {
		sys_close(fd);
		__atomic_store_n(&syscall_tags, 1, __ATOMIC_RELAXED);
		return 0;
	}
	if (fd == -EINVAL)
		snprintf(why, len, "this kernel's refpage_create() has no tagged pages "
			 "(REFPAGE_TAGGED: the series' arm64 part, patch 5)");
	else if (fd == -EOPNOTSUPP)
		snprintf(why, len, "this kernel's refpage_create() cannot tag here");
	else
		snprintf(why, len, "refpage_create() refused a tagged page: %s", strerror(-fd));
	return -EOPNOTSUPP;
}

static int syscall_create(struct mmkit_refpage *rp)
{
	long nr = syscall_nr(NULL, 0);
	int fd;

	if (nr < 0)
		return (int)nr;
	/* The whole page of the repeated pattern, and its tags. */
	fd = syscall_create_tagged(nr, rp->page, sys_page_size(),
				   rp->flags & MMKIT_REFPAGE_TAGGED ? rp->tags : NULL);
	if (fd < 0)
		return fd;
	rp->fd = fd;
	return 0;
}

const struct refpage_backend refpage__syscall = {
	.name		= "syscall",
	.flag		= MMKIT_REFPAGE_BACKEND_SYSCALL,
	.contract	= MMKIT_REFPAGE_FULL_CONTRACT,
	.can_tag	= syscall_can_tag,
	.available	= syscall_available,
	.create		= syscall_create,
	.destroy	= refpage__file_destroy,
	.map		= refpage__file_map_whole,
	.attach		= refpage__file_attach,
	.unmap		= refpage__file_unmap,
};
