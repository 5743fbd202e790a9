// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
)

// NewSecret of up to 512 bytes takes memory allocated ahead, many secrets
// in one call into C: most NewSecret calls take one of those.  What waits
// ahead is counted (AllocsAhead, not AllocsLive), zeroed, never more than
// fillMax secrets of a size nor than were made of it; Purge frees it with
// the rest.
func TestSecretsAllocatedAhead(t *testing.T) {
	const size = 37 // no other test uses it: its first fills are made here
	stats := func() SecretStats {
		t.Helper()
		st, err := SecretStatistics()
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	Purge()
	if st := stats(); st.AllocsLive != 0 || st.AllocsAhead != 0 {
		t.Fatalf("after Purge: %d live, %d of them ahead; want none", st.AllocsLive, st.AllocsAhead)
	}
	var made []*Secret
	fromAhead := 0
	for k := 1; k <= 2*slabSize; k++ {
		before := stats()
		s := must(t)(NewSecret(size))
		made = append(made, s)
		st := stats()
		if st.AllocsAhead < before.AllocsAhead {
			fromAhead++
		}
		if st.AllocsLive != uint64(k) {
			t.Fatalf("secret %d: %d live but %d ahead", k, st.AllocsLive, st.AllocsAhead)
		}
		if st.AllocsAhead > fillMax || (k <= slabSize && st.AllocsAhead >= uint64(k)) {
			t.Fatalf("secret %d: %d allocated ahead, more than the first batch made or than %d",
				k, st.AllocsAhead, fillMax)
		}
		if !bytes.Equal(s.Bytes(), make([]byte, size)) {
			t.Fatalf("secret %d reads %x, want zeroes", k, s.Bytes())
		}
		s.Bytes()[0] = byte(k)
	}
	t.Logf("%d of %d secrets were allocated ahead", fromAhead, len(made))
	if fromAhead < slabSize {
		t.Fatalf("%d of %d secrets were allocated ahead, want most", fromAhead, len(made))
	}
	for i, s := range made[:slabSize] {
		if s.Bytes()[0] != byte(i+1) {
			t.Fatalf("secret %d holds %d", i+1, s.Bytes()[0])
		}
		s.Destroy()
	}
	if st := stats(); st.AllocsLive != slabSize {
		t.Fatalf("%d live, %d ahead, after %d of %d destroyed", st.AllocsLive, st.AllocsAhead, slabSize, len(made))
	}
	Purge()
	if st := stats(); st.AllocsLive != 0 || st.AllocsAhead != 0 {
		t.Fatalf("after Purge: %d live, %d of them ahead; want none", st.AllocsLive, st.AllocsAhead)
	}
	for _, s := range made {
		if s.IsAlive() {
			t.Fatal("a secret survived Purge")
		}
	}
	// After Purge, secrets of the size come from a new batch.
	s := must(t)(NewSecret(size))
	if !s.IsAlive() || !bytes.Equal(s.Bytes(), make([]byte, size)) {
		t.Fatal("a secret made after Purge is not alive and zeroed")
	}
	s.Destroy()
}

// After a Purge that closed its batch early, a size allocates ahead no
// more than it made, as in its first batch.
func TestSecretsAheadAfterPurge(t *testing.T) {
	const size = 41 // no other test uses it
	a := must(t)(NewSecret(size))
	b := must(t)(NewSecret(size))
	Purge()
	c := must(t)(NewSecret(size))
	defer c.Destroy()
	st, err := SecretStatistics()
	if err != nil {
		t.Fatal(err)
	}
	if st.AllocsAhead != 0 || a.IsAlive() || b.IsAlive() {
		t.Fatalf("after Purge and one secret: %d allocated ahead (alive: %v %v), want 0",
			st.AllocsAhead, a.IsAlive(), b.IsAlive())
	}
}

// Goroutines taking secrets of one size from the same batches, beside
// Purge and SecretStatistics in loops: every secret is zeroed when made and
// keeps what its goroutine wrote until destroyed or purged; in the end,
// nothing is allocated, ahead or not.
func TestSecretsAheadBesidePurge(t *testing.T) {
	const size = 43 // no other test uses it
	var stop atomic.Bool
	var side sync.WaitGroup
	side.Add(2)
	go func() {
		defer side.Done()
		for !stop.Load() {
			Purge()
		}
	}()
	go func() {
		defer side.Done()
		for !stop.Load() {
			if _, err := SecretStatistics(); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for g := 1; g <= 8; g++ {
		wg.Add(1)
		go func(g byte) {
			defer wg.Done()
			for i := 0; i < 2000; i++ {
				s, err := NewSecret(size)
				if err != nil {
					t.Error(err)
					return
				}
				// A Purge may have come first: then Bytes is nil.
				b := s.Bytes()
				if b != nil && !bytes.Equal(b, make([]byte, size)) {
					t.Errorf("a new secret reads %x", b)
					return
				}
				want := append([]byte{g, g, g}, make([]byte, size-3)...)
				if err := s.Copy(want[:3]); err == nil && !s.EqualTo(want) && s.IsAlive() {
					t.Errorf("goroutine %d: its secret changed under it", g)
					return
				}
				s.Destroy()
			}
		}(byte(g))
	}
	wg.Wait()
	stop.Store(true)
	side.Wait()
	Purge()
	st, err := SecretStatistics()
	if err != nil {
		t.Fatal(err)
	}
	if st.AllocsLive != 0 || st.AllocsAhead != 0 {
		t.Fatalf("after the last Purge: %d live, %d of them ahead; want none", st.AllocsLive, st.AllocsAhead)
	}
}

func init() {
	childModes["ahead-limit"] = childAheadLimit
}

// childAheadLimit: secrets of many sizes made and destroyed, as a service
// storing tokens of lengths its clients choose.  Under a 64 KiB
// RLIMIT_MEMLOCK, sizes 200 to 215 leave room for a page secret and a 2 KiB
// one: what is allocated ahead never makes an allocation fail.  Under
// 8 MiB, sizes 1 to 512 leave at most 64 KiB allocated ahead.
func childAheadLimit() int {
	cycle := func(from, to int) error {
		for size := from; size <= to; size++ {
			for i := 0; i < 65; i++ {
				s, err := NewSecret(size)
				if err != nil {
					return err
				}
				s.Destroy()
			}
		}
		return nil
	}
	// The soft limit: the hard one (8 MiB) lets it grow for the second part.
	limit := func(soft uint64) error {
		return syscall.Setrlimit(rlimitMemlock, &syscall.Rlimit{Cur: soft, Max: 8 << 20})
	}
	if err := limit(64 << 10); err != nil {
		fmt.Println("setrlimit:", err)
		return 1
	}
	if err := cycle(200, 215); err != nil {
		fmt.Println("sizes 200 to 215:", err)
		return 1
	}
	for _, size := range []int{4096, 2048} {
		newOne := NewSecret
		if size == 4096 {
			newOne = NewPageSecret
		}
		s, err := newOne(size)
		if err != nil {
			fmt.Printf("under 64 KiB, a secret of %d bytes: %v\n", size, err)
			continue
		}
		fmt.Printf("under 64 KiB, a secret of %d bytes: ok\n", size)
		s.Destroy()
	}
	if err := limit(8 << 20); err != nil {
		fmt.Println("setrlimit:", err)
		return 1
	}
	if err := cycle(1, reserveMax); err != nil {
		fmt.Println("sizes 1 to 512:", err)
		return 1
	}
	st, err := SecretStatistics()
	if err != nil {
		fmt.Println(err)
		return 1
	}
	fmt.Printf("sizes 1 to 512, all destroyed: %d bytes ahead\n", st.BytesAhead)
	return 0
}

func TestAheadWithinLimits(t *testing.T) {
	out := runUnprivileged(t, "ahead-limit")
	var ahead int
	_, last, _ := strings.Cut(out, "sizes 1 to 512")
	_, err := fmt.Sscanf(last, ", all destroyed: %d bytes ahead\n", &ahead)
	if err != nil || ahead > aheadMax || !strings.Contains(out, "a secret of 4096 bytes: ok\n") ||
		!strings.Contains(out, "a secret of 2048 bytes: ok\n") {
		t.Fatalf("child: %s", out)
	}
	t.Log(strings.TrimSpace(out))
}

// The secrets allocated ahead are not live ones: after secrets of a size
// were made and destroyed, AllocsLive and BytesLive are what they were,
// whatever waits ahead (AllocsAhead, BytesAhead).
func TestStatsCountHandedOut(t *testing.T) {
	const size = 47 // no other test uses it
	before, err := SecretStatistics()
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		must(t)(NewSecret(size)).Destroy()
	}
	after, err := SecretStatistics()
	if err != nil {
		t.Fatal(err)
	}
	if after.AllocsLive != before.AllocsLive || after.BytesLive != before.BytesLive {
		t.Fatalf("%d live secrets (%d bytes) before, %d (%d bytes) after 100 made and destroyed",
			before.AllocsLive, before.BytesLive, after.AllocsLive, after.BytesLive)
	}
	t.Logf("%d secrets (%d bytes) ahead", after.AllocsAhead, after.BytesAhead)
}
