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
	"syscall"
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
// does not keep the Secrets of its slab from the collector.  Every secret,
// whatever its size, takes the next Secret of the current slab: a leaked
// one is reported once 63 more were made, of any size.
const slabSize = 64

type slab struct {
	secrets [slabSize]Secret
	batch   *batch
}

// batch is the states of one slab's Secrets, which next hands out in turn.
type batch struct {
	cores [slabSize]secret
	next  atomic.Int32
}

// done reports whether every secret of the batch was handed out, and
// destroyed since.
func (b *batch) done() bool {
	for i := range b.cores {
		if atomic.LoadUintptr(&b.cores[i].p) != dead {
			return false
		}
	}
	return true
}

// Secrets of 1 to reserveMax bytes are allocated ahead, many in one call
// into C (mmkit_secret_alloc_many(3)): a cgo call costs more than the
// allocation it makes.  Each of these sizes keeps the addresses of its
// own (a reserve): at most reserveBytes of a size, no more than were made
// of it since the last drain, and aheadMax of all sizes together.
const (
	reserveMax   = 512
	reserveBytes = 4096
	aheadMax     = 64 << 10
	fillMax      = 32
)

// reserve is the memory allocated ahead for the secrets of one size: the
// current lot, from which a claim takes an address without a lock, the
// lock only to fill the next one.
type reserve struct {
	lot    atomic.Pointer[lot]
	mu     sync.Mutex // fill and drain
	made   int        // under mu: secrets of the size made since the last drain (the lot's uncounted)
	filled int        // under mu: bytes the lot's fill put ahead, counted in aheadBytes
}

// lot is the addresses of one fill, which next hands out in turn; written
// before the lot is published, never after.  A new one per fill: a claim
// may still count itself in an exhausted lot.
type lot struct {
	next  atomic.Int32
	n     int32
	addrs [fillMax]uintptr
}

// closed is next once a drain took a lot's addresses left: a claim after
// it finds the lot exhausted.
const closed = 1 << 30

// reserves are the reserves of sizes 1 to reserveMax.  aheadBytes is what
// their lots put ahead: no less than they hold, for a lot counts until the
// next fill or a drain rather than pay an atomic add on every claim.
// Addresses, not pointers: cgo checks a pointer array on every call, and
// the collector need not scan a lot.
var (
	reserves   [reserveMax + 1]reserve
	aheadBytes atomic.Int64
)

// fill allocates, in one call into C, the secret a claim waits for, which
// it returns, and a new lot of those its size may hold ahead, unless
// another claim filled one since the caller found old exhausted (again:
// the caller takes from it).  It reports whether the allocator gave fewer
// than asked (short): the limit is near; p is 0 if it gave none, or if
// nothing may be held ahead (the caller allocates its secret then).
func (r *reserve) fill(size int, old *lot) (p uintptr, again, short bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lot.Load() != old {
		return 0, true, false
	}
	if old != nil {
		r.made += int(old.n)
	}
	n := fillMax
	if reserveBytes/size < n {
		n = reserveBytes / size
	}
	if r.made+1 < n {
		n = r.made + 1
	}
	ahead := aheadBytes.Add(-int64(r.filled)) // old is exhausted
	r.filled = 0
	if room := int((aheadMax - ahead) / int64(size)); n-1 > room {
		n = 1
		if room > 0 {
			n += room
		}
	}
	r.lot.Store(nil)
	if n == 1 {
		// Nothing to hold ahead: the caller allocates its secret as
		// any other, without a lot.
		r.made++
		return 0, false, false
	}
	l := new(lot)
	got := C.mmkit_go_secret_alloc_many((*C.uintptr_t)(unsafe.Pointer(&l.addrs[0])), C.size_t(n), C.size_t(size))
	if got.ret <= 0 {
		return 0, false, true
	}
	l.n = int32(got.ret)
	l.next.Store(1)
	r.filled = int(l.n-1) * size
	aheadBytes.Add(int64(r.filled))
	r.lot.Store(l)
	return l.addrs[0], false, int(l.n) < n
}

// dropAhead frees the memory every reserve holds: for Purge, and for an
// allocation refused for want of memory, which may succeed without it.
// It reports whether there was any.
func dropAhead() bool {
	freed := false
	for size := 1; size <= reserveMax; size++ {
		r := &reserves[size]
		r.mu.Lock()
		if l := r.lot.Load(); l != nil {
			for j := l.next.Swap(closed); j < l.n; j++ {
				freeSecret(pointer(l.addrs[j]), size)
				freed = true
			}
			r.lot.Store(nil)
		}
		aheadBytes.Add(-int64(r.filled))
		r.made, r.filled = 0, 0
		r.mu.Unlock()
	}
	return freed
}

// current is the slab and batch that every secret takes from.  A claim is
// an index from next, without a lock; the registry lock only starts the
// next pair.
var current atomic.Pointer[slab]

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
// that size made so far), of all sizes up to 64 KiB, may be allocated,
// zeroed and waiting for the next NewSecret of their size.  Purge frees
// them too, and so does an allocation that finds RLIMIT_MEMLOCK used up,
// before it tries again: memory allocated ahead never makes one fail.
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

// reserved makes a Secret of size bytes (1 to reserveMax) from its
// reserve's lot, filling a new one once it is exhausted.  A fill that the
// allocator cut short leaves nothing ahead, of any size; one that got
// nothing leaves the allocation, and the reason of its failure, to
// newSecret.
func reserved(size int) (*Secret, error) {
	r := &reserves[size]
	for {
		l := r.lot.Load()
		if l != nil {
			if i := l.next.Add(1) - 1; i < l.n {
				return register(pointer(l.addrs[i]), size), nil
			}
		}
		p, again, short := r.fill(size, l)
		if again {
			continue
		}
		if short {
			dropAhead()
		}
		if p == 0 {
			return newSecret(size, 0)
		}
		return register(pointer(p), size), nil
	}
}

// allocSecret allocates the memory of a secret, which no Purge reaches
// until it is registered.  Refused for want of memory, it tries once more
// without the memory allocated ahead, if there was any.
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
	if r.ret == -C.int(syscall.ENOMEM) && dropAhead() {
		r = C.mmkit_go_secret_alloc(C.size_t(size), flags)
	}
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
// the current slab and batch.
func register(p unsafe.Pointer, size int) *Secret {
	for {
		cur := current.Load()
		if cur != nil {
			if i := cur.batch.next.Add(1) - 1; i < slabSize {
				c := &cur.batch.cores[i]
				c.size, c.access = size, C.MMKIT_SECRET_READWRITE
				atomic.StoreUintptr(&c.p, uintptr(p))
				return &cur.secrets[i]
			}
		}
		nextBatch(cur)
	}
}

// nextBatch starts a new slab and batch, unless another goroutine already
// replaced cur.
func nextBatch(cur *slab) {
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if current.Load() != cur {
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
	next := &slab{batch: new(batch)}
	for i := range next.secrets {
		next.secrets[i].c = &next.batch.cores[i]
	}
	watch(next, next.batch)
	registry.batches = append(registry.batches, next.batch)
	current.Store(next)
}

// leaked counts the Secrets collected without Destroy.
var leaked atomic.Uint64

// LeakedSecrets is how many Secrets were garbage-collected without
// Destroy: their memory stays allocated (and locked) until Purge.  The
// count is taken when the collector frees the Secrets allocated around
// them too: 64 Secrets, of any size, are watched as one.
func LeakedSecrets() uint64 { return leaked.Load() }

// reportLeaks runs once none of the Secrets of b's slab is reachable
// (watch): it only counts the secrets of b never destroyed, and says so the
// first time.  Every state of b was handed out by then: the slab is no
// longer current.  Freeing here could pull the memory from under a slice
// of Bytes that is still in use; an empty secret holds none, and ends
// quietly.
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
	AllocsLive   uint64 // handed out and not freed yet
	BytesLive    uint64
	AllocsAhead  uint64 // allocated ahead by NewSecret, not handed out yet
	BytesAhead   uint64
	PagesMapped  uint64
	BytesLocked  uint64
	MemlockLimit uint64 // MemlockUnlimited when there is none
	Fallback     bool
}

// MemlockUnlimited is an RLIMIT_MEMLOCK of infinity.
const MemlockUnlimited = ^uint64(0)

// SecretStatistics reports the allocator's figures.  The secrets
// allocated ahead are counted apart (AllocsAhead, BytesAhead), not among
// the live ones: no NewSecret is holding them.  PagesMapped and
// BytesLocked include them.
func SecretStatistics() (SecretStats, error) {
	// Every reserve locked, so that no fill or drain changes the C
	// figures between their reading and that of the lots; a claim may, but
	// only moves a secret from ahead to live, which the lots, read last,
	// see at least as much as the C figures.
	for size := 1; size <= reserveMax; size++ {
		reserves[size].mu.Lock()
	}
	var st C.struct_mmkit_secret_stats
	r := C.mmkit_go_secret_stats(&st)
	var allocs, bytes uint64
	for size := 1; size <= reserveMax; size++ {
		if l := reserves[size].lot.Load(); l != nil {
			if k := l.n - l.next.Load(); k > 0 {
				allocs += uint64(k)
				bytes += uint64(int(k) * size)
			}
		}
		reserves[size].mu.Unlock()
	}
	if err := checkResult("mmkit_secret_stats", r); err != nil {
		return SecretStats{}, err
	}
	return SecretStats{
		Backend:      C.GoString(&st.backend[0]),
		Reason:       C.GoString(&st.reason[0]),
		LastError:    C.GoString(&st.last_error[0]),
		AllocsLive:   uint64(st.allocs_live) - allocs,
		BytesLive:    uint64(st.bytes_live) - bytes,
		AllocsAhead:  allocs,
		BytesAhead:   bytes,
		PagesMapped:  uint64(st.pages_mapped),
		BytesLocked:  uint64(st.bytes_locked),
		MemlockLimit: uint64(st.memlock_limit),
		Fallback:     st.fallback != 0,
	}, nil
}
