// Package clientmatrix is the compatibility matrix of docs/clients.md:
// which real client reads queryd, in which protocol, on which path
// (the socket path, the XDP fast path, host mode, divert, a front with
// [upstream]), written from the interop suite's own results.
//
// Each client check of the suite records how it ended (Append) to the file
// $QUERYD_CLIENT_MATRIX names; cmd/clientmatrix reads those results
// (Read), renders the table (Table) and checks it against docs/clients.md
// (Parse, Compare), or writes it there (Splice). A cell no check recorded
// reads "not run": never "yes" for what did not run. A cell whose checks
// were all skipped (a tool missing on this machine) does not contradict a
// "yes": the document records a run where every client ran (Compare).
package clientmatrix

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
)

// Env names the results file the interop suite's client checks append to.
const Env = "QUERYD_CLIENT_MATRIX"

// A Path is a way queryd answers, one column of the matrix.
type Path string

// The paths, in the matrix's order.
const (
	Socket Path = "socket" // the UDP sockets, one server
	XDP    Path = "xdp"    // the XDP fast path attached
	Host   Path = "host"   // host mode: several servers in one queryd
	Divert Path = "divert" // [listen] divert: a stock server's queries taken in the kernel
	Front  Path = "front"  // [upstream]: queryd in front of a stock server, from its answers
)

// Paths are the columns, with their headings.
var Paths = []struct {
	Path  Path
	Title string
}{
	{Socket, "socket"},
	{XDP, "XDP"},
	{Host, "host mode"},
	{Divert, "divert"},
	{Front, "front (`[upstream]`)"},
}

// A Client is one row: a real client, as the suite's checks name it.
type Client struct {
	Key      string // the name of the suite's subtest that runs it
	Name     string // as people know it, with what it asks
	Protocol string
}

// Clients are the rows, in the matrix's order.
var Clients = []Client{
	{"qstat", "qstat `-a2s`", "A2S"},
	{"gamedig_valve", "gamedig `valve`", "A2S"},
	{"go_rumblefrog_go-a2s", "rumblefrog/go-a2s (Go)", "A2S"},
	{"go_woozymasta_a2s", "woozymasta/a2s (Go)", "A2S"},
	{"queryd_go_a2s", "queryd's Go client (`a2s.Dial`)", "A2S"},
	{"qstat_gs4", "qstat `-gs4`", "GameSpy4"},
	{"gamedig_gamespy3", "gamedig `gamespy3`", "GameSpy4"},
	{"npm_minecraft-server-util_queryBasic", "minecraft-server-util `queryBasic` (npm)", "GameSpy4"},
	{"npm_minecraft-server-util_queryFull", "minecraft-server-util `queryFull` (npm)", "GameSpy4"},
	{"go_minequery_basic_strict", "minequery basic stat (Go)", "GameSpy4"},
	{"go_minequery_full_strict", "minequery full stat (Go)", "GameSpy4"},
	{"go_mcutils_basic", "mcutils basic stat (Go)", "GameSpy4"},
	{"go_mcutils_full", "mcutils full stat (Go)", "GameSpy4"},
	{"qstat_q3s", "qstat `-q3s`", "Quake 3"},
	{"qstat_woets", "qstat `-woets`", "Quake 3"},
	{"gamedig_quake3", "gamedig `quake3`", "Quake 3"},
	{"gamedig_wet", "gamedig `wet`", "Quake 3"},
	{"npm_minecraft-server-util_statusBedrock", "minecraft-server-util `statusBedrock` (npm)", "Bedrock"},
	{"gamedig_mbe", "gamedig `mbe`", "Bedrock"},
	{"sqpprobe", "sqpprobe (Unity's go-svrquery)", "SQP"},
	{"queryd_query_sqp", "`queryd query -proto sqp`", "SQP"},
	{"sagl_http", "SAGL JSON over HTTP (`GET /`)", "SAGL"},
}

// Lookup returns the client the suite's checks call key, or nil.
func Lookup(key string) *Client {
	for i := range Clients {
		if Clients[i].Key == key {
			return &Clients[i]
		}
	}
	return nil
}

// KnownPath reports whether p is one of Paths.
func KnownPath(p Path) bool {
	for _, c := range Paths {
		if c.Path == p {
			return true
		}
	}
	return false
}

// Outcomes of a check, and what a cell shows.
const (
	Pass = "pass"
	Fail = "fail"
	Skip = "skip"
)

// A Result is how one check of a client on a path ended.
type Result struct {
	Client  string `json:"client"`
	Path    Path   `json:"path"`
	Outcome string `json:"outcome"`
	Test    string `json:"test"`
}

var appendMu sync.Mutex

// Append adds r to the results file, one JSON object a line.
func Append(file string, r Result) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	appendMu.Lock()
	defer appendMu.Unlock()
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("client matrix: %w", err)
	}
	if _, err := f.Write(append(b, '\n')); err != nil {
		f.Close()
		return fmt.Errorf("client matrix: %w", err)
	}
	return f.Close()
}

// Read reads the results Append wrote, refusing a client, path or outcome
// the matrix does not know.
func Read(r io.Reader) ([]Result, error) {
	var out []Result
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		if strings.TrimSpace(sc.Text()) == "" {
			continue
		}
		var res Result
		if err := json.Unmarshal(sc.Bytes(), &res); err != nil {
			return nil, fmt.Errorf("results line %d: %w", n, err)
		}
		switch {
		case Lookup(res.Client) == nil:
			return nil, fmt.Errorf("results line %d: unknown client %q", n, res.Client)
		case !KnownPath(res.Path):
			return nil, fmt.Errorf("results line %d: unknown path %q", n, res.Path)
		case res.Outcome != Pass && res.Outcome != Fail && res.Outcome != Skip:
			return nil, fmt.Errorf("results line %d: unknown outcome %q", n, res.Outcome)
		}
		out = append(out, res)
	}
	return out, sc.Err()
}

// Cell is one client on one path: what the checks that ran it say.
type Cell struct {
	Pass, Fail, Skip []string // the tests, by how they ended
}

// Text is what the cell shows: "no" when any check failed, "yes" when
// every check that ran passed, "skipped" when every one was skipped, and
// "not run" when none ran.
func (c Cell) Text() string {
	switch {
	case len(c.Fail) > 0:
		return "**no**"
	case len(c.Pass) > 0:
		return "yes"
	case len(c.Skip) > 0:
		return "skipped"
	}
	return "not run"
}

// Cells gathers results by client and path.
func Cells(results []Result) map[string]map[Path]Cell {
	out := map[string]map[Path]Cell{}
	for _, r := range results {
		if out[r.Client] == nil {
			out[r.Client] = map[Path]Cell{}
		}
		c := out[r.Client][r.Path]
		switch r.Outcome {
		case Pass:
			c.Pass = append(c.Pass, r.Test)
		case Fail:
			c.Fail = append(c.Fail, r.Test)
		default:
			c.Skip = append(c.Skip, r.Test)
		}
		out[r.Client][r.Path] = c
	}
	return out
}

// Table renders the matrix as a Markdown table: a row per client, a
// column per path.
func Table(results []Result) string {
	cells := Cells(results)
	var b strings.Builder
	b.WriteString("| client | protocol |")
	for _, p := range Paths {
		b.WriteString(" " + p.Title + " |")
	}
	b.WriteString("\n|---|---|" + strings.Repeat("---|", len(Paths)) + "\n")
	for _, c := range Clients {
		fmt.Fprintf(&b, "| %s | %s |", c.Name, c.Protocol)
		for _, p := range Paths {
			b.WriteString(" " + cells[c.Key][p.Path].Text() + " |")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// The markers around the table in docs/clients.md.
const (
	Begin = "<!-- clientmatrix: begin (interop/clientmatrix.sh writes this table) -->\n"
	End   = "<!-- clientmatrix: end -->\n"
)

// ErrNoMarkers is Splice's error for a document without the markers.
var ErrNoMarkers = errors.New("no clientmatrix markers")

// Splice returns doc with the table between its markers replaced by table,
// and the table it had.
func Splice(doc, table string) (string, string, error) {
	i := strings.Index(doc, Begin)
	j := strings.Index(doc, End)
	if i < 0 || j < i {
		return "", "", ErrNoMarkers
	}
	old := doc[i+len(Begin) : j]
	return doc[:i+len(Begin)] + table + doc[j:], old, nil
}

// Parse reads a table Table rendered: each row's cell texts by client key
// and path. A row of a client the matrix does not know, a client without
// its row, or a row of the wrong width is an error.
func Parse(table string) (map[string]map[Path]string, error) {
	lines := strings.Split(strings.TrimSuffix(table, "\n"), "\n")
	if len(lines) != len(Clients)+2 {
		return nil, fmt.Errorf("a table of %d lines, want a heading, a rule and %d rows", len(lines), len(Clients))
	}
	out := map[string]map[Path]string{}
	for i, c := range Clients {
		cells := strings.Split(strings.TrimSuffix(strings.TrimPrefix(lines[i+2], "| "), " |"), " | ")
		if len(cells) != 2+len(Paths) || cells[0] != c.Name || cells[1] != c.Protocol {
			return nil, fmt.Errorf("row %d is %q, want %s (%s) and %d cells", i+1, lines[i+2], c.Name, c.Protocol, len(Paths))
		}
		out[c.Key] = map[Path]string{}
		for j, p := range Paths {
			out[c.Key][p.Path] = cells[2+j]
		}
	}
	return out, nil
}

// A Mismatch is a cell where the document and the results disagree, or
// (Unverified) one the results cannot confirm.
type Mismatch struct {
	Client, Path    string
	Document, Check string // the document's text, the results' text
	Tests           []string
}

func (m Mismatch) String() string {
	s := fmt.Sprintf("%s on %s: the document says %q, the suite %q", m.Client, m.Path, m.Document, m.Check)
	switch t := m.Tests; {
	case len(t) > 3:
		s += fmt.Sprintf(" (%s and %d more)", strings.Join(t[:3], ", "), len(t)-3)
	case len(t) > 0:
		s += " (" + strings.Join(t, ", ") + ")"
	}
	return s
}

// Compare checks the document's cells (Parse) against the results. A cell
// disagrees when one of its checks failed, when it passed and the document
// does not say "yes", when no check recorded it and the document does not
// say "not run" (a check gone from the suite), or when only skipped checks
// recorded it and the document says neither "yes" nor "skipped". A cell
// whose checks were all skipped (a tool missing on this machine, no root)
// and that the document says "yes" is not a disagreement: it is returned
// in unverified, and a disagreement only when strict.
func Compare(doc map[string]map[Path]string, results []Result, strict bool) (disagree, unverified []Mismatch) {
	cells := Cells(results)
	for _, c := range Clients {
		for _, p := range Paths {
			cell := cells[c.Key][p.Path]
			d, got := doc[c.Key][p.Path], cell.Text()
			m := Mismatch{Client: c.Name, Path: p.Title, Document: d, Check: got}
			switch {
			case len(cell.Fail) > 0:
				m.Tests = cell.Fail
				disagree = append(disagree, m)
			case len(cell.Pass) > 0 || len(cell.Skip) == 0:
				if d != got {
					m.Tests = cell.Pass
					disagree = append(disagree, m)
				}
			case d == "yes" && !strict:
				m.Tests = cell.Skip
				unverified = append(unverified, m)
			case d != got:
				m.Tests = cell.Skip
				disagree = append(disagree, m)
			}
		}
	}
	return disagree, unverified
}
