/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * The user-space interface of refpage.ko, shared by the module and by
 * libmmkit.  Open /dev/refpage, ask REFPAGE_CREATE for a reference page
 * holding a pattern, and mmap(MAP_PRIVATE) the returned descriptor: the
 * mapping reads as the pattern, and the first write to a page copies it.
 */
#ifndef _UAPI_REFPAGE_H
#define _UAPI_REFPAGE_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define REFPAGE_DEVICE		"/dev/refpage"

struct refpage_create {
	__u64 pattern;		/* user address of the pattern */
	__u32 pattern_size;	/* a power of two, 1 to PAGE_SIZE */
	__u32 flags;		/* none defined: must be 0 */
};

/* Returns a new descriptor (O_CLOEXEC) for one reference page. */
#define REFPAGE_CREATE		_IOW('r', 0xa0, struct refpage_create)

#endif /* _UAPI_REFPAGE_H */
