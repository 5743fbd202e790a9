// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

import (
	"runtime"
	"testing"
	"unsafe"
)

// A slice from Bytes kept after Destroy faults on a page secret: the C
// library makes freed pages inaccessible (PROT_NONE, or unmapped).
func TestStalePageSecretFaults(t *testing.T) {
	for _, size := range []int{64, 5 * 4096, 1 << 20} {
		s, err := NewPageSecret(size)
		if err != nil {
			t.Fatal(err)
		}
		b := s.Bytes()
		b[0], b[size-1] = 1, 1
		s.Destroy()
		if !readFaults(b) || !writeFaults(b[size-1:]) {
			t.Fatalf("a %d-byte page secret's slice was readable or writable after Destroy", size)
		}
	}
}

// A pooled secret's slice kept after Destroy does not reach the next
// secret: its slot is not handed out again at once, and reads zeros.
func TestStaleSliceMissesNextSecret(t *testing.T) {
	// One thread: the C allocator's quarantine is per thread, and so was
	// the reuse the test guards against.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	for _, size := range []int{32, 100, 1000} {
		s, err := NewSecret(size)
		if err != nil {
			t.Fatal(err)
		}
		stale := s.Bytes()
		copy(stale, "old secret")
		s.Destroy()
		var next []*Secret
		for i := 0; i < 16; i++ {
			n, err := NewSecret(size)
			if err != nil {
				t.Fatal(err)
			}
			next = append(next, n)
			copy(n.Bytes(), "new secret")
			if unsafe.Pointer(&n.Bytes()[0]) == unsafe.Pointer(&stale[0]) {
				t.Fatalf("NewSecret(%d) %d after Destroy reused the destroyed secret's memory", size, i+1)
			}
		}
		for i, c := range stale {
			if c != 0 {
				t.Fatalf("byte %d of a destroyed %d-byte secret's slice reads %#x, not 0", i, size, c)
			}
		}
		for _, n := range next {
			n.Destroy()
		}
	}
}
