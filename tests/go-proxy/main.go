// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

// go-proxy lays out one version of a module as a module proxy serves it
// (GOPROXY=file://OUT), from the module's files in SRC:
//
//	OUT/<module>/@v/list, VERSION.info, VERSION.mod, VERSION.zip
//
// The zip is made by golang.org/x/mod/zip, the code the go command checks
// module zips with: its rules (no symbolic links, no nested modules, no
// vendor directories, size limits, file names) are the ones `go get` holds
// the module to.
//
//	go run . SRC VERSION OUT
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"golang.org/x/mod/modfile"
	"golang.org/x/mod/module"
	"golang.org/x/mod/zip"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: go-proxy SRC VERSION OUT")
		os.Exit(2)
	}
	if err := layOut(os.Args[1], os.Args[2], os.Args[3]); err != nil {
		fmt.Fprintln(os.Stderr, "go-proxy:", err)
		os.Exit(1)
	}
}

func layOut(src, version, out string) error {
	gomod, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		return err
	}
	path := modfile.ModulePath(gomod)
	if path == "" {
		return fmt.Errorf("%s/go.mod names no module", src)
	}
	mv := module.Version{Path: path, Version: version}
	if err := module.Check(path, version); err != nil {
		return err
	}
	escaped, err := module.EscapePath(path)
	if err != nil {
		return err
	}
	dir := filepath.Join(out, escaped, "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	z, err := os.Create(filepath.Join(dir, version+".zip"))
	if err != nil {
		return err
	}
	if err := zip.CreateFromDir(z, mv, src); err != nil {
		z.Close()
		return err
	}
	if err := z.Close(); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    time.Time
	}{version, time.Now().UTC().Truncate(time.Second)})
	if err != nil {
		return err
	}
	for name, data := range map[string][]byte{
		version + ".info": info,
		version + ".mod":  gomod,
		"list":            []byte(version + "\n"),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}
