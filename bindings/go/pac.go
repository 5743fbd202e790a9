// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

/*
#include "shim.h"
*/
import "C"

import (
	"runtime"
)

// The pointer-authentication keys (arm64).
const (
	PACAPIAKey = C.MMKIT_PAC_APIAKEY
	PACAPIBKey = C.MMKIT_PAC_APIBKEY
	PACAPDAKey = C.MMKIT_PAC_APDAKEY
	PACAPDBKey = C.MMKIT_PAC_APDBKEY
	PACAllKeys = C.MMKIT_PAC_ALL_KEYS
)

// PACGetEnabledKeys returns the keys enabled for the calling OS thread
// (mmkit_pac(3)); syscall.EOPNOTSUPP anywhere but arm64 with pointer
// authentication.  Keys belong to threads: call runtime.LockOSThread
// first and keep the goroutine on its thread for as long as the keys
// matter, or the answer is another thread's.
func PACGetEnabledKeys() (uint64, error) {
	var keys C.ulong
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := checkResult("mmkit_pac_get_enabled_keys", C.mmkit_go_pac_get_enabled_keys(&keys)); err != nil {
		return 0, err
	}
	return uint64(keys), nil
}

// PACSetEnabledKeys enables the keys of mask that are set in enabled and
// disables the others, for the calling OS thread and the threads it
// creates later.  Call runtime.LockOSThread first: Go starts threads of its
// own, and a goroutine may run on any of them.
func PACSetEnabledKeys(mask, enabled uint64) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return checkResult("mmkit_pac_set_enabled_keys",
		C.mmkit_go_pac_set_enabled_keys(C.ulong(mask), C.ulong(enabled)))
}
