// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

// A Go program nobody changed for mmkit: its runtime names its memory
// (Go 1.25+, module "go 1.25").  Run as "namesrun DIR [children]": it
// writes its PID into DIR/pid-ROLE, starts a child of itself (fork and
// exec, os/exec) if asked, and waits until DIR/done exists (a minute at
// most).  tests/test-names-run.sh reads its names meanwhile.
package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

var keep [][]byte

func main() {
	dir, role := os.Args[1], "parent"
	if len(os.Args) > 2 {
		role = os.Args[2]
	}
	for i := 0; i < 64; i++ {
		keep = append(keep, make([]byte, 1<<16))
	}
	var child *exec.Cmd
	if role == "children" {
		role = "parent"
		child = exec.Command(os.Args[0], dir, "child")
		child.Stderr = os.Stderr
		if err := child.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
	}
	pid := filepath.Join(dir, "pid-"+role)
	if err := os.WriteFile(pid+".tmp", []byte(fmt.Sprint(os.Getpid())), 0o644); err != nil ||
		os.Rename(pid+".tmp", pid) != nil {
		os.Exit(1)
	}
	for i := 0; i < 6000; i++ {
		if _, err := os.Stat(filepath.Join(dir, "done")); err == nil {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if child != nil && child.Wait() != nil {
		os.Exit(1)
	}
}
