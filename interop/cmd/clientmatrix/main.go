// Command clientmatrix renders the interop suite's client results as
// docs/clients.md's table, and checks the document against them (the
// default: exit 1 and the rows that differ when they disagree) or, with
// -write, writes the table into it.
//
//	cd interop
//	QUERYD_CLIENT_MATRIX=/tmp/results go test ./...
//	go run ./cmd/clientmatrix /tmp/results              # check ../docs/clients.md
//	go run ./cmd/clientmatrix -write /tmp/results       # or write it
//
// interop/clientmatrix.sh does both steps.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"

	"github.com/queryd/queryd/interop/clientmatrix"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("clientmatrix", flag.ContinueOnError)
	fs.SetOutput(stderr)
	write := fs.Bool("write", false, "write the table into the document instead of checking it")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fmt.Fprintln(stderr, "usage: clientmatrix [-write] RESULTS [DOC (default ../docs/clients.md)]")
		return 2
	}
	docPath := "../docs/clients.md"
	if fs.NArg() == 2 {
		docPath = fs.Arg(1)
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		fmt.Fprintln(stderr, "clientmatrix:", err)
		return 1
	}
	results, err := clientmatrix.Read(f)
	f.Close()
	if err != nil {
		fmt.Fprintln(stderr, "clientmatrix:", err)
		return 1
	}
	doc, err := os.ReadFile(docPath)
	if err != nil {
		fmt.Fprintln(stderr, "clientmatrix:", err)
		return 1
	}
	table := clientmatrix.Table(results)
	updated, old, err := clientmatrix.Splice(string(doc), table)
	if err != nil {
		fmt.Fprintf(stderr, "clientmatrix: %s: %v\n", docPath, err)
		return 1
	}
	if *write {
		if err := os.WriteFile(docPath, []byte(updated), 0o644); err != nil {
			fmt.Fprintln(stderr, "clientmatrix:", err)
			return 1
		}
		fmt.Fprintf(stdout, "%s: the table of %d results written\n", docPath, len(results))
		return 0
	}
	if old != table {
		fmt.Fprintf(stderr, "%s disagrees with the interop suite's results (%d); run interop/clientmatrix.sh (as root, for the XDP and divert cells) and commit it:\n", docPath, len(results))
		for _, l := range clientmatrix.Diff(old, table) {
			fmt.Fprintln(stderr, "  "+l)
		}
		return 1
	}
	fmt.Fprintf(stdout, "%s agrees with the interop suite's %d results\n", docPath, len(results))
	return 0
}
