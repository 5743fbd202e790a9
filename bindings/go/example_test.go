// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit_test

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"syscall"
	"unsafe"

	mmkit "mmkit.dev/mmkit/bindings/go"
)

// A key on memfd_secret pages, wiped and freed by Destroy.
func ExampleNewSecret() {
	key, err := mmkit.NewSecret(32)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer key.Destroy()
	copy(key.Bytes(), "a 32-byte key, never on the heap")
	fmt.Println(len(key.Bytes()), string(key.Bytes()[:5]))
	// Output: 32 a 32-
}

// A password moved off the Go heap: the source slice is wiped.
func ExampleNewSecretFromBytes() {
	password := []byte("hunter2")
	s, err := mmkit.NewSecretFromBytes(password)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Destroy()
	fmt.Printf("%s %q\n", s.Bytes(), password)
	// Output: hunter2 "\x00\x00\x00\x00\x00\x00\x00"
}

// A key of random bytes, read from the kernel straight into secret memory.
func ExampleNewSecretRandom() {
	key, err := mmkit.NewSecretRandom(32)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer key.Destroy()
	fmt.Println(key.Size())
	// Output: 32
}

// A key read from a file or a pipe straight into secret memory; a short
// read leaves nothing behind.
func ExampleNewSecretFromReader() {
	key, err := mmkit.NewSecretFromReader(strings.NewReader("0123456789abcdef"), 16)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer key.Destroy()
	_, err = mmkit.NewSecretFromReader(strings.NewReader("short"), 16)
	fmt.Println(string(key.Bytes()[:4]), err)
	// Output: 0123 mmkit: NewSecretFromReader: 5 of 16 bytes read: unexpected EOF
}

// Comparing a secret in constant time.
func ExampleSecret_EqualTo() {
	token, err := mmkit.NewSecretFromBytes([]byte("s3cr3t-t0k3n"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer token.Destroy()
	fmt.Println(token.EqualTo([]byte("s3cr3t-t0k3n")), token.EqualTo([]byte("guess")))
	// Output: true false
}

// Move copies into the secret and wipes the source; a source that does not
// fit is refused whole.
func ExampleSecret_Move() {
	s, err := mmkit.NewSecret(8)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Destroy()
	src := []byte("abcd")
	if err := s.MoveAt(4, src); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%q %q\n", s.Bytes(), src)
	fmt.Println(s.Move([]byte("123456789")))
	// Output:
	// "\x00\x00\x00\x00abcd" "\x00\x00\x00\x00"
	// Secret.Move: 9 bytes at offset 0 do not fit in a secret of 8
}

// Purge destroys every live secret, as at the end of a session.
func ExamplePurge() {
	a, _ := mmkit.NewSecret(32)
	b, _ := mmkit.NewPageSecret(32)
	mmkit.Purge()
	fmt.Println(a.IsAlive(), b.IsAlive(), a.Bytes() == nil)
	// Output: false false true
}

// Secrets wiped before SIGINT or SIGTERM ends the program.
func ExampleCatchInterrupt() {
	mmkit.CatchInterrupt()
	key, err := mmkit.NewSecretRandom(32)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer key.Destroy()
	// ... a ^C now purges the key, then ends the program by SIGINT.
}

// A secret on pages of its own, read-only while it is not being changed.
func ExampleSecret_Freeze() {
	s, err := mmkit.NewPageSecret(64)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Destroy()
	copy(s.Bytes(), "password")
	if err := s.Freeze(); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(string(s.Bytes()[:8]))
	// Output: password
}

// Memory that reads as a pattern until written, without a memset.
func ExampleNewRefPage() {
	rp, err := mmkit.NewRefPage([]byte{0xaa})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer rp.Close()
	heap, err := rp.Map(64 << 20)
	if err != nil {
		fmt.Println(err)
		return
	}
	heap[100] = 1
	fmt.Printf("%#x %#x %#x\n", heap[0], heap[100], heap[64<<20-1])
	// Output: 0xaa 0x1 0xaa
}

// Names a mapping; Regions (and `mmkit maps PID`) reports it by name.
func ExampleName() {
	mem, err := syscall.Mmap(-1, 0, 4*os.Getpagesize(), syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer syscall.Munmap(mem)
	if err := mmkit.Name(mem, "example-cache"); err != nil {
		fmt.Println(err)
		return
	}
	regions, err := mmkit.Regions(0)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, r := range regions {
		if r.Start == uintptr(unsafe.Pointer(&mem[0])) {
			fmt.Println(r.Name, r.Size/uint64(os.Getpagesize()), "pages")
		}
	}
	// Output: example-cache 4 pages
}

// What the kernel offers, and which backend each feature uses.
func ExampleProbe() {
	features, err := mmkit.Probe()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range features {
		if f.Name == "secret" {
			fmt.Println(f.Name, f.Status != "unsupported")
		}
	}
	// Output: secret true
}

// Lock-on-fault: pages are locked as they are touched; the limit is
// checked first, and a request over it says by how much.
func ExampleLock() {
	mem, err := syscall.Mmap(-1, 0, 1<<20, syscall.PROT_READ|syscall.PROT_WRITE,
		syscall.MAP_PRIVATE|syscall.MAP_ANONYMOUS)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer syscall.Munmap(mem)
	err = mmkit.Lock(mem, mmkit.LockOnFault)
	if errors.Is(err, syscall.ENOMEM) {
		fmt.Println("over RLIMIT_MEMLOCK:", err)
		return
	}
	fmt.Println(err)
	// Output: <nil>
}

// Pointer-authentication keys belong to the OS thread: lock the goroutine to it.
func ExamplePACSetEnabledKeys() {
	err := mmkit.PACSetEnabledKeys(mmkit.PACAPIAKey, 0)
	if errors.Is(err, syscall.EOPNOTSUPP) {
		fmt.Println("no pointer authentication here")
		return
	}
	fmt.Println(err)
}
