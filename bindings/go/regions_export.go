// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

/*
#include "shim.h"
*/
import "C"

import "runtime/cgo"

// goRegion receives each region of mmkit_go_regions (shim.c); handle is the
// cgo.Handle of the regionWalk.  A file with //export may only declare C in
// its preamble, hence a file of its own.
//
//export goRegion
func goRegion(r *C.struct_mmkit_region, handle C.uintptr_t) C.int {
	w := cgo.Handle(handle).Value().(*regionWalk)
	w.regions = append(w.regions, Region{
		Start:        uintptr(r.start),
		End:          uintptr(r.end),
		Kind:         RegionKind(r.kind),
		Perms:        C.GoString(&r.perms[0]),
		Name:         C.GoString(&r.name[0]),
		Size:         uint64(r.size),
		Rss:          uint64(r.rss),
		Pss:          uint64(r.pss),
		PrivateDirty: uint64(r.private_dirty),
		Swap:         uint64(r.swap),
		Locked:       uint64(r.locked),
		HavePss:      r.have&C.MMKIT_REGION_HAVE_PSS != 0,
		HaveSwap:     r.have&C.MMKIT_REGION_HAVE_SWAP != 0,
	})
	return 0
}
