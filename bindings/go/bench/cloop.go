// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package bench

/*
#cgo CFLAGS: -I${SRCDIR}/../../../include
#include "mmkit.h"

// The library's calls, which package mmkit compiles into the test binary:
// weak here, so that cgo's link of this package alone does not look for them.
#pragma weak mmkit_secret_alloc
#pragma weak mmkit_secret_free

// n allocation and free pairs of size bytes in C, one cgo call for all.
static int alloc_free_loop(long n, size_t size)
{
	for (long i = 0; i < n; i++) {
		void *p;
		int ret = mmkit_secret_alloc(&p, size, 0);

		if (ret < 0)
			return ret;
		*(volatile char *)p = 1;
		mmkit_secret_free(p);
	}
	return 0;
}
// The same with sizes cycling over 1..max.
static int alloc_free_mixed(long n, size_t max)
{
	for (long i = 0; i < n; i++) {
		void *p;
		int ret = mmkit_secret_alloc(&p, 1 + i % max, 0);

		if (ret < 0)
			return ret;
		*(volatile char *)p = 1;
		mmkit_secret_free(p);
	}
	return 0;
}

static void *alloc_one(size_t size)
{
	void *p = NULL;

	mmkit_secret_alloc(&p, size, 0);
	return p;
}

static void free_one(void *p)
{
	mmkit_secret_free(p);
}
*/
import "C"

import "syscall"

// allocFreeC times the C library alone: n pairs of mmkit_secret_alloc and
// mmkit_secret_free in one cgo call.
func allocFreeC(n, size int) error {
	if ret := C.alloc_free_loop(C.long(n), C.size_t(size)); ret < 0 {
		return syscall.Errno(-ret)
	}
	return nil
}

// allocFreeMixed is allocFreeC with sizes cycling over 1..max.
func allocFreeMixed(n, max int) error {
	if ret := C.alloc_free_mixed(C.long(n), C.size_t(max)); ret < 0 {
		return syscall.Errno(-ret)
	}
	return nil
}

// allocFreeCgo makes the same pairs of C calls one cgo call each, as the
// binding did before it allocated secrets ahead (it now crosses once per
// pair, for the free): what two crossings into C cost.
func allocFreeCgo(n, size int) error {
	for i := 0; i < n; i++ {
		p := C.alloc_one(C.size_t(size))
		if p == nil {
			return syscall.ENOMEM
		}
		*(*byte)(p) = 1
		C.free_one(p)
	}
	return nil
}
