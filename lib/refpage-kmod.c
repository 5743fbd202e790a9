// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
/*
 * The kmod backend: refpage.ko's /dev/refpage.  REFPAGE_CREATE gives a
 * descriptor owning one page of the pattern; a private mapping of it reads
 * copies of that page (one per 256 pages read) and copies it on the first
 * write, all inside the kernel, so the whole contract holds with no chunks
 * and one VMA per range.  What users see differently (documented in
 * mmkit_refpage(3)): every PTE of a copy counts as file RSS, and mlock()
 * leaves these mappings unlocked (the module maps with VM_MIXEDMAP).  Mapping (one chunk for any range), attach and unmap are
 * refpage-file.c's, as for the memfd backend.
 * Tagged pages (MTE) where the module and its kernel can: the module
 * writes the tags into its page and tags the mappings itself.
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

/*
 * Untagged pages are asked for in the first, 16-byte form of the request,
 * which every refpage.ko takes; tagged ones in the current form, which
 * carries the tags (one byte per granule of the page).
 */
static int kmod_ioctl_create(int dev, const void *pattern, size_t size,
			     const unsigned char *tags)
{
	struct refpage_create arg = {
		.pattern = (uintptr_t)pattern,
		.pattern_size = (__u32)size,
		.flags = tags ? REFPAGE_TAGGED : 0,
		.tags = (uintptr_t)tags,
	};

	return sys_ioctl(dev, tags ? REFPAGE_CREATE : REFPAGE_CREATE_V1, &arg);
}

/*
 * Whether the loaded module tags, found by asking it for a tagged page
 * and remembered once it answered: 1 yes, else the -errno of its refusal
 * (0: no answer yet).  A failure that is no answer (no descriptor left
 * for the page, no memory) is not remembered: the next call asks again.
 * Racing first callers ask alike and store the same answer.
 */
static int kmod_tag_answer;

static int kmod_can_tag(char *why, size_t len)
{
	static const _Alignas(16) unsigned char granule[MMKIT_MTE_GRANULE];
	static const unsigned char tag;
	int answer = __atomic_load_n(&kmod_tag_answer, __ATOMIC_RELAXED), dev, fd;

	if (!answer) {
		dev = kmod_open();
		if (dev < 0) {
			snprintf(why, len, "open " REFPAGE_DEVICE ": %s", strerror(-dev));
			return -EOPNOTSUPP;
		}
		fd = kmod_ioctl_create(dev, granule, sizeof(granule), &tag);
		sys_close(dev);
		if (fd >= 0)
			sys_close(fd);
		answer = fd >= 0 ? 1 : fd;
		if (answer == 1 || answer == -EOPNOTSUPP || answer == -ENOTTY || answer == -EINVAL)
			__atomic_store_n(&kmod_tag_answer, answer, __ATOMIC_RELAXED);
	}
	if (answer == 1)
		return 0;
	if (answer == -EOPNOTSUPP)
		snprintf(why, len, "refpage.ko cannot tag: its kernel has no MTE");
	else if (answer == -ENOTTY || answer == -EINVAL)
		snprintf(why, len, "this refpage.ko predates tagged pages (REFPAGE_TAGGED)");
	else
		snprintf(why, len, "refpage.ko refused a tagged page: %s", strerror(-answer));
	return -EOPNOTSUPP;
}

static int kmod_create(struct mmkit_refpage *rp)
{
	int dev = kmod_open(), fd;

	if (dev < 0)
		return dev == -ENOENT ? -ENODEV : dev;
	fd = kmod_ioctl_create(dev, rp->page, sys_page_size(),
			       rp->flags & MMKIT_REFPAGE_TAGGED ? rp->tags : NULL);
	sys_close(dev);
	if (fd < 0)
		return fd;
	rp->fd = fd;
	return 0;
}

const struct refpage_backend refpage__kmod = {
	.name		= "kmod",
	.flag		= MMKIT_REFPAGE_BACKEND_KMOD,
	.contract	= MMKIT_REFPAGE_FULL_CONTRACT,
	.can_tag	= kmod_can_tag,
	.available	= kmod_available,
	.create		= kmod_create,
	.destroy	= refpage__file_destroy,
	.map		= refpage__file_map_whole,
	.attach		= refpage__file_attach,
	.unmap		= refpage__file_unmap,
};
