// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

/*
#include "shim.h"
*/
import "C"

import (
	"fmt"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Secret is memory for a key or a password from the mmkit secret
// allocator (mmkit_secret(3)): on memfd_secret(2) pages, out of the
// kernel's direct map, never swapped or dumped, between guard pages;
// where memfd_secret is unavailable, on the announced mlock fallback.
// Small secrets share pooled chunks; NewPageSecret gives one its own
// pages, which Freeze and Melt can protect.
//
// The memory is C memory, invisible to the garbage collector: Bytes is
// valid until Destroy, and nothing frees it but Destroy.  A Secret that is
// collected without Destroy is counted (LeakedSecrets), the first one
// reported on standard error, and its memory stays allocated (a slice
// from Bytes may still point into it).
type Secret struct {
	mu    sync.Mutex
	p     unsafe.Pointer // nil once destroyed
	size  int
	pages bool
}

// NewSecret allocates size zeroed bytes of secret memory.  Size 0 gives
// an empty Secret: it holds no memory, Bytes is empty, Freeze, Melt and
// Seal have nothing to refuse.
func NewSecret(size int) (*Secret, error) {
	return newSecret(size, 0)
}

// NewPageSecret allocates size zeroed bytes of secret memory on pages of
// its own between guard pages (MMKIT_SECRET_PAGES): Freeze and Melt work on
// it.  It costs at least a page of RLIMIT_MEMLOCK.
func NewPageSecret(size int) (*Secret, error) {
	return newSecret(size, C.MMKIT_SECRET_PAGES)
}

// emptySecret is where an empty Secret's Bytes points: no memory of the
// allocator, which refuses size 0.
var emptySecret byte

func newSecret(size int, flags C.uint) (*Secret, error) {
	if size < 0 {
		return nil, invalid("mmkit_secret_alloc", fmt.Sprintf("size %d is negative", size))
	}
	// An empty secret holds no memory and makes no C call, as in the Rust
	// and Python bindings (memguard's NewBuffer(0) is empty too).
	if size == 0 {
		return &Secret{p: unsafe.Pointer(&emptySecret), pages: flags&C.MMKIT_SECRET_PAGES != 0}, nil
	}
	r := C.mmkit_go_secret_alloc(C.size_t(size), flags)
	if err := check("mmkit_secret_alloc", r.ret, r.msg); err != nil {
		return nil, err
	}
	s := &Secret{p: r.p, size: size, pages: flags&C.MMKIT_SECRET_PAGES != 0}
	runtime.SetFinalizer(s, reportLeak)
	return s, nil
}

// leaked counts the Secrets collected without Destroy.
var leaked atomic.Uint64

// LeakedSecrets is how many Secrets were garbage-collected without
// Destroy: their memory stays allocated (and locked) for good.
func LeakedSecrets() uint64 { return leaked.Load() }

// reportLeak is the finalizer: it only counts, and says so the first time.
// Freeing here could pull the memory from under a slice of Bytes that is
// still in use.
func reportLeak(s *Secret) {
	if s.p != nil && leaked.Add(1) == 1 {
		fmt.Fprintf(os.Stderr, "mmkit: a Secret of %d bytes was garbage-collected without Destroy; "+
			"its memory stays allocated (mmkit.LeakedSecrets counts them)\n", s.size)
	}
}

// Bytes is the secret's memory, valid until Destroy (nil after it).  Write
// into it (copy), never append to it: append would move the data into
// memory the garbage collector owns.
func (s *Secret) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(s.p), s.size)
}

// Size is the size asked for.
func (s *Secret) Size() int { return s.size }

// IsAlive reports whether Destroy has not been called yet.
func (s *Secret) IsAlive() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p != nil
}

// Destroy checks the canaries, wipes and frees the memory.  Calling it
// again does nothing.  A damaged canary (a write past the end) aborts the
// process, as mmkit_secret_free(3) does.  A frozen secret is made writable
// first.
func (s *Secret) Destroy() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p == nil {
		return
	}
	if s.size == 0 {
		s.p = nil
		return
	}
	if s.pages {
		C.mmkit_go_secret_protect(s.p, C.MMKIT_SECRET_READWRITE)
	}
	C.mmkit_secret_free(s.p)
	s.p = nil
	runtime.SetFinalizer(s, nil)
}

// Freeze makes a page secret read-only; a write then faults.
func (s *Secret) Freeze() error { return s.protect(C.MMKIT_SECRET_READONLY) }

// Melt makes a page secret writable again.
func (s *Secret) Melt() error { return s.protect(C.MMKIT_SECRET_READWRITE) }

// Seal makes a page secret inaccessible: a read or a write faults until
// Melt or Freeze.
func (s *Secret) Seal() error { return s.protect(C.MMKIT_SECRET_NOACCESS) }

func (s *Secret) protect(access C.int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p == nil {
		return invalid("mmkit_secret_protect", "the secret was destroyed")
	}
	if s.size == 0 {
		return nil
	}
	return checkResult("mmkit_secret_protect", C.mmkit_go_secret_protect(s.p, access))
}

// SecretStats is what the allocator holds and how (mmkit_secret_stats(3)).
type SecretStats struct {
	Backend      string // "memfd_secret", "mlock" or "none"
	Reason       string
	LastError    string
	AllocsLive   uint64
	BytesLive    uint64
	PagesMapped  uint64
	BytesLocked  uint64
	MemlockLimit uint64 // MemlockUnlimited when there is none
	Fallback     bool
}

// MemlockUnlimited is an RLIMIT_MEMLOCK of infinity.
const MemlockUnlimited = ^uint64(0)

// SecretStatistics reports the allocator's figures.
func SecretStatistics() (SecretStats, error) {
	var st C.struct_mmkit_secret_stats
	if err := checkResult("mmkit_secret_stats", C.mmkit_go_secret_stats(&st)); err != nil {
		return SecretStats{}, err
	}
	return SecretStats{
		Backend:      C.GoString(&st.backend[0]),
		Reason:       C.GoString(&st.reason[0]),
		LastError:    C.GoString(&st.last_error[0]),
		AllocsLive:   uint64(st.allocs_live),
		BytesLive:    uint64(st.bytes_live),
		PagesMapped:  uint64(st.pages_mapped),
		BytesLocked:  uint64(st.bytes_locked),
		MemlockLimit: uint64(st.memlock_limit),
		Fallback:     st.fallback != 0,
	}, nil
}
