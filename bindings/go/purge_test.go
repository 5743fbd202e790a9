// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

import (
	"bytes"
	"errors"
	"reflect"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"unsafe"
)

// gateReader blocks in Read until released, then fills the caller's buffer
// with 'A', remembering where it wrote.
type gateReader struct {
	started, release chan struct{}
	where            unsafe.Pointer
}

func (r *gateReader) Read(p []byte) (int, error) {
	r.where = unsafe.Pointer(&p[0])
	close(r.started)
	<-r.release
	for i := range p {
		p[i] = 'A'
	}
	return len(p), nil
}

// A Purge while NewSecretFromReader waits for its reader: the read lands in
// memory no Purge freed, and the call returns an error, not a Secret, having
// wiped and freed what was read (the allocator counts no more live secrets).
func TestPurgeDuringNewSecretFromReader(t *testing.T) {
	before, err := SecretStatistics()
	if err != nil {
		t.Fatal(err)
	}
	r := &gateReader{started: make(chan struct{}), release: make(chan struct{})}
	type result struct {
		s   *Secret
		err error
	}
	done := make(chan result)
	go func() {
		s, err := NewSecretFromReader(r, 32)
		done <- result{s, err}
	}()
	<-r.started
	Purge()
	close(r.release)
	got := <-done
	if got.s != nil || !errors.Is(got.err, syscall.ECANCELED) {
		t.Fatalf("Purge during the read: %v (alive %v), %v; want no secret and ECANCELED",
			got.s, got.s.IsAlive(), got.err)
	}
	after, err := SecretStatistics()
	if err != nil {
		t.Fatal(err)
	}
	if after.AllocsLive != before.AllocsLive {
		t.Fatalf("live secrets %d before, %d after a purged read", before.AllocsLive, after.AllocsLive)
	}
}

// Purge in a loop beside the constructors that fill a secret: each either
// returns an error, its source kept, or a secret that held the data (unless
// the Purge came after it); none writes into memory a Purge freed, which the
// allocator notices (it aborts the process) when it hands the slot out
// again: the loop ends by taking every slot of the size class back.
func TestPurgeBesideFills(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var stop atomic.Bool
	purged := make(chan struct{})
	go func() {
		for !stop.Load() {
			Purge()
		}
		close(purged)
	}()
	const want = "the only copy of the password"
	refused := 0
	for i := 0; i < 20000; i++ {
		src := []byte(want)
		s, err := NewSecretFromBytes(src)
		switch {
		case err != nil && (s != nil || string(src) != want || !errors.Is(err, syscall.ECANCELED)):
			t.Fatalf("a refused NewSecretFromBytes: %v, %v, source %q", s, err, src)
		case err != nil:
			refused++
		case !bytes.Equal(src, make([]byte, len(want))):
			t.Fatalf("NewSecretFromBytes kept its source: %q", src)
		}
		if r, err := NewSecretRandom(len(want)); err != nil && (r != nil || !errors.Is(err, syscall.ECANCELED)) {
			t.Fatalf("a refused NewSecretRandom: %v, %v", r, err)
		}
	}
	stop.Store(true)
	<-purged
	Purge()
	var again []*Secret
	for i := 0; i < 4096; i++ {
		again = append(again, must(t)(NewSecret(len(want))))
	}
	for _, s := range again {
		s.Destroy()
	}
	t.Logf("%d of 20000 refused (a Purge came first)", refused)
}

// The zero Secret, and a nil *Secret, read as destroyed.
func TestSecretZeroValue(t *testing.T) {
	var z Secret
	var n *Secret
	for _, s := range []*Secret{&z, n} {
		if s.IsAlive() || s.IsMutable() || s.Bytes() != nil || s.Size() != 0 || s.EqualTo(nil) {
			t.Fatalf("%p: a zero Secret reads as alive", s)
		}
		for name, err := range map[string]error{"Wipe": s.Wipe(), "Copy": s.Copy(nil), "Freeze": s.Freeze()} {
			if !errors.Is(err, syscall.EINVAL) {
				t.Fatalf("%s of a zero Secret: %v", name, err)
			}
		}
		s.Destroy()
	}
}

// Purge reaches an empty secret too.
func TestPurgeEmptySecret(t *testing.T) {
	e := must(t)(NewSecret(0))
	Purge()
	if e.IsAlive() || e.Bytes() != nil {
		t.Fatal("an empty secret survived Purge")
	}
}

// A Secret holds a field with the methods go vet's copylocks check looks
// for, so that vet reports a Secret copied by value.
func TestSecretCopyIsReportedByVet(t *testing.T) {
	typ := reflect.TypeOf(Secret{})
	locker := reflect.TypeOf((*sync.Locker)(nil)).Elem()
	for i := 0; i < typ.NumField(); i++ {
		if f := typ.Field(i); !f.Anonymous && reflect.PtrTo(f.Type).Implements(locker) {
			return
		}
	}
	t.Fatal("a Secret has no field vet's copylocks check recognises")
}
