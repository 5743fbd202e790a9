// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

/*
#include "shim.h"
*/
import "C"

import (
	"crypto/rand"
	"crypto/subtle"
	"fmt"
	"io"
	"syscall"
	"unsafe"
)

// NewSecretFromBytes makes a secret of b's length, copies b into it and
// wipes b (memguard's NewBufferFromBytes).  When the allocation fails, or a
// Purge running meanwhile destroyed the secret before it was filled
// (ECANCELED), b is left as it was and the error returned.  The secret
// stays writable (memguard freezes it): only a page secret can be frozen;
// see NewPageSecret.
func NewSecretFromBytes(b []byte) (*Secret, error) {
	s, err := NewSecret(len(b))
	if err != nil {
		return nil, err
	}
	if err := s.fill("NewSecretFromBytes", func(dst []byte) error {
		copy(dst, b)
		return nil
	}); err != nil {
		return nil, err
	}
	wipe(b)
	return s, nil
}

// NewSecretRandom makes a secret of size bytes from the system's random
// source (crypto/rand: getrandom(2)), read straight into the secret's
// memory, never through the Go heap.  A Purge running meanwhile may destroy
// the secret before it is filled: then the error is ECANCELED.
func NewSecretRandom(size int) (*Secret, error) {
	s, err := NewSecret(size)
	if err != nil {
		return nil, err
	}
	if err := s.fill("NewSecretRandom", func(dst []byte) error {
		_, err := io.ReadFull(rand.Reader, dst)
		return err
	}); err != nil {
		return nil, fmt.Errorf("mmkit: NewSecretRandom: %w", err)
	}
	return s, nil
}

// fill runs f on the new secret's memory, counted in as the calls through
// it are, so that a Purge meanwhile waits for f before it frees; an error
// (ECANCELED) if a Purge came first.  When f fails, the secret is destroyed.
func (s *Secret) fill(op string, f func(dst []byte) error) error {
	p := s.c.use()
	if p == nil {
		return purged(op)
	}
	err := f(unsafe.Slice((*byte)(p), s.c.size))
	s.c.unuse()
	if err != nil {
		s.Destroy()
	}
	return err
}

// purged is the error of a constructor whose secret a Purge destroyed
// before the constructor returned it.
func purged(op string) error {
	return &Error{Op: op, Errno: syscall.ECANCELED,
		Msg: op + ": Purge destroyed the secret while it was being filled; what was read into it is wiped"}
}

// NewSecretFromReader makes a secret of size bytes read from r straight
// into the secret's memory (io.ReadFull).  A short read is an error that
// wraps r's (io.ErrUnexpectedEOF, io.EOF): the secret, with what was read
// into it, is destroyed and none of it returned (memguard returns the part
// read).  The read may block for long: Purge does not reach the secret until
// it is complete, and a Purge that ran meanwhile makes it an error
// (ECANCELED), the bytes read wiped.  Whatever buffer r keeps of its own (a
// bufio.Reader's) is not the secret's to wipe.
func NewSecretFromReader(r io.Reader, size int) (*Secret, error) {
	const op = "NewSecretFromReader"
	p, err := allocSecret(size, 0)
	if err != nil {
		return nil, err
	}
	registered := false
	defer func() {
		// A failed read, or a panic in r.Read.
		if !registered {
			freeSecret(p, size)
		}
	}()
	ended := purgesEnded.Load()
	started := purgesStarted.Load()
	if n, err := io.ReadFull(r, unsafe.Slice((*byte)(p), size)); err != nil {
		return nil, fmt.Errorf("mmkit: %s: %d of %d bytes read: %w", op, n, size, err)
	}
	s := register(p, size)
	registered = true
	// A Purge that was running when the read began, or began since,
	// did not see this secret, or destroys it now: either way the caller
	// asked for every secret gone.
	if started != ended || purgesStarted.Load() != started {
		s.Destroy()
		return nil, purged(op)
	}
	return s, nil
}

// EqualTo reports whether the secret holds exactly b, in a time that does
// not depend on the bytes (crypto/subtle).  The time does depend on the
// lengths: a b of another length returns at once (as memguard's EqualTo
// does), which tells a timing observer the secret's length, not its bytes.
// A destroyed secret, or one made inaccessible (NoAccess), equals nothing.
func (s *Secret) EqualTo(b []byte) bool {
	c := s.core()
	if c == nil {
		return false
	}
	l := c.lock()
	l.Lock()
	defer l.Unlock()
	p := c.use()
	if p == nil {
		return false
	}
	defer c.unuse()
	return c.access != C.MMKIT_SECRET_NOACCESS && subtle.ConstantTimeCompare(unsafe.Slice((*byte)(p), c.size), b) == 1
}

// Wipe zeroes the secret, which stays allocated.
func (s *Secret) Wipe() error {
	return s.write("Secret.Wipe", 0, 0, func(dst []byte) { wipe(dst) })
}

// Copy copies src to the start of the secret (memguard's Copy, which
// would silently cut a src longer than the buffer: here that is an error
// and nothing is copied).  To copy another secret: s.Copy(other.Bytes()).
func (s *Secret) Copy(src []byte) error { return s.copyAt("Secret.Copy", 0, src) }

// CopyAt copies src into the secret from offset on.
func (s *Secret) CopyAt(offset int, src []byte) error { return s.copyAt("Secret.CopyAt", offset, src) }

func (s *Secret) copyAt(op string, offset int, src []byte) error {
	return s.write(op, offset, len(src), func(dst []byte) { copy(dst, src) })
}

// Move copies src to the start of the secret, then wipes src.  On an
// error src is left as it was.
func (s *Secret) Move(src []byte) error { return s.moveAt("Secret.Move", 0, src) }

// MoveAt copies src into the secret from offset on, then wipes src.
func (s *Secret) MoveAt(offset int, src []byte) error { return s.moveAt("Secret.MoveAt", offset, src) }

func (s *Secret) moveAt(op string, offset int, src []byte) error {
	return s.write(op, offset, len(src), func(dst []byte) {
		copy(dst, src)
		wipe(src)
	})
}

// write runs f on the n bytes from offset of a live, writable secret
// (n 0: the whole secret), under the lock Destroy takes.
func (s *Secret) write(op string, offset, n int, f func(dst []byte)) error {
	c := s.core()
	if c == nil {
		return invalid(op, "the secret was destroyed")
	}
	l := c.lock()
	l.Lock()
	defer l.Unlock()
	p := c.use()
	if p == nil {
		return invalid(op, "the secret was destroyed")
	}
	defer c.unuse()
	switch {
	case c.access != C.MMKIT_SECRET_READWRITE:
		return &Error{Op: op, Errno: syscall.EACCES, Msg: op + ": the secret is read-only or inaccessible (Freeze, NoAccess): Melt it first"}
	case offset < 0 || n < 0 || offset > c.size || n > c.size-offset:
		return invalid(op, fmt.Sprintf("%d bytes at offset %d do not fit in a secret of %d", n, offset, c.size))
	}
	dst := unsafe.Slice((*byte)(p), c.size)[offset:]
	if n > 0 {
		dst = dst[:n]
	}
	f(dst)
	return nil
}

// wipe zeroes b (the compiler makes the loop a memclr, which it keeps:
// the stores go to memory it cannot prove dead).
func wipe(b []byte) {
	for i := range b {
		b[i] = 0
	}
}
