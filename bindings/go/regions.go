// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"runtime/cgo"
)

// RegionKind says what a region is.
type RegionKind int

// The kinds of region, as enum mmkit_region_kind.
const (
	RegionAnon      RegionKind = C.MMKIT_REGION_ANON       // anonymous, no name
	RegionAnonNamed RegionKind = C.MMKIT_REGION_ANON_NAMED // named by the kernel
	RegionRegistry  RegionKind = C.MMKIT_REGION_REGISTRY   // named through mmkit's registry
	RegionFile      RegionKind = C.MMKIT_REGION_FILE       // file-backed: Name is the path
	RegionHeap      RegionKind = C.MMKIT_REGION_HEAP       // [heap]
	RegionStack     RegionKind = C.MMKIT_REGION_STACK      // [stack]
	RegionSpecial   RegionKind = C.MMKIT_REGION_SPECIAL    // [vdso], [vvar], ...
)

// Region is one mapping of a process, or the part of one that a registry
// name covers (mmkit_regions(3)).  Sizes are bytes.
type Region struct {
	Start, End   uintptr
	Kind         RegionKind
	Perms        string // "rw-p"
	Name         string // the name as given to Name, the path of a file, or [heap] and the like
	Size         uint64
	Rss          uint64
	Pss          uint64 // 0 unless HavePss
	PrivateDirty uint64
	Swap         uint64 // 0 unless HaveSwap
	Locked       uint64
	HavePss      bool // the kernel gave Pss
	HaveSwap     bool // the kernel gave Swap
}

// Named reports whether the region has a name given by Name, from the
// kernel or the registry.
func (r *Region) Named() bool {
	return r.Kind == RegionAnonNamed || r.Kind == RegionRegistry
}

type regionWalk struct {
	regions []Region
}

// Regions lists the mappings of process pid (0: this one) in address order,
// with their names, from the kernel or mmkit's registry.  Reading another
// user's process needs the rights ptrace would: errors.Is(err,
// fs.ErrPermission) when they are missing, syscall.ESRCH when there is no
// such process.
func Regions(pid int) ([]Region, error) {
	// A negative pid is the library's to refuse; one pid_t cannot hold is not.
	if pid != int(C.pid_t(pid)) {
		return nil, invalid("mmkit_regions", fmt.Sprintf("pid %d is out of range", pid))
	}
	w := &regionWalk{}
	h := cgo.NewHandle(w)
	defer h.Delete()
	if err := checkResult("mmkit_regions", C.mmkit_go_regions(C.pid_t(pid), C.uintptr_t(h))); err != nil {
		return nil, err
	}
	return w.regions, nil
}
