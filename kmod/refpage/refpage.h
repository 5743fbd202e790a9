/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * The user-space interface of refpage.ko, shared by the module and by
 * libmmkit.  Open /dev/refpage, ask REFPAGE_CREATE for a reference page
 * holding a pattern, and mmap(MAP_PRIVATE) the returned descriptor: the
 * mapping reads as the pattern, and the first write to a page copies it.
 *
 * The structure grows at its end; the ioctl number carries its size.
 * REFPAGE_CREATE_V1 is the first, 16-byte form, which old callers still
 * pass (and new ones may, for untagged pages, so that they work with an
 * older module too).  A field past the caller's size reads as 0.
 */
#ifndef _UAPI_REFPAGE_H
#define _UAPI_REFPAGE_H

#include <linux/ioctl.h>
#include <linux/types.h>

#define REFPAGE_DEVICE		"/dev/refpage"

struct refpage_create {
	__u64 pattern;		/* user address of the pattern */
	__u32 pattern_size;	/* a power of two, 1 to PAGE_SIZE */
	__u32 flags;		/* REFPAGE_TAGGED or 0 */
	/*
	 * REFPAGE_TAGGED: user address of pattern_size / 16 bytes, the MTE
	 * allocation tag (0-15) of each 16-byte granule of the pattern,
	 * repeated with it over the page.  Unread without the flag.
	 */
	__u64 tags;
};

/*
 * arm64 with MTE only (else EOPNOTSUPP; EINVAL with the 16-byte form or a
 * pattern under 16 bytes): the page carries the tags, private mappings of
 * the descriptor are tagged (VM_MTE, as if mapped with PROT_MTE, which the
 * kernel refuses for device files), and the first write's copy keeps them.
 */
#define REFPAGE_TAGGED		0x1

/* Returns a new descriptor (O_CLOEXEC) for one reference page. */
#define REFPAGE_CREATE		_IOW('r', 0xa0, struct refpage_create)
#define REFPAGE_CREATE_V1_SIZE	16
#define REFPAGE_CREATE_V1	_IOC(_IOC_WRITE, 'r', 0xa0, REFPAGE_CREATE_V1_SIZE)

#endif /* _UAPI_REFPAGE_H */
