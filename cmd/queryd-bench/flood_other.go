//go:build !linux || !(386 || amd64 || arm || arm64 || loong64 || mips64le || mipsle || ppc64le || riscv64)

package main

import (
	"fmt"
	"io"
)

// cmdFlood needs Linux (AF_PACKET and the XDP pass program).
func cmdFlood(_ []string, _, stderr io.Writer) int {
	fmt.Fprintln(stderr, "queryd-bench flood: needs Linux")
	return 1
}
