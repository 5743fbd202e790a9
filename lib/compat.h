/* SPDX-License-Identifier: MIT OR LGPL-2.1-or-later */
/*
 * uapi constants newer than the headers libmmkit may be built against
 * (Debian 12 ships Linux 6.1's), each with the kernel that added it.  The
 * values are ABI: the library tries the call and caches the answer, so
 * building with old headers never hides a feature of a newer kernel.
 */
#ifndef MMKIT_COMPAT_H
#define MMKIT_COMPAT_H

#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <linux/fs.h>

/* Linux 3.17 */
#ifndef MFD_CLOEXEC
#define MFD_CLOEXEC			0x0001U
#endif
/* Linux 5.1 */
#ifndef F_SEAL_FUTURE_WRITE
#define F_SEAL_FUTURE_WRITE		0x0010
#endif
/* Linux 6.3 */
#ifndef MFD_NOEXEC_SEAL
#define MFD_NOEXEC_SEAL			0x0008U
#endif

/* Linux 4.4 */
#ifndef MLOCK_ONFAULT
#define MLOCK_ONFAULT			1
#endif
#ifndef MCL_ONFAULT
#define MCL_ONFAULT			4
#endif

/* Linux 4.14 */
#ifndef MADV_WIPEONFORK
#define MADV_WIPEONFORK			18
#endif
#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE		23	/* Linux 5.14 */
#endif

/* Linux 5.11 */
#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY		1
#endif

/* Linux 5.13 */
#ifndef PR_PAC_SET_ENABLED_KEYS
#define PR_PAC_SET_ENABLED_KEYS		60
#define PR_PAC_GET_ENABLED_KEYS		61
#endif

/* Linux 5.17 */
#ifndef PR_SET_VMA
#define PR_SET_VMA			0x53564d41
#define PR_SET_VMA_ANON_NAME		0
#endif

/* Linux 6.11 */
#ifndef PROCMAP_QUERY
struct procmap_query {
	uint64_t size;
	uint64_t query_flags;
	uint64_t query_addr;
	uint64_t vma_start;
	uint64_t vma_end;
	uint64_t vma_flags;
	uint64_t vma_page_size;
	uint64_t vma_offset;
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t vma_name_size;
	uint32_t build_id_size;
	uint64_t vma_name_addr;
	uint64_t build_id_addr;
};
#define PROCMAP_QUERY_VMA_SHARED		0x08
#define PROCMAP_QUERY_COVERING_OR_NEXT_VMA	0x10
#define PROCMAP_QUERY				_IOWR('f', 17, struct procmap_query)
#endif

#endif /* MMKIT_COMPAT_H */
