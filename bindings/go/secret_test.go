// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"syscall"
	"testing"
	"unsafe"
)

func TestSecretZeroedSizedAndWritable(t *testing.T) {
	for _, size := range []int{1, 32, 100, 2040, 2041, 5000} {
		s, err := NewSecret(size)
		if err != nil {
			t.Fatalf("NewSecret(%d): %v", size, err)
		}
		b := s.Bytes()
		if len(b) != size || s.Size() != size {
			t.Fatalf("NewSecret(%d): len %d, Size %d", size, len(b), s.Size())
		}
		if !bytes.Equal(b, make([]byte, size)) {
			t.Fatalf("NewSecret(%d) is not zeroed", size)
		}
		copy(b, bytes.Repeat([]byte{0xa5}, size))
		if b[size-1] != 0xa5 {
			t.Fatalf("NewSecret(%d): the last byte did not take a write", size)
		}
		s.Destroy()
	}
}

func TestSecretDestroyIsIdempotent(t *testing.T) {
	s, err := NewSecret(32)
	if err != nil {
		t.Fatal(err)
	}
	if !s.IsAlive() {
		t.Fatal("a new secret is not alive")
	}
	s.Destroy()
	s.Destroy()
	if s.IsAlive() || s.Bytes() != nil {
		t.Fatal("a destroyed secret is alive or has bytes")
	}
	if err := s.Freeze(); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Freeze after Destroy: %v, want EINVAL", err)
	}
}

// Destroy wipes: a pooled secret's slot is read after Destroy while a
// neighbour in the same chunk keeps the chunk mapped.
func TestSecretDestroyWipes(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	keep, err := NewSecret(64)
	if err != nil {
		t.Fatal(err)
	}
	defer keep.Destroy()
	s, err := NewSecret(64)
	if err != nil {
		t.Fatal(err)
	}
	p := unsafe.Pointer(&s.Bytes()[0])
	q := uintptr(unsafe.Pointer(&keep.Bytes()[0]))
	if d := int64(uintptr(p)) - int64(q); d < -4096 || d > 4096 {
		t.Skipf("the two secrets are %d bytes apart: not one page of one chunk", d)
	}
	copy(s.Bytes(), bytes.Repeat([]byte{0x5a}, 64))
	s.Destroy()
	after := unsafe.Slice((*byte)(p), 64)
	if !bytes.Equal(after, make([]byte, 64)) {
		t.Fatalf("the slot reads %x after Destroy, want zeroes", after)
	}
}

func TestSecretBadSize(t *testing.T) {
	_, err := NewSecret(-1)
	var e *Error
	if !errors.As(err, &e) || e.Errno != syscall.EINVAL || err.Error() != "mmkit_secret_alloc: size -1 is negative" {
		t.Fatalf("NewSecret(-1): %v, want an *Error with EINVAL: size -1 is negative", err)
	}
	for _, size := range []int{math.MaxInt, 1 << 62} {
		_, err := NewSecret(size)
		if !errors.Is(err, syscall.ENOMEM) || err.Error() == "mmkit_secret_alloc: cannot allocate memory" ||
			err.Error() == "mmkit_secret_alloc: Cannot allocate memory" {
			t.Fatalf("NewSecret(%d): %v, want ENOMEM with the library's reason", size, err)
		}
	}
}

// Size 0 is an empty secret in every binding: no memory, no C call.
func TestSecretEmpty(t *testing.T) {
	for _, alloc := range []func(int) (*Secret, error){NewSecret, NewPageSecret} {
		before, err := SecretStatistics()
		if err != nil {
			t.Fatal(err)
		}
		s, err := alloc(0)
		if err != nil {
			t.Fatalf("an empty secret: %v", err)
		}
		after, _ := SecretStatistics()
		if after.AllocsLive != before.AllocsLive || after.BytesLive != before.BytesLive {
			t.Errorf("an empty secret allocated: %+v -> %+v", before, after)
		}
		if b := s.Bytes(); b == nil || len(b) != 0 || s.Size() != 0 || !s.IsAlive() {
			t.Errorf("empty secret: Bytes %v, Size %d, IsAlive %v", b, s.Size(), s.IsAlive())
		}
		if err := s.NoAccess(); err != nil {
			t.Errorf("NoAccess of an empty secret: %v", err)
		}
		if err := s.Melt(); err != nil {
			t.Errorf("Melt of an empty secret: %v", err)
		}
		s.Destroy()
		s.Destroy()
		if s.IsAlive() || s.Bytes() != nil {
			t.Error("a destroyed empty secret is alive")
		}
	}
}

// The library's message reaches the error: a pooled secret has no pages of
// its own to protect.
func TestSecretErrorCarriesLibraryMessage(t *testing.T) {
	s, err := NewSecret(32)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	err = s.Freeze()
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Freeze of a pooled secret: %v, want EINVAL", err)
	}
	if e.Op != "mmkit_secret_protect" || !strings.HasPrefix(e.Msg, "mmkit_secret_protect: ") {
		t.Fatalf("error %+v does not carry the library's message", e)
	}
}

// writeFaults reports whether writing b[0] faults.
func writeFaults(b []byte) (faulted bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() { faulted = recover() != nil }()
	b[0] = 1
	return false
}

// readFaults reports whether reading b[0] faults.
func readFaults(b []byte) (faulted bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() { faulted = recover() != nil }()
	sink = b[0]
	return false
}

// sink keeps readFaults' read from being optimised away.
var sink byte

func TestPageSecretFreezeMeltNoAccess(t *testing.T) {
	s, err := NewPageSecret(64)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Destroy()
	b := s.Bytes()
	b[0] = 7
	if err := s.Freeze(); err != nil {
		t.Fatal(err)
	}
	if b[0] != 7 || !writeFaults(b) {
		t.Fatal("a frozen secret took a write or lost its byte")
	}
	if err := s.NoAccess(); err != nil {
		t.Fatal(err)
	}
	if !readFaults(b) {
		t.Fatal("an inaccessible secret could be read")
	}
	if err := s.Melt(); err != nil {
		t.Fatal(err)
	}
	if writeFaults(b) || b[0] != 1 {
		t.Fatal("a melted secret did not take a write")
	}
	if err := s.Freeze(); err != nil {
		t.Fatal(err)
	}
	s.Destroy() // a frozen secret is made writable to be wiped
}

// Many goroutines, hence many OS threads and their caches, at once; one
// secret destroyed by all of them.
func TestSecretsFromManyGoroutines(t *testing.T) {
	shared, err := NewSecret(32)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			var mine []*Secret
			for i := 0; i < 500; i++ {
				s, err := NewSecret(1 + (g*31+i)%300)
				if err != nil {
					errs <- err
					return
				}
				b := s.Bytes()
				for j := range b {
					b[j] = byte(g)
				}
				mine = append(mine, s)
				if i%3 == 0 {
					old := mine[0]
					mine = mine[1:]
					for _, c := range old.Bytes() {
						if c != byte(g) {
							errs <- fmt.Errorf("goroutine %d: a secret changed under it", g)
							return
						}
					}
					old.Destroy()
				}
			}
			for _, s := range mine {
				s.Destroy()
			}
			shared.Destroy()
		}(g)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if shared.IsAlive() {
		t.Fatal("the shared secret survived Destroy")
	}
}

func init() {
	childModes["capacity"] = childCapacity
}

// childCapacity: 100,000 live 32-byte secrets under an 8 MiB RLIMIT_MEMLOCK.
func childCapacity() int {
	if err := setMemlock(8 << 20); err != nil {
		fmt.Println("setrlimit:", err)
		return 1
	}
	live := make([]*Secret, 0, 100000)
	for i := 0; i < 100000; i++ {
		s, err := NewSecret(32)
		if err != nil {
			fmt.Printf("secret %d: %v\n", i, err)
			return 1
		}
		s.Bytes()[0] = byte(i)
		live = append(live, s)
	}
	st, err := SecretStatistics()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Printf("live %d (and %d ahead) locked %d KiB backend %s\n", st.AllocsLive, st.AllocsAhead,
		st.BytesLocked>>10, st.Backend)
	// More, until the limit is used up: then an error naming it and the
	// call a NewSecret makes (not how the secrets are allocated ahead), and
	// each secret made holds its byte.
	for {
		s, err := NewSecret(32)
		if err != nil {
			var e *Error
			if !errors.Is(err, syscall.ENOMEM) || !strings.Contains(err.Error(), "RLIMIT_MEMLOCK") ||
				!errors.As(err, &e) || e.Op != "mmkit_secret_alloc" {
				fmt.Println("at the limit:", err)
				return 1
			}
			break
		}
		s.Bytes()[0] = byte(len(live))
		live = append(live, s)
	}
	fmt.Printf("at the limit after %d\n", len(live))
	for i, s := range live {
		if s.Bytes()[0] != byte(i) {
			fmt.Printf("secret %d holds %d\n", i, s.Bytes()[0])
			return 1
		}
		s.Destroy()
	}
	// Past the limit, the error says so, with RLIMIT_MEMLOCK's figures.
	var keep []*Secret
	for {
		s, err := NewPageSecret(1 << 20)
		if err == nil {
			keep = append(keep, s)
			continue
		}
		if !errors.Is(err, syscall.ENOMEM) || !strings.Contains(err.Error(), "RLIMIT_MEMLOCK") {
			fmt.Println("past the limit:", err)
			return 1
		}
		fmt.Println("past the limit:", err)
		break
	}
	for _, s := range keep {
		s.Destroy()
	}
	return 0
}

func TestSecretCapacityUnprivileged(t *testing.T) {
	out := runUnprivileged(t, "capacity")
	if !strings.Contains(out, "live 100000 ") {
		t.Fatalf("child: %s", out)
	}
	t.Log(strings.TrimSpace(out))
}
