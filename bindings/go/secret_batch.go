// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// NewSecrets allocates count secrets of size zeroed bytes each, as count
// calls of NewSecret would, in one call into C: all of them, or none and
// the error.  Where secrets come and go by the hundred (a key per
// connection), NewSecrets and DestroySecrets spare most of the cost of
// crossing into C, which is more than the C allocator's own.
func NewSecrets(count, size int) ([]*Secret, error) {
	switch {
	case count < 0:
		return nil, invalid("mmkit_secret_alloc", fmt.Sprintf("count %d: must not be negative", count))
	case count == 0:
		return nil, nil
	case size <= 0:
		return nil, invalid("mmkit_secret_alloc", fmt.Sprintf("size %d: must be at least 1", size))
	}
	ps := make([]unsafe.Pointer, count)
	if err := checkResult("mmkit_secret_alloc",
		C.mmkit_go_secret_alloc_n(C.size_t(size), &ps[0], C.size_t(count))); err != nil {
		return nil, err
	}
	out := make([]*Secret, count)
	for i, p := range ps {
		out[i] = register(p, size)
	}
	return out, nil
}

// DestroySecrets destroys each secret as Destroy does, the frees in one
// call into C.  A secret destroyed already, given twice, or nil is
// skipped.
func DestroySecrets(secrets ...*Secret) {
	ps := make([]unsafe.Pointer, 0, len(secrets))
	for _, s := range secrets {
		if s == nil {
			continue
		}
		if p := s.release(); p != nil {
			ps = append(ps, p)
		}
	}
	if len(ps) > 0 {
		C.mmkit_go_secret_free_n(&ps[0], C.size_t(len(ps)))
	}
}
