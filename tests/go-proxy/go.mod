// tests/test-go-proxy.sh's helper: a module of its own, so that the mmkit
// module depends on nothing (and a nested module stays out of its zip).
module mmkit.dev/mmkit/tests/go-proxy

go 1.19

require golang.org/x/mod v0.14.0
