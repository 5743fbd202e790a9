// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

/*
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"sync"
	"unsafe"
)

// RefPage is a reference page (mmkit_refpage(3)): memory mapped from it
// reads as the pattern until written, and a page is copied on its first
// write, so a pattern-filled heap costs neither a memset nor memory for
// the pages nobody touches.
//
// The backend is chosen as in C (refpage_create(2) or refpage.ko where the
// kernel has them, else memfd).  The opt-in uffd backend
// (MMKIT_REFPAGE_BACKEND=uffd) resolves faults in a SIGBUS handler, which
// Go's runtime owns: do not set it for a Go program.
type RefPage struct {
	mu   sync.Mutex
	rp   *C.struct_mmkit_refpage // nil once closed
	maps map[unsafe.Pointer]int  // address -> length of each live Map
}

// NewRefPage makes a reference page of pattern, whose length is a power of
// two from 1 to the page size.
func NewRefPage(pattern []byte) (*RefPage, error) {
	var p unsafe.Pointer
	if len(pattern) > 0 {
		p = unsafe.Pointer(&pattern[0])
	}
	r := C.mmkit_go_refpage_create(p, C.size_t(len(pattern)), 0)
	if err := check("mmkit_refpage_create", r.ret, r.msg); err != nil {
		return nil, err
	}
	return &RefPage{rp: (*C.struct_mmkit_refpage)(r.p), maps: map[unsafe.Pointer]int{}}, nil
}

// Backend is "kmod", "memfd" or "uffd".
func (r *RefPage) Backend() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rp == nil {
		return ""
	}
	return C.GoString(C.mmkit_refpage_backend(r.rp))
}

// Map maps n bytes (whole pages underneath) that read as the pattern,
// readable and writable.  The slice is valid until Unmap or Close.
func (r *RefPage) Map(n int) ([]byte, error) {
	if n < 0 {
		return nil, invalid("mmkit_refpage_map", fmt.Sprintf("length %d is negative", n))
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rp == nil {
		return nil, invalid("mmkit_refpage_map", "the reference page was closed")
	}
	m := C.mmkit_go_refpage_map(r.rp, C.size_t(n))
	if err := check("mmkit_refpage_map", m.ret, m.msg); err != nil {
		return nil, err
	}
	r.maps[m.p] = n
	return unsafe.Slice((*byte)(m.p), n), nil
}

// Unmap unmaps a slice that Map returned (the whole of it: b may be a
// reslice that starts where Map's slice starts).
func (r *RefPage) Unmap(b []byte) error {
	if len(b) == 0 {
		return invalid("mmkit_refpage_unmap", "an empty slice")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	addr := unsafe.Pointer(&b[0])
	n, ok := r.maps[addr]
	if !ok || r.rp == nil {
		return invalid("mmkit_refpage_unmap", "not a slice that Map of this reference page returned")
	}
	if err := r.unmap(addr, n); err != nil {
		return err
	}
	delete(r.maps, addr)
	return nil
}

func (r *RefPage) unmap(addr unsafe.Pointer, n int) error {
	return checkResult("mmkit_refpage_unmap", C.mmkit_go_refpage_unmap(r.rp, addr, C.size_t(n)))
}

// Close unmaps every slice Map returned that is still mapped and releases
// the reference page.  Calling it again does nothing.
func (r *RefPage) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.rp == nil {
		return nil
	}
	var first error
	for addr, n := range r.maps {
		if err := r.unmap(addr, n); err != nil && first == nil {
			first = err
		}
		delete(r.maps, addr)
	}
	C.mmkit_refpage_destroy(r.rp)
	r.rp = nil
	return first
}
