// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
)

func TestNewSecretsDestroySecrets(t *testing.T) {
	before, err := SecretStatistics()
	if err != nil {
		t.Fatal(err)
	}
	ss, err := NewSecrets(3*slabSize/2, 40)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[*byte]bool{}
	for i, s := range ss {
		b := s.Bytes()
		if len(b) != 40 || !bytes.Equal(b, make([]byte, 40)) || seen[&b[0]] {
			t.Fatalf("secret %d: %d bytes %x, or the memory of another", i, len(b), b)
		}
		seen[&b[0]] = true
		b[0] = byte(i)
	}
	page := must(t)(NewPageSecret(16))
	if err := page.Freeze(); err != nil {
		t.Fatal(err)
	}
	ss[1].Destroy()
	// Destroyed already, twice, nil, frozen: all taken.
	DestroySecrets(append(ss, ss[0], nil, page)...)
	for i, s := range append(ss, page) {
		if s.IsAlive() {
			t.Fatalf("secret %d survived DestroySecrets", i)
		}
	}
	after, err := SecretStatistics()
	if err != nil {
		t.Fatal(err)
	}
	if after.AllocsLive != before.AllocsLive {
		t.Fatalf("live secrets %d before, %d after", before.AllocsLive, after.AllocsLive)
	}
	if ss, err := NewSecrets(0, 32); ss != nil || err != nil {
		t.Fatalf("NewSecrets(0, 32): %v, %v", ss, err)
	}
	for _, c := range [][2]int{{-1, 32}, {2, 0}, {2, -1}} {
		_, err := NewSecrets(c[0], c[1])
		if !errors.Is(err, syscall.EINVAL) {
			t.Fatalf("NewSecrets(%d, %d): %v, want EINVAL", c[0], c[1], err)
		}
	}
}

func init() {
	childModes["secrets-limit"] = childSecretsLimit
}

// childSecretsLimit: NewSecrets over RLIMIT_MEMLOCK gives none and says so.
func childSecretsLimit() int {
	if err := setMemlock(1 << 20); err != nil {
		fmt.Println("setrlimit:", err)
		return 1
	}
	ss, err := NewSecrets(64, 1<<15)
	st, serr := SecretStatistics()
	if serr != nil {
		fmt.Println(serr)
		return 1
	}
	fmt.Printf("got %d, live %d: %v\n", len(ss), st.AllocsLive, err)
	return 0
}

func TestNewSecretsAllOrNone(t *testing.T) {
	out := runUnprivileged(t, "secrets-limit")
	if !strings.Contains(out, "got 0, live 0: mmkit_secret_alloc: ") || !strings.Contains(out, "RLIMIT_MEMLOCK") {
		t.Fatalf("child: %s", out)
	}
}
