// tests/test-go-proxy.sh's helper: a module of its own (so that it stays
// out of the mmkit module's zip), with no dependencies: it builds offline.
module mmkit.dev/mmkit/tests/go-proxy

go 1.19
