// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

/*
#include <errno.h>
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"unsafe"
)

// Flags of Lock and LockAll (mmkit_lock(3)).
const (
	LockOnFault = C.MMKIT_LOCK_ONFAULT // lock pages as they are faulted in
	LockCurrent = C.MMKIT_LOCK_CURRENT // LockAll: what is mapped now
	LockFuture  = C.MMKIT_LOCK_FUTURE  // LockAll: what is mapped later
)

// Memlock is what a lock request costs against RLIMIT_MEMLOCK, in bytes.
type Memlock struct {
	Limit  uint64 // the soft limit, or MemlockUnlimited
	Locked uint64 // already locked by this process
	Needed uint64 // what the request adds to the charge
	Exempt bool   // CAP_IPC_LOCK: the limit does not apply
	Fits   bool   // the request would succeed
}

func span(b []byte) (C.uintptr_t, C.size_t) {
	if len(b) == 0 {
		return 0, 0
	}
	return C.uintptr_t(uintptr(unsafe.Pointer(&b[0]))), C.size_t(len(b))
}

// Lock locks the pages of b (mlock2; LockOnFault: as they are faulted in)
// after checking RLIMIT_MEMLOCK: syscall.ENOMEM without calling the kernel
// when the lock would not fit, the figures in the message.
func Lock(b []byte, flags uint) error {
	addr, n := span(b)
	return checkResult("mmkit_lock", C.mmkit_go_lock(addr, n, C.uint(flags)))
}

// Unlock unlocks the pages of b.
func Unlock(b []byte) error {
	addr, n := span(b)
	return checkResult("mmkit_unlock", C.mmkit_go_unlock(addr, n))
}

// LockAll is mlockall with LockCurrent, LockFuture and LockOnFault, checked
// against RLIMIT_MEMLOCK first.  With LockFuture every later mapping of the
// Go runtime is locked too: its heap growth then fails once the limit is
// reached.
func LockAll(flags uint) error {
	return checkResult("mmkit_lockall", C.mmkit_go_lockall(C.uint(flags)))
}

// UnlockAll is munlockall.
func UnlockAll() error {
	return checkResult("mmkit_unlockall", C.mmkit_go_unlockall())
}

// MemlockCheck tells what locking b would cost and whether it fits (Fits):
// "does not fit" is an answer, not an error, as in the Rust and Python
// bindings; the error is for a check that could not be made.  An empty b
// gives the current state.
func MemlockCheck(b []byte) (Memlock, error) {
	var m C.struct_mmkit_memlock
	addr, n := span(b)
	r := C.mmkit_go_memlock_check(addr, n, &m)
	if r.ret == -C.ENOMEM {
		C.free(unsafe.Pointer(r.msg))
	} else if err := checkResult("mmkit_memlock_check", r); err != nil {
		return Memlock{}, err
	}
	return Memlock{
		Limit:  uint64(m.limit),
		Locked: uint64(m.locked),
		Needed: uint64(m.needed),
		Exempt: m.exempt != 0,
		Fits:   r.ret == 0,
	}, nil
}
