// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"unsafe"
)

// NameMax is the longest name plus one, the kernel's ANON_VMA_NAME_MAX_LEN.
const NameMax = C.MMKIT_NAME_MAX

// Name names the pages of b, like prctl(PR_SET_VMA_ANON_NAME) with the
// kernel's rules (mmkit_name_pages(3)): at most NameMax-1 printable ASCII
// characters, none of \ ` $ [ ].  b must be whole pages, its start and
// length multiples of the page size (a mmap'ed slice, a Map of whole
// pages): part of a page is refused with syscall.EINVAL, since the kernel
// would name the rest of the page too (NameRange names a range and its
// last page whole).  An empty b names nothing.  Where the kernel lacks
// CONFIG_ANON_VMA_NAME the name goes to mmkit's registry, which Regions
// and `mmkit maps` read.  b must not be Go-managed memory: the collector
// may move or reuse it, and names belong to pages.
func Name(b []byte, name string) error {
	cname, err := cString("mmkit_name_pages", name)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cname))
	addr, n := span(b)
	return checkResult("mmkit_name_pages", C.mmkit_go_name_pages(addr, n, cname))
}

// NameRange names [addr, addr+length), which need not be readable: a
// PROT_NONE reservation, as allocators name their arenas.
func NameRange(addr, length uintptr, name string) error {
	cname, err := cString("mmkit_name", name)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cname))
	return checkResult("mmkit_name", C.mmkit_go_name(C.uintptr_t(addr), C.size_t(length), cname))
}

// ClearName removes the name of [addr, addr+length).
func ClearName(addr, length uintptr) error {
	return checkResult("mmkit_name", C.mmkit_go_name(C.uintptr_t(addr), C.size_t(length), nil))
}

// ValidName reports whether the kernel would accept name.
func ValidName(name string) bool {
	cname, err := cString("mmkit_name_valid", name)
	if err != nil {
		return false
	}
	defer C.free(unsafe.Pointer(cname))
	return C.mmkit_name_valid(cname) == 0
}
