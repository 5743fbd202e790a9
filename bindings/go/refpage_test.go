// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestRefPagePatternReadsAndCopyOnWrite(t *testing.T) {
	r, err := NewRefPage([]byte{0xde, 0xad, 0xbe, 0xef})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	page := os.Getpagesize()
	b, err := r.Map(16*page + 5)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 16*page+5 {
		t.Fatalf("Map: len %d", len(b))
	}
	want := []byte{0xde, 0xad, 0xbe, 0xef}
	for i := range b {
		if b[i] != want[i%4] {
			t.Fatalf("byte %d reads %#x, want %#x (backend %s)", i, b[i], want[i%4], r.Backend())
		}
	}
	b[3*page+1] = 0
	if b[3*page+1] != 0 || b[3*page] != 0xde || b[4*page+1] != 0xad {
		t.Fatal("a write did not stay in its page")
	}
	other, err := r.Map(page)
	if err != nil {
		t.Fatal(err)
	}
	if other[1] != 0xad {
		t.Fatal("a write to one range reached another")
	}
	if err := r.Unmap(other); err != nil {
		t.Fatal(err)
	}
	if err := r.Unmap(other); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("second Unmap: %v, want EINVAL", err)
	}
}

func TestRefPageBadArguments(t *testing.T) {
	for _, pattern := range [][]byte{nil, {1, 2, 3}, make([]byte, 2*os.Getpagesize())} {
		_, err := NewRefPage(pattern)
		if !errors.Is(err, syscall.EINVAL) || !strings.HasPrefix(err.Error(), "mmkit_refpage_create: ") {
			t.Fatalf("NewRefPage(%d bytes): %v, want EINVAL from mmkit_refpage_create", len(pattern), err)
		}
	}
	r, err := NewRefPage([]byte{1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Map(0); !errors.Is(err, syscall.EINVAL) || !strings.Contains(err.Error(), "length 0") {
		t.Fatalf("Map(0): %v, want EINVAL with the library's reason", err)
	}
	if _, err := r.Map(-1); !errors.Is(err, syscall.EINVAL) || !strings.Contains(err.Error(), "length -1 is negative") {
		t.Fatalf("Map(-1): %v", err)
	}
	if _, err := r.Map(1 << 62); !errors.Is(err, syscall.ENOMEM) || !strings.Contains(err.Error(), "mmap(2) of ") {
		t.Fatalf("Map(1 << 62): %v, want ENOMEM with the library's reason", err)
	}
	if err := r.Unmap(make([]byte, 8)); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Unmap of Go memory: %v", err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Map(1); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Map after Close: %v", err)
	}
}
