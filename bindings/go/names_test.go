// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

import (
	"errors"
	"os"
	"strings"
	"syscall"
	"testing"
	"unsafe"
)

// findRegion returns the region of this process that starts at addr.
func findRegion(t *testing.T, addr uintptr) *Region {
	t.Helper()
	regions, err := Regions(0)
	if err != nil {
		t.Fatal(err)
	}
	for i := range regions {
		if regions[i].Start == addr {
			return &regions[i]
		}
	}
	return nil
}

func TestNameSeenByRegions(t *testing.T) {
	page := os.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 4*page, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	part := mem[page : 3*page]
	part[0] = 1
	if err := Name(part, "go-test-cache"); err != nil {
		t.Fatal(err)
	}
	start := uintptr(unsafe.Pointer(&part[0]))
	r := findRegion(t, start)
	if r == nil || !r.Named() || r.Name != "go-test-cache" || r.End != start+uintptr(2*page) {
		t.Fatalf("region at %#x: %+v, want go-test-cache over 2 pages", start, r)
	}
	if r.Size != uint64(2*page) || r.Rss != uint64(page) || r.Perms != "rw-p" {
		t.Fatalf("region %+v: want Size 2 pages, Rss 1 page, rw-p", r)
	}
	if err := ClearName(start, uintptr(2*page)); err != nil {
		t.Fatal(err)
	}
	if r := findRegion(t, start); r != nil && r.Named() {
		t.Fatalf("a cleared name is still reported: %+v", r)
	}
}

// A PROT_NONE reservation is named through its address.
func TestNameRangeOfReservation(t *testing.T) {
	page := os.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 8*page, syscall.PROT_NONE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS|syscall.MAP_NORESERVE)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	start := uintptr(unsafe.Pointer(&mem[0]))
	if err := NameRange(start, uintptr(8*page), "go-arena"); err != nil {
		t.Fatal(err)
	}
	defer ClearName(start, uintptr(8*page))
	if r := findRegion(t, start); r == nil || r.Name != "go-arena" || r.Perms != "---p" {
		t.Fatalf("reservation: %+v", r)
	}
}

func TestNameRulesAndErrors(t *testing.T) {
	page := os.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, page, syscall.PROT_READ, syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	for _, bad := range []string{"a$b", "[x]", "tab\there", "nul\x00byte", string(make([]byte, NameMax))} {
		if ValidName(bad) {
			t.Errorf("ValidName(%q) is true", bad)
		}
		if err := Name(mem, bad); !errors.Is(err, syscall.EINVAL) {
			t.Errorf("Name(%q): %v, want EINVAL", bad, err)
		}
	}
	if !ValidName("ok-name 1") {
		t.Error(`ValidName("ok-name 1") is false`)
	}
	if err := Name(mem[1:], "x"); !errors.Is(err, syscall.EINVAL) {
		t.Errorf("Name of an unaligned slice: %v, want EINVAL", err)
	}
	if _, err := Regions(-1); !errors.Is(err, syscall.EINVAL) || !strings.Contains(err.Error(), "pid -1 is negative") {
		t.Errorf("Regions(-1): %v", err)
	}
	if _, err := Regions(1 << 30); !errors.Is(err, syscall.ESRCH) {
		t.Errorf("Regions of no process: %v, want ESRCH", err)
	}
}

// Part of a page is refused (the kernel would name the whole page, bytes
// outside the slice), as in Rust and Python; an empty slice names nothing;
// naming a hole or a file says why.
func TestNameWholePagesOnlyWithReasons(t *testing.T) {
	page := os.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 2*page, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	for _, part := range [][]byte{mem[:10], mem[1 : page+1], mem[:page+1]} {
		err := Name(part, "go-part")
		if !errors.Is(err, syscall.EINVAL) || !strings.HasPrefix(err.Error(), "mmkit_name_pages: ") ||
			!strings.Contains(err.Error(), "does not cover whole pages") ||
			!strings.Contains(err.Error(), "NameRange") {
			t.Errorf("Name of %d bytes: %v, want EINVAL: does not cover whole pages", len(part), err)
		}
	}
	if r := findRegion(t, uintptr(unsafe.Pointer(&mem[0]))); r != nil && r.Named() {
		t.Fatalf("a refused Name named the page: %+v", r)
	}
	if err := Name(mem[:0], "go-empty"); err != nil {
		t.Errorf("Name of an empty slice: %v", err)
	}
	if err := Name(nil, "go-empty"); err != nil {
		t.Errorf("Name(nil): %v", err)
	}
	err = NameRange(0, uintptr(page), "go-hole")
	if !errors.Is(err, syscall.ENOMEM) || !strings.Contains(err.Error(), "is not mapped") {
		t.Errorf("NameRange of a hole: %v, want ENOMEM: is not mapped", err)
	}
	f, err := os.Open("/proc/self/exe")
	if err != nil {
		t.Fatal(err)
	}
	file, err := syscall.Mmap(int(f.Fd()), 0, page, syscall.PROT_READ, syscall.MAP_PRIVATE)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(file)
	if err := Name(file, "go-file"); !errors.Is(err, syscall.EBADF) || !strings.Contains(err.Error(), "is a file mapping") {
		t.Errorf("Name of a file mapping: %v, want EBADF: is a file mapping", err)
	}
}
