// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The kmod backend: refpage.ko's /dev/refpage.  REFPAGE_CREATE gives a
 * descriptor owning one page of the pattern; a private mapping of it reads
 * that page (one physical page however much is read) and copies it on the
 * first write, all inside the kernel, so the whole contract holds with no
 * chunks and one VMA per range.  What users see differently (documented in
 * mmkit_refpage(3)): every PTE of the shared page counts as file RSS, and
 * mlock() leaves these mappings unlocked (the module maps with
 * VM_MIXEDMAP).  Mapping, attach and unmap are the memfd backend's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>

#include "refpage.h"
/* The uapi header, one copy shared with the module. */
#include "../kmod/refpage/refpage.h"

static int kmod_open(void)
{
	return sys_open(REFPAGE_DEVICE, O_RDWR | O_CLOEXEC, 0);
}

static int kmod_available(char *why, size_t len)
{
	int fd = kmod_open();

	if (fd >= 0) {
		sys_close(fd);
		snprintf(why, len, REFPAGE_DEVICE " ready");
		return 0;
	}
	if (fd == -ENOENT) {
		snprintf(why, len, REFPAGE_DEVICE " absent: load refpage.ko");
		return -ENODEV;
	}
	snprintf(why, len, "open " REFPAGE_DEVICE ": %s", strerror(-fd));
	return fd;
}

static int kmod_create(struct mmkit_refpage *rp)
{
	struct refpage_create arg = {
		.pattern = (uintptr_t)rp->page,
		.pattern_size = (__u32)sys_page_size(),
	};
	int dev = kmod_open(), fd;

	if (dev < 0)
		return dev == -ENOENT ? -ENODEV : dev;
	fd = sys_ioctl(dev, REFPAGE_CREATE, &arg);
	sys_close(dev);
	if (fd < 0)
		return fd;
	rp->fd = fd;
	rp->chunk = REFPAGE_CHUNK_UNLIMITED;
	return 0;
}

const struct refpage_backend refpage__kmod = {
	.name		= "kmod",
	.flag		= MMKIT_REFPAGE_BACKEND_KMOD,
	.contract	= MMKIT_REFPAGE_FULL_CONTRACT,
	.no_tags	= "refpage.ko hands out an untagged page",
	.available	= kmod_available,
	.create		= kmod_create,
	.destroy	= refpage__file_destroy,
	.map		= refpage__file_map,
	.attach		= refpage__file_attach,
	.unmap		= refpage__file_unmap,
};
