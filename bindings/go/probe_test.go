// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

import (
	"errors"
	"runtime"
	"strings"
	"syscall"
	"testing"
)

func TestProbeNamesEveryFeature(t *testing.T) {
	features, err := Probe()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"refpage", "names", "pac", "secret", "lock_onfault", "userfaultfd"}
	if len(features) != len(want) {
		t.Fatalf("Probe: %d features, want %d", len(features), len(want))
	}
	for i, f := range features {
		if f.Name != want[i] || f.Status == "" || f.Reason == "" {
			t.Fatalf("feature %d: %+v", i, f)
		}
	}
}

// Anywhere but arm64 with pointer authentication, the keys are unsupported
// and the message says why.
func TestPACUnsupportedOffArm64(t *testing.T) {
	if runtime.GOARCH == "arm64" {
		t.Skip("arm64: tests/test-pac.c proves the keys in the kernel tier")
	}
	_, err := PACGetEnabledKeys()
	if !errors.Is(err, syscall.EOPNOTSUPP) || !strings.Contains(err.Error(), "arm64") {
		t.Fatalf("PACGetEnabledKeys: %v, want EOPNOTSUPP saying why", err)
	}
	if err := PACSetEnabledKeys(0x10, 0); !errors.Is(err, syscall.EINVAL) {
		t.Fatalf("PACSetEnabledKeys with an unknown key: %v, want EINVAL", err)
	}
}
