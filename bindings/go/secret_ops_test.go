// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"
)

// must is a constructor's Secret, or the test's end.
func must(t *testing.T) func(*Secret, error) *Secret {
	return func(s *Secret, err error) *Secret {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
}

func TestNewSecretFromBytesWipesTheSource(t *testing.T) {
	src := []byte("correct horse battery staple")
	s := must(t)(NewSecretFromBytes(src))
	defer s.Destroy()
	if string(s.Bytes()) != "correct horse battery staple" {
		t.Fatalf("the secret holds %q", s.Bytes())
	}
	if !bytes.Equal(src, make([]byte, len(src))) {
		t.Fatalf("the source was not wiped: %q", src)
	}
}

func TestNewSecretRandom(t *testing.T) {
	a := must(t)(NewSecretRandom(32))
	defer a.Destroy()
	b := must(t)(NewSecretRandom(32))
	defer b.Destroy()
	if a.Size() != 32 || bytes.Equal(a.Bytes(), make([]byte, 32)) || bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatalf("two random secrets: %x and %x", a.Bytes(), b.Bytes())
	}
}

// shortReader writes what it has into the caller's buffer, remembering
// where, then reports the end.
type shortReader struct {
	data  []byte
	where unsafe.Pointer
}

func (r *shortReader) Read(p []byte) (int, error) {
	if len(r.data) == 0 {
		return 0, io.EOF
	}
	r.where = unsafe.Pointer(&p[0])
	n := copy(p, r.data)
	r.data = r.data[n:]
	return n, nil
}

func TestNewSecretFromReader(t *testing.T) {
	s := must(t)(NewSecretFromReader(strings.NewReader("0123456789abcdef-and-more"), 16))
	if string(s.Bytes()) != "0123456789abcdef" {
		t.Fatalf("the secret holds %q", s.Bytes())
	}
	s.Destroy()
}

// A short read is an error, and what was read is wiped and freed: the slot
// the reader wrote into reads as zeroes while a neighbour keeps its chunk
// mapped, and the allocator counts no more live secrets than before.
func TestNewSecretFromReaderShortReadLeavesNothing(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	keep := must(t)(NewSecret(64))
	defer keep.Destroy()
	before, err := SecretStatistics()
	if err != nil {
		t.Fatal(err)
	}
	r := &shortReader{data: []byte("half a key")}
	s, err := NewSecretFromReader(r, 64)
	if s != nil || !errors.Is(err, io.ErrUnexpectedEOF) || !strings.Contains(err.Error(), "10 of 64 bytes") {
		t.Fatalf("a short read: %v, %v; want no secret and io.ErrUnexpectedEOF", s, err)
	}
	after, err := SecretStatistics()
	if err != nil {
		t.Fatal(err)
	}
	if after.AllocsLive != before.AllocsLive {
		t.Fatalf("live secrets %d before, %d after a failed read", before.AllocsLive, after.AllocsLive)
	}
	q := uintptr(unsafe.Pointer(&keep.Bytes()[0]))
	if d := int64(uintptr(r.where)) - int64(q); d < -4096 || d > 4096 {
		t.Skipf("the two secrets are %d bytes apart: not one page of one chunk", d)
	}
	if slot := unsafe.Slice((*byte)(r.where), 64); !bytes.Equal(slot, make([]byte, 64)) {
		t.Fatalf("the slot read into holds %q after the failure", slot)
	}
}

func TestSecretEqualTo(t *testing.T) {
	s := must(t)(NewSecretFromBytes([]byte("key")))
	if !s.EqualTo([]byte("key")) || s.EqualTo([]byte("kez")) || s.EqualTo([]byte("ke")) || s.EqualTo(nil) {
		t.Fatal("EqualTo compares wrong")
	}
	s.Destroy()
	if s.EqualTo([]byte("key")) {
		t.Fatal("a destroyed secret equals its old bytes")
	}
	p := must(t)(NewPageSecret(3))
	defer p.Destroy()
	if err := p.Copy([]byte("key")); err != nil {
		t.Fatal(err)
	}
	if err := p.NoAccess(); err != nil {
		t.Fatal(err)
	}
	if p.EqualTo([]byte("key")) {
		t.Fatal("an inaccessible secret was compared (and did not fault)")
	}
}

func TestSecretCopyMoveWipe(t *testing.T) {
	s := must(t)(NewSecret(8))
	if err := s.Copy([]byte("abcd")); err != nil {
		t.Fatal(err)
	}
	if err := s.CopyAt(4, []byte("efgh")); err != nil {
		t.Fatal(err)
	}
	if string(s.Bytes()) != "abcdefgh" {
		t.Fatalf("after Copy and CopyAt: %q", s.Bytes())
	}
	// Too long, or past the end: an error, nothing copied.
	for _, c := range []struct {
		offset int
		src    string
	}{{0, "123456789"}, {5, "1234"}, {-1, "1"}, {9, ""}} {
		err := s.CopyAt(c.offset, []byte(c.src))
		if !errors.Is(err, syscall.EINVAL) || !strings.Contains(err.Error(), "do not fit in a secret of 8") {
			t.Fatalf("CopyAt(%d, %q): %v, want EINVAL", c.offset, c.src, err)
		}
	}
	if string(s.Bytes()) != "abcdefgh" {
		t.Fatalf("a refused copy changed the secret: %q", s.Bytes())
	}
	src := []byte("WXYZ")
	if err := s.MoveAt(2, src); err != nil {
		t.Fatal(err)
	}
	if string(s.Bytes()) != "abWXYZgh" || !bytes.Equal(src, make([]byte, 4)) {
		t.Fatalf("after MoveAt: secret %q, source %q", s.Bytes(), src)
	}
	src = []byte("123456789")
	if err := s.Move(src); err == nil || string(src) != "123456789" {
		t.Fatalf("a refused Move: %v, source %q (want it kept)", err, src)
	}
	if err := s.Wipe(); err != nil || !bytes.Equal(s.Bytes(), make([]byte, 8)) || !s.IsAlive() {
		t.Fatalf("Wipe: %v, %q", err, s.Bytes())
	}
	s.Destroy()
	for name, err := range map[string]error{"Copy": s.Copy([]byte("a")), "Move": s.Move([]byte("a")), "Wipe": s.Wipe()} {
		if !errors.Is(err, syscall.EINVAL) || !strings.Contains(err.Error(), "destroyed") {
			t.Fatalf("%s after Destroy: %v", name, err)
		}
	}
}

// A frozen secret refuses writes with an error instead of a fault.
func TestSecretWritesToFrozenRefused(t *testing.T) {
	s := must(t)(NewPageSecret(16))
	defer s.Destroy()
	if err := s.Freeze(); err != nil {
		t.Fatal(err)
	}
	if s.IsMutable() {
		t.Fatal("a frozen secret says it is mutable")
	}
	for name, err := range map[string]error{"Copy": s.Copy([]byte("a")), "Wipe": s.Wipe()} {
		if !errors.Is(err, fs.ErrPermission) || !strings.Contains(err.Error(), "Melt") {
			t.Fatalf("%s of a frozen secret: %v, want EACCES", name, err)
		}
	}
	if err := s.Melt(); err != nil {
		t.Fatal(err)
	}
	if err := s.Copy([]byte("a")); err != nil || !s.IsMutable() {
		t.Fatalf("Copy after Melt: %v", err)
	}
}

func TestPurgeDestroysEveryLiveSecret(t *testing.T) {
	var all []*Secret
	for i := 0; i < 3*slabSize; i++ {
		s := must(t)(NewSecret(1 + i%100))
		all = append(all, s)
	}
	page := must(t)(NewPageSecret(64))
	if err := page.Freeze(); err != nil {
		t.Fatal(err)
	}
	all = append(all, page)
	all[5].Destroy()
	Purge()
	for i, s := range all {
		if s.IsAlive() || s.Bytes() != nil {
			t.Fatalf("secret %d survived Purge", i)
		}
		s.Destroy()
	}
	s := must(t)(NewSecret(32))
	if !s.IsAlive() {
		t.Fatal("a secret made after Purge is not alive")
	}
	s.Destroy()
}

func init() {
	childModes["leak"] = childLeak
	childModes["interrupt"] = childInterrupt
	childModes["safe-exit"] = childSafeExit
}

// dropOne makes a secret and loses it, and an empty one, which holds no
// memory and is not reported.
func dropOne() {
	for _, size := range []int{0, 48} {
		if _, err := NewSecret(size); err != nil {
			panic(err)
		}
	}
}

// childLeak drops a secret, closes its slab with secrets of other sizes
// (16 to 23 bytes, as a program that keeps no secret of the leaked one's
// size) destroyed as they should be, and waits for the collector to report
// it.
func childLeak() int {
	dropOne()
	for i := 0; i < slabSize; i++ {
		s, err := NewSecret(16 + i%8)
		if err != nil {
			fmt.Println(err)
			return 1
		}
		s.Destroy()
	}
	for i := 0; i < 3000 && LeakedSecrets() == 0; i++ {
		runtime.GC()
		time.Sleep(time.Millisecond)
	}
	fmt.Printf("leaked %d\n", LeakedSecrets())
	return 0
}

func TestLeakedSecretIsReported(t *testing.T) {
	out, err := childCommand("leak").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "leaked 1\n") ||
		!strings.Contains(string(out), "a Secret of 48 bytes was garbage-collected without Destroy") {
		t.Fatalf("child: %v\n%s", err, out)
	}
}

// reportPurge makes the child say, once purged, whether s survived and how
// many secrets the allocator still holds.
func reportPurge(s *Secret) {
	purgedHook = func() {
		st, err := SecretStatistics()
		fmt.Printf("purged: alive %v, live %d, %v\n", s.IsAlive(), st.AllocsLive, err)
	}
}

// purgedLine is what reportPurge prints when the Purge destroyed everything.
const purgedLine = "purged: alive false, live 0, <nil>\n"

// childInterrupt holds a secret until a signal ends it.
func childInterrupt() int {
	CatchInterrupt()
	s, err := NewSecretFromBytes([]byte("held until the signal"))
	if err != nil {
		fmt.Println(err)
		return 1
	}
	reportPurge(s)
	fmt.Println("ready", s.Size())
	time.Sleep(time.Minute)
	return 3
}

func TestCatchInterruptEndsByTheSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM} {
		cmd := childCommand("interrupt")
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		rd := bufio.NewReader(out)
		line, _ := rd.ReadString('\n')
		if line != "ready 21\n" {
			cmd.Process.Kill()
			cmd.Wait()
			t.Fatalf("child said %q", line)
		}
		cmd.Process.Signal(sig)
		rest, _ := io.ReadAll(rd)
		err = cmd.Wait()
		if string(rest) != purgedLine {
			t.Fatalf("%v: the child said %q, want %q", sig, rest, purgedLine)
		}
		var exit *exec.ExitError
		if !errors.As(err, &exit) {
			t.Fatalf("%v: the child ended with %v", sig, err)
		}
		if ws := exit.Sys().(syscall.WaitStatus); !ws.Signaled() || ws.Signal() != sig {
			t.Fatalf("%v: the child ended with %v, want killed by the signal", sig, err)
		}
	}
}

func childSafeExit() int {
	s, err := NewSecret(32)
	if err != nil {
		fmt.Println(err)
		return 1
	}
	reportPurge(s)
	SafeExit(7)
	return 1
}

func TestSafeExit(t *testing.T) {
	out, err := childCommand("safe-exit").Output()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 7 || string(out) != purgedLine {
		t.Fatalf("child: %v, %q; want exit status 7 and %q", err, out, purgedLine)
	}
}

// childCommand runs this test binary again in child mode.
func childCommand(mode string) *exec.Cmd {
	self, err := os.Executable()
	if err != nil {
		panic(err)
	}
	cmd := exec.Command(self)
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	return cmd
}

// Destroy while other goroutines copy into, compare and wipe the secret:
// each call either completes on live memory or reports the secret
// destroyed (under -race, an unordered access would be reported).
func TestSecretDestroyDuringCalls(t *testing.T) {
	for round := 0; round < 100; round++ {
		s := must(t)(NewSecret(64))
		done := make(chan error, 3)
		for g := 0; g < 3; g++ {
			go func(g int) {
				for {
					var err error
					switch g {
					case 0:
						err = s.Copy(bytes.Repeat([]byte{byte(round)}, 64))
					case 1:
						if !s.EqualTo(make([]byte, 64)) && !s.IsAlive() {
							err = s.Wipe()
						}
					default:
						err = s.Wipe()
					}
					if err != nil {
						if !strings.Contains(err.Error(), "destroyed") {
							done <- err
							return
						}
						done <- nil
						return
					}
					runtime.Gosched()
				}
			}(g)
		}
		runtime.Gosched()
		s.Destroy()
		for g := 0; g < 3; g++ {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
	}
}
