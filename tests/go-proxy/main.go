// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later

// go-proxy lays out one version of a module as a module proxy serves it
// (GOPROXY=file://OUT), from the module's files in SRC:
//
//	OUT/<module>/@v/list, VERSION.info, VERSION.mod, VERSION.zip
//
// The zip is made with the standard library alone (archive/zip), so that no
// download is needed, following the go command's rules for module zips
// (those of golang.org/x/mod/zip, which `go get` checks the zip with):
// files under "<module>@<version>/"; version control directories, nested
// modules, vendored packages, symbolic links and other irregular files left
// out; file names that module.CheckFilePath accepts, no two equal under case
// folding; size limits.  A file that breaks a rule is an error naming it.
//
//	go run . SRC VERSION OUT
package main

import (
	"archive/zip"
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// The go command's limits (golang.org/x/mod/zip).
const (
	maxZipFile = 500 << 20 // the zip, and the files it holds together
	maxGoMod   = 16 << 20
	maxLICENSE = 16 << 20
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

// release is a plain release version, canonical: vMAJOR.MINOR.PATCH.
var release = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$`)

// lowerPath is a module path that the proxy protocol's escaping leaves as
// it is (no upper case letters) and that needs no major version suffix.
var lowerPath = regexp.MustCompile(`^[a-z0-9.-]+\.[a-z]+(/[a-z0-9._~-]+)*$`)

func layOut(src, version, out string) error {
	gomod, err := os.ReadFile(filepath.Join(src, "go.mod"))
	if err != nil {
		return err
	}
	mod := modulePath(gomod)
	switch {
	case mod == "":
		return fmt.Errorf("%s/go.mod names no module", src)
	case !lowerPath.MatchString(mod):
		return fmt.Errorf("module path %q: this tool lays out lower-case paths only (no escaping)", mod)
	case !release.MatchString(version):
		return fmt.Errorf("version %q is not of the form vMAJOR.MINOR.PATCH", version)
	case !strings.HasPrefix(version, "v0.") && !strings.HasPrefix(version, "v1."):
		return fmt.Errorf("version %s needs a /v%s suffix on the module path", version, strings.SplitN(version[1:], ".", 2)[0])
	}
	dir := filepath.Join(out, filepath.FromSlash(mod), "@v")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	z, err := os.Create(filepath.Join(dir, version+".zip"))
	if err != nil {
		return err
	}
	if err := writeZip(z, mod+"@"+version+"/", src); err != nil {
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

// modulePath is the path of go.mod's module directive.
func modulePath(gomod []byte) string {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		if rest := strings.TrimPrefix(line, "module"); rest != line && (rest == "" || rest[0] == ' ' || rest[0] == '\t') {
			return strings.Trim(strings.TrimSpace(rest), `"`)
		}
	}
	return ""
}

// writeZip writes the module zip of the files under src, each named
// prefix + its slash path.
func writeZip(w io.Writer, prefix, src string) error {
	files, err := moduleFiles(src)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(w)
	var total int64
	for _, f := range files {
		total += f.size
		switch {
		case total > maxZipFile:
			return fmt.Errorf("the module's files are more than %d bytes", maxZipFile)
		case f.path == "go.mod" && f.size > maxGoMod:
			return fmt.Errorf("go.mod: more than %d bytes", maxGoMod)
		case f.path == "LICENSE" && f.size > maxLICENSE:
			return fmt.Errorf("LICENSE: more than %d bytes", maxLICENSE)
		}
		if err := addFile(zw, prefix+f.path, filepath.Join(src, filepath.FromSlash(f.path))); err != nil {
			return err
		}
	}
	return zw.Close()
}

func addFile(zw *zip.Writer, name, file string) error {
	in, err := os.Open(file)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := zw.Create(name)
	if err != nil {
		return err
	}
	_, err = io.Copy(out, in)
	return err
}

type file struct {
	path string // slash-separated, relative to the module root
	size int64
}

// moduleFiles lists the files that go in the zip, as x/mod's CreateFromDir
// does, and checks their names.
func moduleFiles(src string) ([]file, error) {
	var files []file
	seen := map[string]string{} // case-folded path: the path
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		slash := filepath.ToSlash(rel)
		if vendored(slash) {
			return nil
		}
		if d.IsDir() {
			if p == src {
				return nil
			}
			switch d.Name() {
			case ".bzr", ".git", ".hg", ".svn":
				return filepath.SkipDir
			}
			// A nested module: a directory with a go.mod file.
			if fi, err := os.Lstat(filepath.Join(p, "go.mod")); err == nil && !fi.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !d.Type().IsRegular() || slash == ".hg_archival.txt" {
			return nil // symbolic links, devices: left out, as by the go command
		}
		if err := checkFilePath(slash); err != nil {
			return fmt.Errorf("%s: %w", slash, err)
		}
		if strings.EqualFold(slash, "go.mod") && slash != "go.mod" {
			return fmt.Errorf("%s: go.mod must be named in lower case", slash)
		}
		for q := slash; q != "."; q = path.Dir(q) {
			fold := strings.ToLower(q)
			if other, ok := seen[fold]; ok && other != q {
				return fmt.Errorf("%s and %s: the same name but for case", other, q)
			}
			seen[fold] = q
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		files = append(files, file{slash, fi.Size()})
		return nil
	})
	return files, err
}

// vendored reports whether name is in a vendored package, as x/mod's
// isVendoredPackage does (its known false positives included: golang.org/issue/31562).
func vendored(name string) bool {
	var i int
	if strings.HasPrefix(name, "vendor/") {
		i += len("vendor/")
	} else if j := strings.Index(name, "/vendor/"); j >= 0 {
		i += len("/vendor/")
	} else {
		return false
	}
	return strings.Contains(name[i:], "/")
}

// windowsReserved are the file names Windows reserves, which a module may
// not use as the part of an element before its first dot.
var windowsReserved = []string{"CON", "PRN", "AUX", "NUL",
	"COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9",
	"LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9"}

// checkFilePath is module.CheckFilePath: the names a module zip may hold.
func checkFilePath(p string) error {
	if !utf8.ValidString(p) {
		return errors.New("invalid UTF-8")
	}
	for _, elem := range strings.Split(p, "/") {
		switch {
		case elem == "":
			return errors.New("empty path element")
		case strings.Count(elem, ".") == len(elem):
			return fmt.Errorf("invalid path element %q", elem)
		case elem[len(elem)-1] == '.':
			return errors.New("trailing dot in path element")
		}
		for _, r := range elem {
			if !fileNameOK(r) {
				return fmt.Errorf("invalid char %q", r)
			}
		}
		short, _, _ := strings.Cut(elem, ".")
		for _, bad := range windowsReserved {
			if strings.EqualFold(bad, short) {
				return fmt.Errorf("%q disallowed as path element component on Windows", short)
			}
		}
	}
	return nil
}

func fileNameOK(r rune) bool {
	if r < utf8.RuneSelf {
		return '0' <= r && r <= '9' || 'A' <= r && r <= 'Z' || 'a' <= r && r <= 'z' ||
			strings.ContainsRune("!#$%&()+,-.=@[]^_{}~ ", r)
	}
	return unicode.IsLetter(r)
}
