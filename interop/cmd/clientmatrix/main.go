// Command clientmatrix renders the interop suite's client results as
// docs/clients.md's table, and checks the document against them (the
// default: exit 1 and the cells that differ when they disagree) or, with
// -write, writes the table into it. A cell whose checks were all skipped on
// this machine (a tool missing) does not contradict the document's "yes":
// it is listed as not verified, and is a disagreement only with -strict.
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
	"strings"

	"github.com/queryd/queryd/interop/clientmatrix"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("clientmatrix", flag.ContinueOnError)
	fs.SetOutput(stderr)
	write := fs.Bool("write", false, "write the table into the document instead of checking it")
	strict := fs.Bool("strict", false, "a cell whose checks were all skipped here contradicts the document's \"yes\"")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() < 1 || fs.NArg() > 2 {
		fmt.Fprintln(stderr, "usage: clientmatrix [-write|-strict] RESULTS [DOC (default ../docs/clients.md)]")
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
		return writeDoc(docPath, updated, results, stdout, stderr)
	}
	return check(docPath, old, results, *strict, stdout, stderr)
}

// writeDoc writes the document with the results' table, warning of the
// cells only skipped: those read "skipped" where a run with every client
// would say "yes" or "no".
func writeDoc(docPath, updated string, results []clientmatrix.Result, stdout, stderr io.Writer) int {
	if err := os.WriteFile(docPath, []byte(updated), 0o644); err != nil {
		fmt.Fprintln(stderr, "clientmatrix:", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: the table of %d results written\n", docPath, len(results))
	for client, paths := range clientmatrix.Cells(results) {
		for path, c := range paths {
			if c.Text() == "skipped" {
				fmt.Fprintf(stderr, "warning: %s on %s skipped (%s): run it where every client is installed, as root\n", client, path, strings.Join(c.Skip, ", "))
			}
		}
	}
	return 0
}

// check compares the document's table with the results (clientmatrix.Compare).
func check(docPath, old string, results []clientmatrix.Result, strict bool, stdout, stderr io.Writer) int {
	doc, err := clientmatrix.Parse(old)
	if err != nil {
		fmt.Fprintf(stderr, "clientmatrix: %s: %v\n", docPath, err)
		return 1
	}
	disagree, unverified := clientmatrix.Compare(doc, results, strict)
	for _, m := range unverified {
		fmt.Fprintf(stdout, "not verified here (skipped): %s\n", m)
	}
	if len(disagree) > 0 {
		fmt.Fprintf(stderr, "%s disagrees with the interop suite's %d results; fix the failing checks, or regenerate it with interop/clientmatrix.sh (as root, every client installed) and commit it:\n", docPath, len(results))
		for _, m := range disagree {
			fmt.Fprintln(stderr, "  "+m.String())
		}
		return 1
	}
	fmt.Fprintf(stdout, "%s agrees with the interop suite's %d results (%d cells not verified here)\n", docPath, len(results), len(unverified))
	return 0
}
