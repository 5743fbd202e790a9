// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"
)

// The child modes: the test binary run again as an unprivileged user with a
// small RLIMIT_MEMLOCK (runUnprivileged).
var childModes = map[string]func() int{}

const childEnv = "MMKIT_GO_TEST_CHILD"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(childModes[mode]())
	}
	os.Exit(m.Run())
}

// rlimitMemlock is RLIMIT_MEMLOCK, which package syscall does not name.
const rlimitMemlock = 8

// setMemlock sets this process's RLIMIT_MEMLOCK (soft and hard) to bytes.
func setMemlock(bytes uint64) error {
	return syscall.Setrlimit(rlimitMemlock, &syscall.Rlimit{Cur: bytes, Max: bytes})
}

// runUnprivileged runs child mode as uid and gid 65534 (nobody), from a
// copy of the test binary that nobody may execute, and returns its output.
// Skips unless root, which may change users.
func runUnprivileged(t *testing.T, mode string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root to run a child as uid 65534")
	}
	// Not t.TempDir(): its parent is private to root.
	dir, err := os.MkdirTemp("", "mmkit-go-test-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "child.test")
	if err := copyFile(self, bin); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), childEnv+"="+mode)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child %s: %v\n%s", mode, err, out)
	}
	return string(out)
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
