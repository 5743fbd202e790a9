// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

/*
#cgo CFLAGS: -I${SRCDIR}/../../include -std=gnu11 -D_GNU_SOURCE -pthread
#cgo LDFLAGS: -pthread
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"strings"
	"syscall"
	"unsafe"
)

// Error is a failed mmkit call: the C function that failed, its errno and
// the library's words for it (mmkit_last_error(3)).  errors.Is(err,
// syscall.ENOMEM) and errors.Is(err, fs.ErrPermission) see through it to
// the Errno.
type Error struct {
	Op    string        // the C function, e.g. "mmkit_secret_alloc"
	Errno syscall.Errno // what it returned, negated
	Msg   string        // "mmkit_secret_alloc: mapping 64 KiB ... would exceed RLIMIT_MEMLOCK ..."
}

func (e *Error) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	return e.Op + ": " + e.Errno.Error()
}

// Unwrap returns the Errno.
func (e *Error) Unwrap() error { return e.Errno }

// check turns a C result into an error, freeing its message.
func check(op string, ret C.int, msg *C.char) error {
	if ret >= 0 {
		return nil
	}
	e := &Error{Op: op, Errno: syscall.Errno(-ret)}
	if msg != nil {
		e.Msg = C.GoString(msg)
		C.free(unsafe.Pointer(msg))
	}
	return e
}

func checkResult(op string, r C.struct_mmkit_go_result) error {
	return check(op, r.ret, r.msg)
}

// invalid is an argument refused on the Go side, before any C call, worded
// as the library words its own refusals.
func invalid(op, why string) error {
	return &Error{Op: op, Errno: syscall.EINVAL, Msg: op + ": " + why}
}

// Feature is one line of Probe: what the kernel offers for a feature and
// which backend mmkit uses, as `mmkit probe` prints it.
type Feature struct {
	Name    string // "refpage", "names", "pac", "secret", "lock_onfault", "userfaultfd"
	Status  string // "native", "fallback", "unsupported", "not_implemented"
	Backend string // e.g. "memfd", "registry", "memfd_secret"
	Reason  string // why this backend, or why none
}

// Probe reports what this kernel supports for each feature, which backend
// each uses, and why (mmkit_probe(3)), asked again at each call.
func Probe() ([]Feature, error) {
	var f C.struct_mmkit_features
	if err := checkResult("mmkit_probe", C.mmkit_go_probe(&f)); err != nil {
		return nil, err
	}
	out := make([]Feature, 0, C.MMKIT_FEATURE_COUNT)
	for id := 0; id < C.MMKIT_FEATURE_COUNT; id++ {
		one := &f.feature[id]
		out = append(out, Feature{
			Name:    C.GoString(C.mmkit_feature_name(C.enum_mmkit_feature_id(id))),
			Status:  C.GoString(C.mmkit_status_name(one.status)),
			Backend: C.GoString(&one.backend[0]),
			Reason:  C.GoString(&one.reason[0]),
		})
	}
	return out, nil
}

// cString is s as a C string for the length of a call; the caller frees it.
// A NUL byte inside s cannot reach C: it is refused, as the C call would
// refuse the name it cuts short.
func cString(op, s string) (*C.char, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, invalid(op, "a NUL byte inside the string")
	}
	return C.CString(s), nil
}
