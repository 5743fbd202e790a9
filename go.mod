// The Go binding (package mmkit, in bindings/go): the module is the whole
// repository, so that a module zip carries the library's C sources (lib/,
// include/) that the package compiles.  See bindings/go/README.md.
module mmkit.dev/mmkit

go 1.19
