package config

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"syscall"
)

// MaxServers bounds the servers one queryd runs (the XDP program's tables
// are sized to it): the main file's server counts, and no more included
// files than that are read.
const MaxServers = 256

// MaxIncludes bounds [servers] include.
const MaxIncludes = 64

// MaxServerName bounds a server's name (its file name without ".toml").
const MaxServerName = 64

// MainServer is the name of the server the main file holds.
const MainServer = "main"

// Servers is [servers] (main file only): the server files this queryd runs.
type Servers struct {
	// Include are globs relative to the main file's folder (or absolute),
	// with wildcards in the file name only; each pattern's matches are
	// taken sorted, the patterns in order; none matching is fine. As in a
	// shell, a file whose name starts with '.' matches only a pattern whose
	// file name does.
	Include []string `toml:"include"`
}

// hostWide are the tables only the main file may have: the host's.
var hostWide = []string{"admin", "log", "xdp", "servers", "host"}

// HostWide reports whether key (one of Config.RestartKeys) is one of the
// host's tables: a change to it needs the process restarted, where a host
// restarts a server alone for its own ([listen], [feed], [relay],
// [upstream], the modules' restart keys).
func HostWide(key string) bool { return slices.Contains(hostWide, key) }

// Host is a main config file and the servers it runs.
type Host struct {
	Path    string       // the main file; "" for the embedded default or ParseHost
	Main    *Config      // the main file; its [admin] [log] [xdp] [servers] [host] are the host's
	Servers []HostServer // "main" first when the main file is a server, then the included files in order
	// Failed are the included files refused (unreadable, a parse error, a
	// host-wide table, a bad or duplicate name, an address or socket overlap
	// with an earlier server, past MaxServers): not in Servers.
	Failed []FileError
}

// HostServer is one server of a host.
type HostServer struct {
	Name string // "main", or the file name without ".toml" (letters, digits, '-', '_')
	Path string // its file ("" for the embedded default)
	// Config is its tables; Admin, Log, XDP, Servers and Host are the main
	// file's (copied), so code that reads cfg.Admin / cfg.XDP keeps working.
	Config *Config
}

// Server returns the server named name, or nil.
func (h *Host) Server(name string) *HostServer {
	for i := range h.Servers {
		if h.Servers[i].Name == name {
			return &h.Servers[i]
		}
	}
	return nil
}

// FileError is one file's problem; each line of Error() starts with the
// file.
type FileError struct {
	Name string // the server's name ("main" for the main file; "" when the file name is no name)
	Path string // the file
	Err  error  // an Errors (every problem with its key), or why the file could not be read or decoded
}

func (e *FileError) Error() string {
	file := fileLabel(e.Path)
	var errs Errors
	if errors.As(e.Err, &errs) {
		lines := make([]string, len(errs))
		for i, x := range errs {
			lines[i] = file + ": " + x.Error()
		}
		return strings.Join(lines, "\n")
	}
	return file + ": " + e.Err.Error()
}

// Unwrap returns the file's error.
func (e *FileError) Unwrap() error { return e.Err }

// HostErrors is every file's errors (CheckHost), the main file's first.
type HostErrors []*FileError

func (es HostErrors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "\n")
}

// fileLabel names a file in messages ("" is the embedded default).
func fileLabel(path string) string {
	if path == "" {
		return "(main config)"
	}
	return path
}

// LoadHost reads the main config file at path and every server file its
// [servers] include. Its error is the main file's (unreadable, a parse
// error, a bad include glob); an included file that is refused goes to
// Host.Failed and the others run.
func LoadHost(path string, mods ...Module) (*Host, error) {
	b, err := readLimited(path, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	h, err := parseHost(b, path, filepath.Dir(path), mods)
	if err != nil {
		return nil, fmt.Errorf("config %s:\n%w", path, err)
	}
	return h, nil
}

// ReloadHost is LoadHost for a host whose servers running run (SIGHUP):
// what runs keeps what it holds. A running server's file is read before
// any other, so its name stays its file's: another file with that name is
// refused (both named), wherever it sorts. A new or changed file whose
// address or feed socket overlaps one a running server holds is refused
// (a running server's own changed file may keep its own), not the running
// one. A running server whose file is gone holds nothing (it stops).
func ReloadHost(path string, running []HostServer, mods ...Module) (*Host, error) {
	b, err := readLimited(path, MaxFileSize)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	c, err := Parse(b, mods...)
	if err != nil {
		return nil, fmt.Errorf("config %s:\n%w", path, err)
	}
	hb := newHostBuilder(c, path, filepath.Dir(path), mods, false, true, running)
	if err := hb.includeAll(nil); err != nil {
		return nil, fmt.Errorf("config %s:\n%w", path, err)
	}
	return hb.h, nil
}

// ParseHost parses a main config from data, as Parse does, and loads the
// server files its [servers] include (globs relative to dir) as LoadHost
// does.
func ParseHost(data []byte, dir string, mods ...Module) (*Host, error) {
	return parseHost(data, "", dir, mods)
}

// parseHost is ParseHost for the main file at path.
func parseHost(data []byte, path, dir string, mods []Module) (*Host, error) {
	c, err := Parse(data, mods...)
	if err != nil {
		return nil, err
	}
	b := newHostBuilder(c, path, dir, mods, false, true, nil)
	if err := b.includeAll(nil); err != nil {
		return nil, err
	}
	return b.h, nil
}

// CheckHost reads the main file and every included file as LoadHost does
// and returns, for `queryd check`, every error (a HostErrors: the main
// file's, then each refused file's) and every warning, each prefixed with
// its file. The Host is nil when the main file could not be read or
// decoded at all; with errors in the main file its Main is the decoded
// part and it is not among the Servers.
func CheckHost(path string, mods ...Module) (*Host, []string, error) {
	data, err := readLimited(path, MaxFileSize)
	if err != nil {
		return nil, nil, fmt.Errorf("config: %w", err)
	}
	c, err := parse(data, mods...)
	if c == nil {
		return nil, nil, fmt.Errorf("config %s:\n%w", path, err)
	}
	var errs Errors
	errors.As(err, &errs)
	b := newHostBuilder(c, path, filepath.Dir(path), mods, true, err == nil, nil)
	b.warn(path, c, errs)
	var all HostErrors
	if err != nil {
		all = append(all, &FileError{Name: MainServer, Path: path, Err: err})
	}
	if gerr := b.includeAll(errs); gerr != nil {
		all = append(all, &FileError{Name: MainServer, Path: path, Err: gerr})
	}
	for i := range b.h.Failed {
		all = append(all, &b.h.Failed[i])
	}
	if len(all) > 0 {
		return b.h, b.warnings, all
	}
	return b.h, b.warnings, nil
}

// hostBuilder collects a host's servers file by file.
type hostBuilder struct {
	h        *Host
	dir      string
	mods     []Module
	check    bool              // CheckHost: collect warnings
	names    map[string]string // server name → its file
	seen     map[string]bool   // files taken (cleaned paths)
	claims   []claim           // addresses and sockets of the servers so far
	running  []HostServer      // the servers that run (ReloadHost): their files first, their claims kept
	read     int               // server files read (at most MaxServers, with the main one)
	past     []string          // files matched past MaxServers, unread
	warnings []string
}

// newHostBuilder starts a host with its main file (a server when it holds
// per-server tables, or has no [servers] table, and is valid); running are
// the servers that run (ReloadHost), nil at a start.
func newHostBuilder(main *Config, path, dir string, mods []Module, check, valid bool, running []HostServer) *hostBuilder {
	b := &hostBuilder{h: &Host{Path: path, Main: main}, dir: dir, mods: mods, check: check,
		names: map[string]string{MainServer: path}, seen: map[string]bool{}, running: running}
	if path != "" {
		b.seen[filepath.Clean(path)] = true
	}
	if main.Admin.Listen.IsValid() {
		b.claims = append(b.claims, claim{Bind: Bind{Key: "admin.listen", Network: "tcp", Addr: main.Admin.Listen}, path: path})
	}
	if main.isServer() && valid {
		b.read++
		if errs := b.overlap(main, path, MainServer); len(errs) > 0 {
			b.fail(MainServer, path, errs)
			return b
		}
		b.h.Servers = append(b.h.Servers, HostServer{Name: MainServer, Path: path, Config: main})
		b.claim(main, path, MainServer)
	}
	return b
}

// isServer reports whether a main file is a server: it has a per-server
// table, or no [servers] table (every single-server config).
func (c *Config) isServer() bool {
	if !slices.Contains(c.present, "servers") {
		return true
	}
	return slices.ContainsFunc(c.present, func(t string) bool { return !slices.Contains(hostWide, t) })
}

// includeAll adds the files every include pattern matches (but those whose
// name starts with '.', unless the pattern's does); known are the
// main file's errors (CheckHost: a pattern in error is skipped). Its error
// is a bad pattern's.
func (b *hostBuilder) includeAll(known Errors) error {
	var bad Errors
	var files []string
	for i, pattern := range b.h.Main.Servers.Include {
		key := fmt.Sprintf("servers.include[%d]", i)
		if known.Covers(key) {
			continue
		}
		full := pattern
		if !filepath.IsAbs(full) {
			full = filepath.Join(escapeGlob(b.dir), full)
		}
		matches, err := filepath.Glob(full)
		if err != nil {
			bad.Add(key, "%v: %q", err, pattern)
			continue
		}
		sort.Strings(matches)
		hidden := strings.HasPrefix(filepath.Base(pattern), ".")
		for _, m := range matches {
			if strings.HasPrefix(filepath.Base(m), ".") && !hidden {
				continue // as a shell does: an editor's .#x.toml, Kubernetes' ..data
			}
			files = append(files, m)
		}
	}
	for _, m := range b.runningFirst(files) {
		b.add(m)
	}
	b.inOrder(files)
	b.failPast()
	if len(bad) > 0 {
		return bad
	}
	return nil
}

// runningFirst orders files as they are read: the running servers' own
// files first (each keeps its name and what it holds), then the others,
// each group in include order. It also claims what the running servers
// whose files are still there hold, for the others' overlap checks.
func (b *hostBuilder) runningFirst(files []string) []string {
	if len(b.running) == 0 {
		return files
	}
	var own, others []string
	for _, f := range files {
		if rs := b.runningAt(f); rs != nil {
			own = append(own, f)
			if rs.Config != nil {
				b.claim(rs.Config, rs.Path, rs.Name)
			}
			continue
		}
		others = append(others, f)
	}
	if main := b.runningAt(b.h.Path); main != nil && main.Name == MainServer && main.Config != nil {
		b.claim(main.Config, main.Path, MainServer)
	}
	return append(own, others...)
}

// inOrder puts the servers back in include order (the main file's first):
// running servers' files are read first, but the host lists its servers
// as the files do.
func (b *hostBuilder) inOrder(files []string) {
	at := make(map[string]int, len(files))
	for i, f := range files {
		at[filepath.Clean(f)] = i + 1
	}
	slices.SortStableFunc(b.h.Servers, func(x, y HostServer) int {
		return at[filepath.Clean(x.Path)] - at[filepath.Clean(y.Path)]
	})
	slices.SortStableFunc(b.h.Failed, func(x, y FileError) int {
		return at[filepath.Clean(x.Path)] - at[filepath.Clean(y.Path)]
	})
}

// runningAt returns the running server file path started (nil: none).
func (b *hostBuilder) runningAt(path string) *HostServer {
	if path == "" {
		return nil
	}
	clean := filepath.Clean(path)
	for i := range b.running {
		rs := &b.running[i]
		if rs.Path != "" && filepath.Clean(rs.Path) == clean {
			return rs
		}
	}
	return nil
}

// failPast records the files past MaxServers, unread: one FileError, the
// first file's, that counts the others (a folder of thousands of files
// makes one line of log, not thousands).
func (b *hostBuilder) failPast() {
	if len(b.past) == 0 {
		return
	}
	name, _ := serverName(b.past[0])
	err := fmt.Errorf("past the %d servers one queryd runs (config.MaxServers): not read", MaxServers)
	if n := len(b.past) - 1; n > 0 {
		err = fmt.Errorf("past the %d servers one queryd runs (config.MaxServers): not read, nor the %d file(s) after it", MaxServers, n)
	}
	b.fail(name, b.past[0], err)
}

// add loads one server file: into Servers, or into Failed with why.
func (b *hostBuilder) add(path string) {
	clean := filepath.Clean(path)
	if b.seen[clean] {
		return // matched by two patterns, or the main file itself
	}
	b.seen[clean] = true
	if b.read >= MaxServers {
		b.past = append(b.past, path)
		return
	}
	name, err := serverName(path)
	if err != nil {
		b.fail("", path, err)
		return
	}
	if prev, taken := b.names[name]; taken {
		b.fail(name, path, fmt.Errorf("the server name %q (the file name without .toml) is taken by %s: names must be unique", name, fileLabel(prev)))
		return
	}
	b.names[name] = path
	b.read++
	c, err := b.loadServer(name, path)
	if err != nil {
		b.fail(name, path, err)
		return
	}
	b.h.Servers = append(b.h.Servers, HostServer{Name: name, Path: path, Config: c})
	b.claim(c, path, name)
}

// loadServer reads and parses one server file and lays the main file's
// host-wide tables over it.
func (b *hostBuilder) loadServer(name, path string) (*Config, error) {
	if fi, err := os.Stat(path); err != nil {
		return nil, err
	} else if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file (%s): a server file is a TOML file", fi.Mode().Type())
	}
	// Non-blocking: a file that blocks its reader (/proc/kmsg) is refused,
	// not waited for.
	data, err := readLimitedFlags(path, MaxFileSize, os.O_RDONLY|syscall.O_NONBLOCK)
	if err != nil {
		return nil, err
	}
	c, err := parse(data, b.mods...)
	if c == nil {
		return nil, err
	}
	var errs Errors
	errors.As(err, &errs)
	c.serverName = name
	errs = c.divertHostErrors(errs, b.h.Main, b.h.Path) // [xdp] is the main file's
	errs = append(errs, c.hostWideErrors(b.h.Path)...)
	if c.Feed.Socket == "" && len(c.FeedSocket()) > 107 {
		errs.Add("feed.socket", "the default path %s is too long for a Unix socket (at most 107 bytes): set one", c.FeedSocket())
	}
	if b.check {
		b.warn(path, c, errs)
	}
	for _, e := range b.overlap(c, path, name) {
		if !errs.Covers(e.Key) { // a value in error stood in by its default
			errs = append(errs, e)
		}
	}
	if len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool { return errs[i].Key < errs[j].Key })
		return nil, errs
	}
	m := b.h.Main
	c.Admin, c.Log, c.XDP, c.Servers, c.Host = m.Admin, m.Log, m.XDP, m.Servers, m.Host
	return c, nil
}

// hostWideErrors reports the host-wide tables a server file has.
func (c *Config) hostWideErrors(main string) Errors {
	var errs Errors
	for _, t := range hostWide {
		if slices.Contains(c.present, t) {
			errs.Add(t, "[%s] is host-wide: allowed only in the main file %s, not in a server file", t, fileLabel(main))
		}
	}
	return errs
}

// warn records a file's warnings, prefixed with the file, but those about
// a key in error.
func (b *hostBuilder) warn(path string, c *Config, errs Errors) {
	for _, w := range c.Warnings() {
		key, _, _ := strings.Cut(w, ": ")
		if !errs.Covers(key) {
			b.warnings = append(b.warnings, fileLabel(path)+": "+w)
		}
	}
}

// fail records a refused file.
func (b *hostBuilder) fail(name, path string, err error) {
	b.h.Failed = append(b.h.Failed, FileError{Name: name, Path: path, Err: err})
}

// globMeta returns the characters of a glob that are no literal: '\\'
// quotes one on Unix; on Windows it is the separator.
func globMeta() string {
	if runtime.GOOS == "windows" {
		return `*?[`
	}
	return `*?[\`
}

// escapeGlob quotes the glob characters of a folder's name, so that the
// main file's folder is taken as it is (on Windows there is nothing to
// quote with: '[' there stays a glob character).
func escapeGlob(dir string) string {
	if runtime.GOOS == "windows" {
		return dir
	}
	var sb strings.Builder
	for _, r := range dir {
		if strings.ContainsRune(globMeta(), r) {
			sb.WriteByte('\\')
		}
		sb.WriteRune(r)
	}
	return sb.String()
}

// serverName is a server file's name without ".toml": letters, digits,
// '-' and '_', at most MaxServerName, not "main" nor "feed" (whose default
// socket would be the main server's).
func serverName(path string) (string, error) {
	name := strings.TrimSuffix(filepath.Base(path), ".toml")
	switch {
	case name == MainServer:
		return "", fmt.Errorf("the server name %q is the main file's: name the file otherwise", name)
	case name == "feed":
		return "", fmt.Errorf("the server name %q would take the main server's default socket feed.sock: name the file otherwise", name)
	case name == "" || len(name) > MaxServerName || strings.ContainsFunc(name, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_')
	}):
		return "", fmt.Errorf("the server name %q (the file name without .toml) must be 1 to %d letters, digits, '-' or '_'", name, MaxServerName)
	}
	return name, nil
}
