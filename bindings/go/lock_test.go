// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"
)

func TestLockOnFaultAndUnlock(t *testing.T) {
	page := os.Getpagesize()
	mem, err := syscall.Mmap(-1, 0, 16*page, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Munmap(mem)
	if err := Lock(mem, LockOnFault); err != nil {
		t.Fatal(err)
	}
	mem[0] = 1
	if err := Unlock(mem); err != nil {
		t.Fatal(err)
	}
	if err := Lock(mem, 0x80); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Lock with an unknown flag: %v", err)
	}
	if err := Lock(nil, 0); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("Lock of nothing: %v", err)
	}
}

func init() {
	childModes["memlock"] = childMemlock
}

// childMemlock: over a 64 KiB limit, Lock refuses with the figures and
// without calling the kernel; MemlockCheck fills them in.
func childMemlock() int {
	if err := setMemlock(64 << 10); err != nil {
		fmt.Println(err)
		return 1
	}
	mem, err := syscall.Mmap(-1, 0, 1<<20, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	// "Does not fit" is an answer (Fits false), not an error, as in Rust and Python.
	m, err := MemlockCheck(mem)
	if err != nil || m.Fits || m.Limit != 64<<10 || m.Needed != 1<<20 || m.Exempt {
		fmt.Printf("MemlockCheck: %+v %v\n", m, err)
		return 1
	}
	if m, err := MemlockCheck(mem[:16<<10]); err != nil || !m.Fits || m.Needed != 16<<10 {
		fmt.Printf("MemlockCheck within the limit: %+v %v\n", m, err)
		return 1
	}
	err = Lock(mem, LockOnFault)
	if !errors.Is(err, syscall.ENOMEM) || !strings.Contains(err.Error(), "RLIMIT_MEMLOCK") {
		fmt.Println("Lock over the limit:", err)
		return 1
	}
	if err := Lock(mem[:16<<10], LockOnFault); err != nil {
		fmt.Println("Lock within the limit:", err)
		return 1
	}
	fmt.Println("ok:", err)
	return 0
}

func TestLockOverTheLimitUnprivileged(t *testing.T) {
	out := runUnprivileged(t, "memlock")
	if !strings.HasPrefix(out, "ok:") {
		t.Fatal(out)
	}
}
