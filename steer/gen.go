package steer

// The SK_REUSEPORT program compiled with clang through bpf2go, as package
// xdp's are (xdp/gen.go): the object and its Go bindings are committed, so
// that building queryd needs no clang; .ci/run regenerates them with
// Debian's clang and fails on a difference. The headers are package xdp's
// vendored ones (xdp/bpf/include).
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc clang -strip llvm-strip -target bpfel -tags linux -type steerkey steer bpf/steer.c -- -O2 -g -Wall -Werror -mcpu=v3 -nostdinc -I../xdp/bpf/include
