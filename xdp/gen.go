package xdp

// The eBPF program (bpf/queryd.c) compiled with clang through bpf2go; the
// object and the Go bindings it makes are committed, so that building queryd
// needs no clang. .ci/run regenerates them with Debian's clang and fails on
// a difference.
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc clang -strip llvm-strip -target bpfel -tags linux -type config -type reply -type stats -type listen -type ipkey queryd bpf/queryd.c -- -O2 -g -Wall -Werror -mcpu=v3 -I/usr/include/x86_64-linux-gnu
