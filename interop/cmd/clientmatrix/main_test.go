package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/queryd/queryd/interop/clientmatrix"
)

// TestWriteThenCheck: -write puts the results' table in the document, the
// check then agrees; a document edited by hand (a cell changed) is refused
// with the cell named, and so is a check gone from the results.
func TestWriteThenCheck(t *testing.T) {
	dir := t.TempDir()
	results, doc := filepath.Join(dir, "results"), filepath.Join(dir, "clients.md")
	os.WriteFile(doc, []byte("# x\n"+clientmatrix.Begin+clientmatrix.End), 0o644)
	for _, r := range []clientmatrix.Result{
		{Client: "qstat", Path: clientmatrix.Socket, Outcome: clientmatrix.Pass, Test: "TestA2SClients/qstat"},
		{Client: "sqpprobe", Path: clientmatrix.Socket, Outcome: clientmatrix.Pass, Test: "TestSQPClients/x"},
	} {
		if err := clientmatrix.Append(results, r); err != nil {
			t.Fatal(err)
		}
	}
	var out, errs bytes.Buffer
	if rc := run([]string{"-write", results, doc}, &out, &errs); rc != 0 {
		t.Fatalf("-write: %d %s", rc, errs.String())
	}
	if rc := run([]string{results, doc}, &out, &errs); rc != 0 {
		t.Fatalf("check after -write: %d %s", rc, errs.String())
	}
	b, _ := os.ReadFile(doc)
	os.WriteFile(doc, []byte(strings.Replace(string(b), "| qstat `-a2s` | A2S | yes |", "| qstat `-a2s` | A2S | not run |", 1)), 0o644)
	errs.Reset()
	if rc := run([]string{results, doc}, &out, &errs); rc != 1 || !strings.Contains(errs.String(), "qstat `-a2s` on socket") {
		t.Errorf("a changed cell: exit %d, %s", rc, errs.String())
	}
	os.WriteFile(doc, b, 0o644)
	os.WriteFile(results, []byte(`{"client":"qstat","path":"socket","outcome":"pass","test":"TestA2SClients/qstat"}`+"\n"), 0o644)
	errs.Reset()
	if rc := run([]string{results, doc}, &out, &errs); rc != 1 || !strings.Contains(errs.String(), "sqpprobe") {
		t.Errorf("sqpprobe's check gone: exit %d, %s", rc, errs.String())
	}
	os.WriteFile(results, []byte(string(must(os.ReadFile(results)))+`{"client":"sqpprobe","path":"socket","outcome":"skip","test":"TestSQPClients"}`+"\n"), 0o644)
	out.Reset()
	if rc := run([]string{results, doc}, &out, &errs); rc != 0 || !strings.Contains(out.String(), "not verified here") {
		t.Errorf("sqpprobe skipped: exit %d, %s", rc, out.String())
	}
	if rc := run([]string{"-strict", results, doc}, &out, &errs); rc != 1 {
		t.Errorf("sqpprobe skipped, -strict: exit %d", rc)
	}
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
