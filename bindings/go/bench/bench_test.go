// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

// Package bench measures mmkit's Secret beside memguard's LockedBuffer:
//
//	go test -bench . -count 5        CPU ns per 32-byte allocation and Destroy,
//	                                 and the ratio to the C library's own
//	go test -run Capacity -v         live 32-byte secrets under an 8 MiB
//	                                 RLIMIT_MEMLOCK, as uid 65534 (root runs it)
package bench

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/awnumar/memguard"
	mmkit "mmkit.dev/mmkit/bindings/go"
)

// cpuNanos is the CPU time the process has used, user and system, all
// threads (the collector's too): unlike wall time, it does not count the
// time other processes of a busy machine hold the CPUs.
func cpuNanos() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkAllocDestroy32 times a 32-byte secret's allocation and free:
// the C library's own loop in one cgo call (C), the same two C calls made
// from Go one cgo call each (cgo-floor: what crossing into C costs), the
// binding (mmkit) and memguard; then, sizes cycling over 1..64 and over
// 1..512 bytes (passwords, tokens of varying length), the binding again
// (mmkit-mixed64, mmkit-mixed512), beside the C loop over the same sizes.
// Each reports its CPU time per pair (cpu-ns/op) and, but C, its ratio to
// the C loop run again right after it for as many pairs (x-C): a busy
// machine's speed drifts between rows, not within a pair of runs.
func BenchmarkAllocDestroy32(b *testing.B) {
	timed := func(isC bool, run func(b *testing.B)) func(b *testing.B) {
		return timedBy(func(n int) error { return allocFreeC(n, 32) }, isC, run)
	}
	b.Run("C", timed(true, func(b *testing.B) {
		if err := allocFreeC(b.N, 32); err != nil {
			b.Fatal(err)
		}
	}))
	b.Run("cgo-floor", timed(false, func(b *testing.B) {
		if err := allocFreeCgo(b.N, 32); err != nil {
			b.Fatal(err)
		}
	}))
	b.Run("mmkit", timed(false, func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			s, err := mmkit.NewSecret(32)
			if err != nil {
				b.Fatal(err)
			}
			s.Bytes()[0] = 1
			s.Destroy()
		}
	}))
	b.Run("memguard", timed(false, func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			buf := memguard.NewBuffer(32)
			buf.Bytes()[0] = 1
			buf.Destroy()
		}
	}))
	for _, max := range []int{64, 512} {
		max := max
		b.Run(fmt.Sprintf("mmkit-mixed%d", max), timedBy(func(n int) error { return allocFreeMixed(n, max) }, false,
			func(b *testing.B) {
				for i := 0; i < b.N; i++ {
					s, err := mmkit.NewSecret(1 + i%max)
					if err != nil {
						b.Fatal(err)
					}
					s.Bytes()[0] = 1
					s.Destroy()
				}
			}))
	}
}

// timedBy makes run a benchmark reporting its CPU time per pair and, unless
// it is the reference itself (isC), its ratio to ref run right after it
// for as many pairs.
func timedBy(ref func(n int) error, isC bool, run func(b *testing.B)) func(b *testing.B) {
	return func(b *testing.B) {
		start := cpuNanos()
		run(b)
		ns := float64(cpuNanos()-start) / float64(b.N)
		b.ReportMetric(ns, "cpu-ns/op")
		if isC {
			return
		}
		b.StopTimer()
		start = cpuNanos()
		if err := ref(b.N); err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(ns*float64(b.N)/float64(cpuNanos()-start), "x-C")
	}
}

const childEnv = "MMKIT_GO_BENCH_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "mmkit":
		var live []*mmkit.Secret
		os.Exit(countLive(func() bool {
			s, err := mmkit.NewSecret(32)
			live = append(live, s)
			return err == nil
		}))
	case "memguard":
		var live []*memguard.LockedBuffer
		// memguard panics when it cannot lock (core.Panic), after wiping every buffer.
		os.Exit(countLive(func() (ok bool) {
			defer func() {
				if recover() != nil {
					ok = false
				}
			}()
			buf := memguard.NewBuffer(32)
			live = append(live, buf)
			return buf.Size() == 32
		}))
	}
	os.Exit(m.Run())
}

// countLive allocates until alloc fails (at most 1,000,000) under an 8 MiB
// RLIMIT_MEMLOCK (resource 8), and prints how many it got.
func countLive(alloc func() bool) int {
	if err := syscall.Setrlimit(8, &syscall.Rlimit{Cur: 8 << 20, Max: 8 << 20}); err != nil {
		fmt.Println(err)
		return 1
	}
	n := 0
	for n < 1000000 && alloc() {
		n++
	}
	fmt.Printf("live %d\n", n)
	return 0
}

// TestCapacity runs countLive for both as uid 65534 and prints the counts.
func TestCapacity(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to run the children as uid 65534")
	}
	dir, err := os.MkdirTemp("", "mmkit-go-bench-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	os.Chmod(dir, 0o755)
	self, _ := os.Executable()
	bin := filepath.Join(dir, "bench.test")
	in, err := os.Open(self)
	if err != nil {
		t.Fatal(err)
	}
	out, err := os.OpenFile(bin, os.O_CREATE|os.O_WRONLY, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(out, in)
	in.Close()
	out.Close()
	for _, who := range []string{"mmkit", "memguard"} {
		cmd := exec.Command(bin)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), childEnv+"="+who)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		got, err := cmd.CombinedOutput()
		if err != nil || !strings.HasPrefix(string(got), "live ") {
			t.Fatalf("%s: %v\n%s", who, err, got)
		}
		t.Logf("%-8s 32-byte secrets live under an 8 MiB RLIMIT_MEMLOCK: %s", who, strings.TrimPrefix(strings.TrimSpace(string(got)), "live "))
	}
}
