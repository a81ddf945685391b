// Command jitlines maps addresses in a loaded BPF program's JIT image
// (from perf samples: perf script -F ip) to the C source lines they came
// from, through the program's JIT line info (BPF_OBJ_GET_INFO_BY_FD):
// where an XDP program spends its time, without a disassembler. Needs
// root (CAP_SYS_ADMIN to open a program by ID).
//
//	jitlines PROG_ID ADDR...    # ADDR in hex, e.g. ffffffffc0029bb3
//
// For each address it prints the nearest source lines at or before it,
// with the bytes past each line's first instruction.
package main

import (
	"fmt"
	"os"
	"sort"
	"strconv"

	"github.com/cilium/ebpf"
)

// line is one line info entry: where its code starts in the JIT image.
type line struct {
	addr uint64
	text string
}

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: jitlines PROG_ID ADDR...")
		os.Exit(2)
	}
	lines, err := jitLines(os.Args[1])
	if err != nil {
		fmt.Fprintln(os.Stderr, "jitlines:", err)
		os.Exit(1)
	}
	for _, a := range os.Args[2:] {
		x, err := strconv.ParseUint(a, 16, 64)
		if err != nil {
			fmt.Fprintf(os.Stderr, "jitlines: address %q: %v\n", a, err)
			os.Exit(2)
		}
		i := sort.Search(len(lines), func(i int) bool { return lines[i].addr > x }) - 1
		for j := max(i-2, 0); j <= i; j++ {
			fmt.Printf("%x  +%-4d %s\n", x, x-lines[j].addr, lines[j].text)
		}
		fmt.Println("--")
	}
}

// jitLines reads program id's line info and the JIT address of each.
func jitLines(id string) ([]line, error) {
	n, err := strconv.ParseUint(id, 10, 32)
	if err != nil {
		return nil, fmt.Errorf("program ID %q: %w", id, err)
	}
	p, err := ebpf.NewProgramFromID(ebpf.ProgramID(n))
	if err != nil {
		return nil, fmt.Errorf("program %d: %w", n, err)
	}
	defer p.Close()
	info, err := p.Info()
	if err != nil {
		return nil, fmt.Errorf("program %d: %w", n, err)
	}
	addrs, ok := info.JitedLineInfos()
	if !ok {
		return nil, fmt.Errorf("program %d: no JIT line info (not JITed, or no BTF)", n)
	}
	infos, err := info.LineInfos()
	if err != nil {
		return nil, fmt.Errorf("program %d: line info: %w", n, err)
	}
	var out []line
	for i, li := range infos {
		if i < len(addrs) {
			out = append(out, line{addrs[i], fmt.Sprintf("%s:%d %s", li.Line.FileName(), li.Line.LineNumber(), li.Line.Line())})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].addr < out[j].addr })
	return out, nil
}
