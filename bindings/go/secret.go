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
//
// Use a *Secret, never a Secret copied by value: the copy would outlive the
// original, which the collector then reports leaked (go vet's copylocks
// check reports such a copy).  The zero Secret, and a nil *Secret, read as
// destroyed.
type Secret struct {
	_ noCopy
	c *secret
}

// noCopy has the methods go vet's copylocks check looks for: a Secret
// copied by value is reported.
type noCopy struct{}

func (*noCopy) Lock()   {}
func (*noCopy) Unlock() {}

// core is the Secret's state, nil for the zero Secret and a nil *Secret:
// the methods of secret read a nil one as destroyed.
func (s *Secret) core() *secret {
	if s == nil {
		return nil
	}
	return s.c
}

// secret is a Secret's state.  The registry holds it (in a batch), so that
// Purge reaches every live one; the caller holds the *Secret, which the
// registry does not, so that the collector can tell when one was dropped.
//
// Allocation and Destroy take no lock: p is published, and swapped for
// dead, atomically.  The calls that read or write through p (Copy, Wipe,
// EqualTo, Freeze ...) count themselves in users first and hold its lock
// among themselves; Destroy, once it swapped p, waits for users to drop
// to 0.
type secret struct {
	p      uintptr // the memory's address: 0 until published, dead once destroyed
	size   int
	users  atomic.Int32 // calls through p in progress
	access C.int        // under lock: MMKIT_SECRET_READWRITE, READONLY or NOACCESS
}

// locks are the secrets' locks, a secret's chosen by its state's address:
// a mutex in each state made every secret a third bigger for calls that
// are rare beside NewSecret and Destroy, and brief.  No call holds two.
var locks [64]sync.Mutex

// lock is the lock of the calls through s.p.
func (s *secret) lock() *sync.Mutex {
	return &locks[uintptr(unsafe.Pointer(s))/unsafe.Sizeof(*s)%uintptr(len(locks))]
}

// dead is p once the secret is destroyed: not 0, so that a batch tells a
// destroyed secret from one not yet published, and no secret's address.
//
// An address, not a pointer: the memory is C's (or emptySecret, which
// never moves), and states without a pointer are memory the garbage
// collector does not scan: scanning them cost a NewSecret+Destroy a tenth.
const dead = 1

// pointer is the memory at address p.  Read through a pointer, because go
// vet takes every unsafe.Pointer(uintptr) conversion for a misuse.
func pointer(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

// alive is p, or nil once destroyed (or for no secret at all).
func (s *secret) alive() unsafe.Pointer {
	if s == nil {
		return nil
	}
	if p := atomic.LoadUintptr(&s.p); p != dead {
		return pointer(p)
	}
	return nil
}

// use counts a call through p in, under lock, and gives p; nil, counting
// nothing, if the secret is dead.
func (s *secret) use() unsafe.Pointer {
	if s == nil {
		return nil
	}
	s.users.Add(1)
	p := s.alive()
	if p == nil {
		s.users.Add(-1)
	}
	return p
}

// unuse counts a call through p out.
func (s *secret) unuse() { s.users.Add(-1) }

// release makes the secret dead and gives its memory, writable, to be
// freed; nil if it was dead already.  Nothing reaches the memory through s
// after it: a call through p either counted itself in before the swap,
// and release waits for it, or sees the secret dead.
func (s *secret) release() unsafe.Pointer {
	for {
		p := s.alive()
		if p == nil {
			return nil
		}
		if !atomic.CompareAndSwapUintptr(&s.p, uintptr(p), dead) {
			continue
		}
		for s.users.Load() != 0 {
			runtime.Gosched()
		}
		if s.access != C.MMKIT_SECRET_READWRITE && s.size > 0 {
			// It cannot fail on a live page secret; if it did, the
			// wipe would fault, as a write to a frozen secret does.
			_ = checkResult("mmkit_secret_protect", C.mmkit_go_secret_protect(p, C.MMKIT_SECRET_READWRITE))
		}
		return p
	}
}

// slabSize is how many Secrets share one allocation, and one leak watch
// (watch): one per Secret cost more than the C allocation itself, and an
// allocation per Secret as much.  Their states share another (a batch),
// which the slab points to and the registry holds, so that a live state
// does not keep the Secrets of its slab from the collector.
const slabSize = 64

type slab struct {
	secrets [slabSize]Secret
	batch   *batch
}

// Secrets of 1 to reserveMax bytes are allocated ahead, many in one call
// into C (mmkit_secret_alloc_many(3)): a cgo call costs more than the
// allocation it makes.  Each of these sizes has batches of its own, whose
// states a fill gives memory ahead of their claims: at most reserveBytes,
// and in a size's first batch no more than were claimed in it so far.
const (
	reserveMax   = 512
	reserveBytes = 4096
	fillMax      = 32
)

// batch is the states of one slab's Secrets, which next hands out in turn.
type batch struct {
	cores [slabSize]secret
	next  atomic.Int32
	mu    sync.Mutex // fill and close
	end   int32      // under mu: the states from end on are never handed out
	warm  bool       // its size filled a batch before: fill as much as reserveBytes allows
	// Under mu, where a fill has C store the addresses: addresses, not
	// pointers, for cgo checks a pointer array on every call.
	addrs [fillMax]uintptr
}

// done reports whether every secret of the batch was handed out, and
// destroyed since, or will never be handed out (close).
func (b *batch) done() bool {
	for i := range b.cores {
		if atomic.LoadUintptr(&b.cores[i].p) != dead {
			return false
		}
	}
	return true
}

// full reports whether every state of the batch was claimed: none was
// left unclaimed by close.
func (b *batch) full() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.end == slabSize
}

// fill allocates the memory of state i, which the caller claimed, and of
// the states after it not filled yet, ahead of their claims, in one call
// into C.  A failed fill marks state i dead, so that the batch can be done.
func (b *batch) fill(i int32, size int) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if atomic.LoadUintptr(&b.cores[i].p) != 0 {
		return nil // by the fill of an earlier claim
	}
	n := int32(fillMax)
	if reserveBytes/size < fillMax {
		n = int32(reserveBytes / size)
	}
	if !b.warm && n > i+1 {
		n = i + 1
	}
	if n > b.end-i {
		n = b.end - i
	}
	for j := i + 1; j < i+n; j++ {
		if atomic.LoadUintptr(&b.cores[j].p) != 0 {
			n = j - i
			break
		}
	}
	r := C.mmkit_go_secret_alloc_many((*C.uintptr_t)(unsafe.Pointer(&b.addrs[0])), C.size_t(n), C.size_t(size))
	if err := checkResult("mmkit_secret_alloc_many", r); err != nil {
		atomic.StoreUintptr(&b.cores[i].p, dead)
		return err
	}
	for j := int32(0); j < int32(r.ret); j++ {
		c := &b.cores[i+j]
		c.size, c.access = size, C.MMKIT_SECRET_READWRITE
		atomic.StoreUintptr(&c.p, b.addrs[j])
	}
	return nil
}

// close ends the batch's handing out: a claim after it gets a new batch,
// the states not claimed yet are never handed out, and the memory filled
// for them ahead is freed.
func (b *batch) close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := b.next.Load()
	for n < slabSize && !b.next.CompareAndSwap(n, slabSize) {
		n = b.next.Load()
	}
	for j := n; j < b.end; j++ {
		c := &b.cores[j]
		if atomic.LoadUintptr(&c.p) == 0 {
			atomic.StoreUintptr(&c.p, dead)
		} else {
			c.destroy()
		}
	}
	if n < b.end {
		b.end = n
	}
}

// current is, for each size up to reserveMax, the slab and batch that
// NewSecret takes from; current[0] is the one of every other secret (empty,
// bigger, page secrets, NewSecretFromReader's).  A claim is an index from
// next, without a lock; the registry lock only starts the next pair.
var current [reserveMax + 1]atomic.Pointer[slab]

// registry is every batch that may hold a live secret, for Purge.  It is
// swept of the done ones when it has doubled since the last sweep.
var registry struct {
	mu      sync.Mutex
	batches []*batch
	sweep   int
}

// NewSecret allocates size zeroed bytes of secret memory.  Size 0 gives
// an empty Secret: it holds no memory, Bytes is empty, Freeze, NoAccess and
// Melt have nothing to refuse; Destroy and Purge end it as any other.
//
// Secrets of up to 512 bytes are allocated ahead, many at a time in one
// call into C: of each size, up to 4 KiB (and no more than the secrets of
// that size made so far) may be allocated, zeroed and waiting for the next
// NewSecret of that size.  Purge frees them too.
func NewSecret(size int) (*Secret, error) {
	if size > 0 && size <= reserveMax {
		return reserved(size)
	}
	return newSecret(size, 0)
}

// NewPageSecret allocates size zeroed bytes of secret memory on pages of
// its own between guard pages (MMKIT_SECRET_PAGES): Freeze, NoAccess and
// Melt work on it.  It costs at least a page of RLIMIT_MEMLOCK.
func NewPageSecret(size int) (*Secret, error) {
	return newSecret(size, C.MMKIT_SECRET_PAGES)
}

// emptySecret is where an empty Secret's Bytes points: no memory of the
// allocator, which refuses size 0.
var emptySecret byte

func newSecret(size int, flags C.uint) (*Secret, error) {
	p, err := allocSecret(size, flags)
	if err != nil {
		return nil, err
	}
	return register(p, size), nil
}

// reserved makes a Secret of size bytes (1 to reserveMax) from the current
// batch of that size, whose memory a fill may have allocated already.
func reserved(size int) (*Secret, error) {
	for {
		cur := current[size].Load()
		if cur != nil {
			if i := cur.batch.next.Add(1) - 1; i < slabSize {
				c := &cur.batch.cores[i]
				if atomic.LoadUintptr(&c.p) == 0 {
					if err := cur.batch.fill(i, size); err != nil {
						return nil, err
					}
				}
				return &cur.secrets[i], nil
			}
		}
		nextBatch(size, cur)
	}
}

// allocSecret allocates the memory of a secret, which no Purge reaches
// until it is registered.
func allocSecret(size int, flags C.uint) (unsafe.Pointer, error) {
	if size < 0 {
		return nil, invalid("mmkit_secret_alloc", fmt.Sprintf("size %d is negative", size))
	}
	// An empty secret holds no memory and makes no C call, as in the Rust
	// and Python bindings (memguard's NewBuffer(0) is empty too); it is
	// registered as any other, so that Purge ends it too.
	if size == 0 {
		return unsafe.Pointer(&emptySecret), nil
	}
	r := C.mmkit_go_secret_alloc(C.size_t(size), flags)
	if err := check("mmkit_secret_alloc", r.ret, r.msg); err != nil {
		return nil, err
	}
	return r.p, nil
}

// freeSecret checks the canaries of p, wipes and frees it (mmkit_secret_free).
func freeSecret(p unsafe.Pointer, size int) {
	if size > 0 {
		C.mmkit_go_secret_free(C.uintptr_t(uintptr(p)))
	}
}

// register makes the Secret of p, just allocated, taking the next one of
// the current slab and batch of every size (current[0]).
func register(p unsafe.Pointer, size int) *Secret {
	for {
		cur := current[0].Load()
		if cur != nil {
			if i := cur.batch.next.Add(1) - 1; i < slabSize {
				c := &cur.batch.cores[i]
				c.size, c.access = size, C.MMKIT_SECRET_READWRITE
				atomic.StoreUintptr(&c.p, uintptr(p))
				return &cur.secrets[i]
			}
		}
		nextBatch(0, cur)
	}
}

// nextBatch starts a new slab and batch for current[key], unless another
// goroutine already replaced cur.
func nextBatch(key int, cur *slab) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if current[key].Load() != cur {
		return
	}
	if len(registry.batches) >= registry.sweep {
		kept := registry.batches[:0]
		for _, b := range registry.batches {
			if !b.done() {
				kept = append(kept, b)
			}
		}
		for i := len(kept); i < len(registry.batches); i++ {
			registry.batches[i] = nil
		}
		registry.batches = kept
		registry.sweep = 2*len(kept) + 8
	}
	next := &slab{batch: &batch{end: slabSize, warm: cur != nil && cur.batch.full()}}
	for i := range next.secrets {
		next.secrets[i].c = &next.batch.cores[i]
	}
	watch(next, next.batch)
	registry.batches = append(registry.batches, next.batch)
	current[key].Store(next)
}

// leaked counts the Secrets collected without Destroy.
var leaked atomic.Uint64

// LeakedSecrets is how many Secrets were garbage-collected without
// Destroy: their memory stays allocated (and locked) until Purge.  The
// count is taken when the collector frees the Secrets allocated around
// them too: 64 Secrets of the same size (or, for sizes above 512 bytes,
// page secrets, empty ones and NewSecretFromReader's, of any of these) are
// watched as one.
func LeakedSecrets() uint64 { return leaked.Load() }

// reportLeaks runs once none of the Secrets of b's slab is reachable
// (watch): it only counts the secrets of b never destroyed, and says so the
// first time.  Every state of b was handed out by then, or never will be
// (dead): the slab is no longer current.  Freeing here could pull the
// memory from under a slice of Bytes that is still in use; an empty secret
// holds none, and ends quietly.
func reportLeaks(b *batch) {
	for i := range b.cores {
		c := &b.cores[i]
		if c.alive() == nil {
			continue
		}
		if c.size == 0 {
			c.destroy()
			continue
		}
		if leaked.Add(1) == 1 {
			fmt.Fprintf(os.Stderr, "mmkit: a Secret of %d bytes was garbage-collected without Destroy; "+
				"its memory stays allocated until Purge (mmkit.LeakedSecrets counts them)\n", c.size)
		}
	}
}

// Bytes is the secret's memory, valid until Destroy (nil after it).  Write
// into it (copy), never append to it: append would move the data into
// memory the garbage collector owns.
func (s *Secret) Bytes() []byte {
	c := s.core()
	p := c.alive()
	if p == nil {
		return nil
	}
	return unsafe.Slice((*byte)(p), c.size)
}

// Size is the size asked for (0 for the zero Secret).
func (s *Secret) Size() int {
	if c := s.core(); c != nil {
		return c.size
	}
	return 0
}

// IsAlive reports whether Destroy (or Purge) has not been called yet.
func (s *Secret) IsAlive() bool { return s.core().alive() != nil }

// IsMutable reports whether the secret is alive and writable: not frozen,
// not made inaccessible.
func (s *Secret) IsMutable() bool {
	c := s.core()
	if c == nil {
		return false
	}
	l := c.lock()
	l.Lock()
	defer l.Unlock()
	return c.alive() != nil && c.access == C.MMKIT_SECRET_READWRITE
}

// Destroy checks the canaries, wipes and frees the memory.  Calling it
// again does nothing.  A damaged canary (a write past the end) aborts the
// process, as mmkit_secret_free(3) does.  A frozen secret is made writable
// first.
func (s *Secret) Destroy() { s.core().destroy() }

func (s *secret) destroy() {
	if p := s.release(); p != nil {
		freeSecret(p, s.size)
	}
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
	c := s.core()
	if c == nil {
		return invalid("mmkit_secret_protect", "the secret was destroyed")
	}
	l := c.lock()
	l.Lock()
	defer l.Unlock()
	p := c.use()
	if p == nil {
		return invalid("mmkit_secret_protect", "the secret was destroyed")
	}
	defer c.unuse()
	if c.size > 0 {
		if err := checkResult("mmkit_secret_protect", C.mmkit_go_secret_protect(p, access)); err != nil {
			return err
		}
	}
	c.access = access
	return nil
}

// SecretStats is what the allocator holds and how (mmkit_secret_stats(3)).
type SecretStats struct {
	Backend      string // "memfd_secret", "mlock" or "none"
	Reason       string
	LastError    string
	AllocsLive   uint64 // AllocsAhead included
	BytesLive    uint64
	AllocsAhead  uint64 // allocated ahead by NewSecret, not handed out yet
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
		AllocsAhead:  allocsAhead(),
	}, nil
}

// allocsAhead counts the secrets a fill allocated ahead that no NewSecret
// claimed yet.
func allocsAhead() uint64 {
	var n uint64
	for size := 1; size <= reserveMax; size++ {
		cur := current[size].Load()
		if cur == nil {
			continue
		}
		for i := cur.batch.next.Load(); i < slabSize; i++ {
			if cur.batch.cores[i].alive() != nil {
				n++
			}
		}
	}
	return n
}
