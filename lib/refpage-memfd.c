// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The memfd backend: a memfd holding the pattern, mapped over the range
 * by refpage-file.c, which says how.  The memfd starts empty and grows as
 * ranges ask for more (file_grow()).
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "refpage.h"

#define MEMFD_NAME		"mmkit-refpage"

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
		fd = sys_memfd_create(MEMFD_NAME, MFD_CLOEXEC | MFD_NOEXEC_SEAL);
		if (fd != -EINVAL)
			return fd;
		__atomic_store_n(&noexec_refused, 1, __ATOMIC_RELAXED);
	}
	return sys_memfd_create(MEMFD_NAME, MFD_CLOEXEC);
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

static int memfd_create_backend(struct mmkit_refpage *rp)
{
	int fd = memfd_open(), ret;

	if (fd < 0)
		return fd;
	if (rp->flags & MMKIT_REFPAGE_TAGGED) {
		ret = memfd_check_tags(fd);
		if (ret) {
			sys_close(fd);
			return ret;
		}
	}
	rp->fd = fd;
	rp->chunk = 0;
	return 0;
}

const struct refpage_backend refpage__memfd = {
	.name		= "memfd",
	.flag		= MMKIT_REFPAGE_BACKEND_MEMFD,
	.contract	= MMKIT_REFPAGE_FULL_CONTRACT,
	.available	= memfd_available,
	.create		= memfd_create_backend,
	.destroy	= refpage__file_destroy,
	.map		= refpage__file_map,
	.attach		= refpage__file_attach,
	.unmap		= refpage__file_unmap,
};
