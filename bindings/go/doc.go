// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

// Package mmkit makes the Linux memory-management features of libmmkit
// native in Go: secret memory on memfd_secret(2) (Secret), reference pages
// (RefPage), names for memory that `mmkit maps` and Regions report (Name,
// Regions), lock-on-fault with RLIMIT_MEMLOCK checked first (Lock), and
// arm64 pointer-authentication keys (PACSetEnabledKeys).
//
// The package compiles libmmkit's C sources itself (cgo; the files of
// lib/SOURCES, one lib_NAME.c wrapper each, written by go generate): no
// installed libmmkit is needed, only a C compiler.
//
// # Import path
//
// The module is the whole repository, mmkit.dev/mmkit; the package is in
// its bindings/go directory, so the import path is
// mmkit.dev/mmkit/bindings/go (mmkit.dev/mmkit alone is the module root,
// which holds no Go package).  The package is named mmkit:
//
//	import mmkit "mmkit.dev/mmkit/bindings/go"
//
// Nothing is published under that path yet: point the module at a
// checkout (bindings/go/README.md):
//
//	go mod edit -require=mmkit.dev/mmkit@v0.0.0 -replace=mmkit.dev/mmkit=/path/to/mmkit
//
// # Empty inputs and refusals
//
// The three bindings (Go, Rust, Python) give one answer per call: a Secret
// of size 0 is empty (no memory, no C call; the C call refuses size 0); Name
// of part of a page is syscall.EINVAL with the library's reason, of an
// empty slice nothing; MemlockCheck says "does not fit" in Memlock.Fits,
// not as an error; a negative size or length is syscall.EINVAL.
//
// # Errors
//
// A failed call returns an *Error carrying the C function, its errno and
// the library's message (mmkit_last_error(3)), e.g.
//
//	mmkit_secret_alloc: mapping 64 KiB of secret memory would exceed RLIMIT_MEMLOCK: ...
//
// errors.Is(err, syscall.ENOMEM) and errors.Is(err, fs.ErrPermission) see
// the errno through it.
//
// # Secrets and the Go runtime
//
// A Secret's memory is C memory: the garbage collector neither sees nor
// moves it, and the library never copies a secret into Go-managed memory.
// The caller's part is to do the same: copy into Bytes() (copy, io.ReadFull),
// never append to it (append moves the bytes into a new Go array), and do not
// convert it to a string. NewSecretFromBytes, NewSecretRandom and
// NewSecretFromReader fill a secret without a copy on the heap, Copy and
// Move write into one, EqualTo compares in constant time (for the bytes: a
// slice of another length returns at once). Keep a *Secret, never a Secret
// by value (go vet reports the copy). Destroy wipes and
// frees, Purge (SafeExit, CatchInterrupt on SIGINT and SIGTERM) does it for
// every live secret; nothing else frees: a Secret collected without Destroy
// is reported on standard error and stays allocated until Purge, because a
// slice from Bytes may still be in use (memguard dropped its freeing
// finalizer for the same reason). bindings/go/README.md lists memguard's
// calls beside these.
//
// Goroutines move between OS threads; the C allocator keeps a cache of free
// slots per thread and takes frees from any thread, so a Secret may be
// made on one goroutine and destroyed on another. Destroy is safe to call
// from several goroutines at once. Access to the bytes themselves is the
// caller's to synchronise, as for any []byte.
//
// Fork and exec: Go starts child processes with fork+exec only (os/exec,
// syscall.ForkExec): the child's image is replaced before it could read a
// secret, and memfd_secret memory is not inherited readable anyway
// (mmkit_secret(3)). Pointer-authentication keys belong to an OS thread:
// see PACSetEnabledKeys.
//
// Reference pages on the uffd backend (MMKIT_REFPAGE_BACKEND=uffd) resolve
// faults in a SIGBUS handler, which would compete with Go's runtime: leave
// the backend to mmkit's default (syscall, kmod or memfd) in Go programs.
package mmkit

//go:generate go run gen_sources.go
