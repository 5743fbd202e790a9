// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

package mmkit

import (
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// The lib_*.c wrappers are lib/SOURCES, one each: run go generate when it changes.
func TestWrappersFollowLibSources(t *testing.T) {
	list, err := os.ReadFile("../../lib/SOURCES")
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, name := range strings.Fields(string(list)) {
		want = append(want, "lib_"+name)
		text, err := os.ReadFile("lib_" + name)
		if err != nil || !strings.Contains(string(text), "#include \"../../lib/"+name+"\"") {
			t.Errorf("lib_%s does not include lib/%s (run go generate): %v", name, name, err)
		}
	}
	have, _ := filepath.Glob("lib_*.c")
	sort.Strings(want)
	sort.Strings(have)
	if strings.Join(have, " ") != strings.Join(want, " ") {
		t.Fatalf("wrappers %v, lib/SOURCES %v: run go generate", have, want)
	}
}
