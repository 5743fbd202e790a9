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
// pages, which Freeze, NoAccess and Melt can protect.
//
// The memory is C memory, invisible to the garbage collector: Bytes is
// valid until Destroy (or Purge), and nothing else frees it.  A Secret
// that is collected without Destroy is counted (LeakedSecrets), the first
// one reported on standard error; its memory stays allocated (a slice from
// Bytes may still point into it) until Purge.
type Secret struct {
	*secret
}

// secret is a Secret's state.  The registry holds it, so that Purge
// reaches every live one; the caller holds the *Secret, which the registry
// does not, so that the collector can tell when one was dropped.
type secret struct {
	mu     sync.Mutex     // held to free p and to write through it
	p      unsafe.Pointer // nil once destroyed; written atomically, under mu
	size   int
	pages  bool
	access C.int // MMKIT_SECRET_READWRITE, READONLY or NOACCESS, under mu
}

// alive reads p without the lock (Bytes, IsAlive: one load, no lock).
func (s *secret) alive() unsafe.Pointer { return atomic.LoadPointer(&s.p) }

// slabSize is how many Secrets share one allocation, and one finalizer:
// a finalizer per Secret cost more than the C allocation itself, and an
// allocation per Secret as much.  Their states share another: a live one
// must not keep the Secrets of its slab from the collector.
const slabSize = 64

type (
	slab  [slabSize]Secret
	cores [slabSize]secret
)

// registry is every live secret (and destroyed ones not yet swept out),
// and the slab that the next Secrets are taken from.  Destroy does not
// touch it: NewSecret sweeps the destroyed ones out when the list has
// doubled since the last sweep, so a pair of NewSecret and Destroy takes
// the global lock once.
var registry struct {
	mu    sync.Mutex
	live  []*secret
	sweep int // sweep when live reaches this length
	slab  *slab
	cores *cores
	used  int
}

// NewSecret allocates size zeroed bytes of secret memory.
func NewSecret(size int) (*Secret, error) {
	return newSecret(size, 0)
}

// NewPageSecret allocates size zeroed bytes of secret memory on pages of
// its own between guard pages (MMKIT_SECRET_PAGES): Freeze, NoAccess and
// Melt work on it.  It costs at least a page of RLIMIT_MEMLOCK.
func NewPageSecret(size int) (*Secret, error) {
	return newSecret(size, C.MMKIT_SECRET_PAGES)
}

func newSecret(size int, flags C.uint) (*Secret, error) {
	if size <= 0 {
		return nil, invalid("mmkit_secret_alloc", fmt.Sprintf("size %d: must be at least 1", size))
	}
	r := C.mmkit_go_secret_alloc(C.size_t(size), flags)
	if err := check("mmkit_secret_alloc", r.ret, r.msg); err != nil {
		return nil, err
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if len(registry.live) >= registry.sweep {
		kept := registry.live[:0]
		for _, o := range registry.live {
			if o.alive() != nil {
				kept = append(kept, o)
			}
		}
		for i := len(kept); i < len(registry.live); i++ {
			registry.live[i] = nil
		}
		registry.live = kept
		registry.sweep = 2*len(kept) + slabSize
	}
	if registry.slab == nil || registry.used == slabSize {
		registry.slab = new(slab)
		registry.cores = new(cores)
		registry.used = 0
		runtime.SetFinalizer(registry.slab, reportLeaks)
	}
	c := &registry.cores[registry.used]
	c.p, c.size, c.pages, c.access = r.p, size, flags&C.MMKIT_SECRET_PAGES != 0, C.MMKIT_SECRET_READWRITE
	registry.live = append(registry.live, c)
	s := &registry.slab[registry.used]
	registry.used++
	s.secret = c
	return s, nil
}

// leaked counts the Secrets collected without Destroy.
var leaked atomic.Uint64

// LeakedSecrets is how many Secrets were garbage-collected without
// Destroy: their memory stays allocated (and locked) until Purge.  The
// count is taken when the collector frees the Secrets allocated around
// them too (they share one finalizer, by slabSize).
func LeakedSecrets() uint64 { return leaked.Load() }

// reportLeaks is the finalizer of a slab, run once none of its Secrets is
// reachable: it only counts those never destroyed, and says so the first
// time.  Freeing here could pull the memory from under a slice of Bytes
// that is still in use.
func reportLeaks(sl *slab) {
	for i := range sl {
		if sl[i].secret == nil || !sl[i].IsAlive() {
			continue
		}
		if leaked.Add(1) == 1 {
			fmt.Fprintf(os.Stderr, "mmkit: a Secret of %d bytes was garbage-collected without Destroy; "+
				"its memory stays allocated until Purge (mmkit.LeakedSecrets counts them)\n", sl[i].size)
		}
	}
}

// Bytes is the secret's memory, valid until Destroy (nil after it).  Write
// into it (copy), never append to it: append would move the data into
// memory the garbage collector owns.
func (s *Secret) Bytes() []byte {
	p := s.alive()
	if p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(p), s.size)
}

// Size is the size asked for.
func (s *Secret) Size() int { return s.size }

// IsAlive reports whether Destroy (or Purge) has not been called yet.
func (s *Secret) IsAlive() bool { return s.alive() != nil }

// IsMutable reports whether the secret is alive and writable: not frozen,
// not made inaccessible.
func (s *Secret) IsMutable() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.p != nil && s.access == C.MMKIT_SECRET_READWRITE
}

// Destroy checks the canaries, wipes and frees the memory.  Calling it
// again does nothing.  A damaged canary (a write past the end) aborts the
// process, as mmkit_secret_free(3) does.  A frozen secret is made writable
// first.
func (s *Secret) Destroy() { s.destroy() }

func (s *secret) destroy() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p == nil {
		return
	}
	if s.access != C.MMKIT_SECRET_READWRITE {
		C.mmkit_go_secret_protect(s.p, C.MMKIT_SECRET_READWRITE)
	}
	C.mmkit_go_secret_free(C.uintptr_t(uintptr(s.p)))
	atomic.StorePointer(&s.p, nil)
}

// Freeze makes a page secret read-only; a write then faults.
func (s *Secret) Freeze() error { return s.protect(C.MMKIT_SECRET_READONLY) }

// Melt makes a page secret writable again.
func (s *Secret) Melt() error { return s.protect(C.MMKIT_SECRET_READWRITE) }

// NoAccess makes a page secret inaccessible: a read or a write faults until
// Melt or Freeze.  (memguard's Seal is another thing: it encrypts a buffer
// into an Enclave and destroys it; mmkit has no Enclave.)
func (s *Secret) NoAccess() error { return s.protect(C.MMKIT_SECRET_NOACCESS) }

func (s *Secret) protect(access C.int) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.p == nil {
		return invalid("mmkit_secret_protect", "the secret was destroyed")
	}
	if err := checkResult("mmkit_secret_protect", C.mmkit_go_secret_protect(s.p, access)); err != nil {
		return err
	}
	s.access = access
	return nil
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
