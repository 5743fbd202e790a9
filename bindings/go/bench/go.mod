// The benchmark against memguard: a module of its own, so that the mmkit
// module itself depends on nothing.
module mmkit.dev/mmkit/bindings/go/bench

go 1.23.1

require (
	github.com/awnumar/memguard v0.23.0
	mmkit.dev/mmkit v0.0.0
)

require (
	github.com/awnumar/memcall v0.4.0 // indirect
	golang.org/x/crypto v0.41.0 // indirect
	golang.org/x/sys v0.35.0 // indirect
)

replace mmkit.dev/mmkit => ../../..
