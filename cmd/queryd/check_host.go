package main

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/queryd/queryd/config"
)

// isHost reports whether a checked main file is a host of server files
// (it includes some, or is no server itself): queryd check then checks
// every file and prefixes each line with its file. Any other config is
// checked as before host mode.
func isHost(h *config.Host, err error) bool {
	return len(h.Main.Servers.Include) > 0 || (err == nil && h.Server(config.MainServer) == nil)
}

// hostFindings are queryd check's errors and warnings of a host's files,
// each line starting with its file.
type hostFindings struct {
	errs     map[string][]string // file → its error lines
	warnings []string
	notes    []string
}

// addErrs records a file's errors, each line prefixed with the file.
func (f *hostFindings) addErrs(path string, errs config.Errors) {
	for _, e := range errs {
		f.errs[path] = append(f.errs[path], path+": "+e.Error())
	}
}

// checkHost is queryd check of a host (config.CheckHost): every file's
// errors and warnings, then, for each server that loaded, what needs more
// than its file (checkServerFurther), and the host-wide local checks once.
func checkHost(h *config.Host, warnings []string, err error, local bool, stdout, stderr io.Writer) int {
	var herrs config.HostErrors
	if err != nil && !errors.As(err, &herrs) {
		fmt.Fprintln(stderr, err)
		return 1
	}
	f := &hostFindings{errs: map[string][]string{}, warnings: warnings}
	var mainErrs config.Errors
	for _, fe := range herrs {
		f.errs[fe.Path] = append(f.errs[fe.Path], strings.Split(fe.Error(), "\n")...)
		if fe.Path == h.Path {
			var es config.Errors
			if errors.As(fe.Err, &es) {
				mainErrs = append(mainErrs, es...)
			}
		}
	}
	running := false
	for _, s := range h.Servers {
		run := f.checkServer(s, local)
		running = running || run
	}
	if local {
		l := checkHostLocal(h.Main, mainErrs, running)
		h.Main.Locate(l.errs)
		f.addErrs(h.Path, l.errs)
		for _, w := range l.warnings {
			f.warnings = append(f.warnings, h.Path+": "+w)
		}
	}
	return f.print(h, stdout, stderr)
}

// checkServer runs the checks that need more than a server's file: names
// resolved, with local its socket and addresses, its descriptor caps. It
// reports whether a running queryd answers on the server's socket.
func (f *hostFindings) checkServer(s config.HostServer, local bool) (running bool) {
	errs, warnings := checkNames(s.Config, nil, nil)
	if local {
		var l localFindings
		l, running = checkServerLocal(s.Config, errs)
		errs, warnings = append(errs, l.errs...), append(warnings, l.warnings...)
		if l.note != "" {
			f.notes = append(f.notes, s.Path+": "+l.note)
		}
	}
	warnings = append(warnings, checkDescriptors(s.Config, errs)...)
	sort.SliceStable(errs, func(i, j int) bool { return errs[i].Key < errs[j].Key })
	s.Config.Locate(errs)
	f.addErrs(s.Path, errs)
	for _, w := range warnings {
		f.warnings = append(f.warnings, s.Path+": "+w)
	}
	return running
}

// print writes the findings: on stderr the errors, file by file (the main
// file first), the notes and the warnings; on stdout the servers when no
// file has an error. It returns the exit code.
func (f *hostFindings) print(h *config.Host, stdout, stderr io.Writer) int {
	files := map[string]bool{h.Path: true}
	for _, s := range h.Servers {
		files[s.Path] = true
	}
	for _, fe := range h.Failed {
		files[fe.Path] = true
	}
	var order []string
	for p := range f.errs {
		if p != h.Path {
			order = append(order, p)
		}
	}
	sort.Strings(order)
	if len(f.errs[h.Path]) > 0 {
		order = append([]string{h.Path}, order...)
	}
	n := 0
	for _, p := range order {
		n += len(f.errs[p])
	}
	if n > 0 {
		fmt.Fprintf(stderr, "%s: %d error(s) in %d of %d file(s)\n", h.Path, n, len(order), len(files))
		for _, p := range order {
			for _, line := range f.errs[p] {
				fmt.Fprintf(stderr, "  %s\n", line)
			}
		}
	}
	for _, note := range f.notes {
		fmt.Fprintln(stderr, "note:", note)
	}
	for _, w := range f.warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	if n > 0 {
		return 1
	}
	names := make([]string, len(h.Servers))
	for i, s := range h.Servers {
		names[i] = s.Name
	}
	if len(names) == 0 {
		fmt.Fprintf(stdout, "%s: ok (no server file yet)\n", h.Path)
		return 0
	}
	fmt.Fprintf(stdout, "%s: ok (%d server(s): %s)\n", h.Path, len(names), strings.Join(names, ", "))
	return 0
}
