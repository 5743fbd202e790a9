// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

import (
	"os"
	"os/signal"
	"sync"
	"sync/atomic"
	"syscall"
)

// purgesStarted and purgesEnded count the Purge calls begun and returned:
// equal while none runs.
var purgesStarted, purgesEnded atomic.Uint64

// Purge destroys every Secret alive when it is called, as Destroy does:
// canaries checked, memory wiped and freed, Bytes nil afterwards.  Slices
// taken from their Bytes must not be used after it (memguard's Purge; it
// also renews memguard's Enclave key, and mmkit has no Enclave).  Secrets
// made while it runs may survive it; NewSecretFromReader, whose read may
// block, returns an error instead of a secret if a Purge ran during the
// read.  Empty secrets (size 0) are destroyed too, and the memory
// NewSecret allocated ahead is freed.
func Purge() {
	purgesStarted.Add(1)
	defer purgesEnded.Add(1)
	registry.mu.Lock()
	batches := append([]*batch(nil), registry.batches...)
	registry.mu.Unlock()
	for _, b := range batches {
		for i := range b.cores {
			if b.cores[i].alive() != nil {
				b.cores[i].destroy()
			}
		}
	}
	dropAhead()
}

// SafeExit purges every secret (Purge), then exits with code (os.Exit:
// deferred calls do not run).
func SafeExit(code int) {
	Purge()
	purgedHook()
	os.Exit(code)
}

// purgedHook runs between the Purge of SafeExit or of CatchInterrupt and
// the end of the process: the tests report from it what the Purge left.
var purgedHook = func() {}

var catchOnce sync.Once

// CatchInterrupt makes SIGINT and SIGTERM purge every secret (Purge) before
// they end the process: the signal is then raised again, with its default
// action, so the parent sees the process killed by it (a shell reports
// ^C).  Calling it again does nothing.  (memguard's CatchInterrupt catches
// SIGINT alone and exits with status 1.)
//
// It takes the two signals over: when one arrives, the process dies by it
// after the Purge, and a signal.Notify of the program's own for it is
// cancelled (signal.Reset), its handler cut short.  A program with a
// shutdown of its own on SIGINT or SIGTERM should not call CatchInterrupt,
// but Purge (or SafeExit) at the end of its handler.
//
// A SIGINT the process inherited as ignored (a background job of a
// non-interactive shell) stays ignored.  A SIGTERM inherited as ignored
// does not: the Go runtime honours an inherited SIG_IGN for SIGHUP and
// SIGINT only, and without CatchInterrupt SIGTERM kills a Go program
// anyway.  nohup ignores SIGHUP alone, which CatchInterrupt leaves to the
// runtime (it kills the process without a Purge).
func CatchInterrupt() {
	catchOnce.Do(func() {
		var sigs []os.Signal
		for _, sig := range []os.Signal{syscall.SIGINT, syscall.SIGTERM} {
			if !signal.Ignored(sig) {
				sigs = append(sigs, sig)
			}
		}
		if len(sigs) == 0 {
			return
		}
		caught := make(chan os.Signal, 1)
		signal.Notify(caught, sigs...)
		go func() {
			sig := <-caught
			Purge()
			purgedHook()
			signal.Reset(sig)
			syscall.Kill(os.Getpid(), sig.(syscall.Signal))
		}()
	})
}
