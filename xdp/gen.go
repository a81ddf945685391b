package xdp

// The eBPF programs compiled with clang through bpf2go: bpf/queryd.c (the
// fast path), bpf/divert_tc.c (divert's tc egress program, loaded only
// with [listen] divert) and bpf/test.c (the tests' and the benchmark's
// programs). The objects and the Go bindings they make
// are committed, so that building queryd needs no clang; .ci/run
// regenerates them with Debian's clang and fails on a difference. The
// headers come from bpf/include (vendored) only: -nostdinc keeps the build
// off the host's multiarch include folder. -type writes the C structs and
// enums the Go side shares (consts.h, structs.h) into queryd_bpfel.go.
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc clang -strip llvm-strip -target bpfel -tags linux -type config -type reply -type stats -type ipkey -type srckey -type destkey -type dest -type srvdenykey -type server_limit -type outcome -type reply_flags -type pass_reason -type iface_flags -type addrkey -type addr_kind -type denykey -type source_count -type seen -type peer -type proven_bucket -type drain -type divert_key -type divert_val -type divert_count -type divert_result -type divert_rest -type divert_join -type divert_join_count -type divert_join_result queryd bpf/queryd.c -- -O2 -g -Wall -Werror -mcpu=v3 -nostdinc -Ibpf/include
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc clang -strip llvm-strip -target bpfel -tags linux querydtest bpf/test.c -- -O2 -g -Wall -Werror -mcpu=v3 -nostdinc -Ibpf/include
//go:generate go run github.com/cilium/ebpf/cmd/bpf2go -cc clang -strip llvm-strip -target bpfel -tags linux -type back_key divert bpf/divert_tc.c -- -O2 -g -Wall -Werror -mcpu=v3 -nostdinc -Ibpf/include
