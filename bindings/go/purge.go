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
// read.  Empty secrets (size 0) are destroyed too.
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
}

// SafeExit purges every secret (Purge), then exits with code (os.Exit:
// deferred calls do not run).
func SafeExit(code int) {
	Purge()
	os.Exit(code)
}

var catchOnce sync.Once

// CatchInterrupt makes SIGINT and SIGTERM purge every secret (Purge) before
// they end the process: the signal is then raised again, with its default
// action, so the parent sees the process killed by it (a shell reports
// ^C).  A signal the process ignores, as nohup or a background shell job
// started it, stays ignored.  Calling it again does nothing.  (memguard's
// CatchInterrupt catches SIGINT alone and exits with status 1.)
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
			signal.Reset(sig)
			syscall.Kill(os.Getpid(), sig.(syscall.Signal))
		}()
	})
}
