package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/netip"
	"sort"
	"time"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/feed"
)

// cmdCheck validates a config file and prints every error with its key,
// and the warnings, in one run; with -local (the default) it also checks
// what the start needs of this host (checkLocal).
func cmdCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "config file to check (or give it as the argument)")
	local := fs.Bool("local", true, "also check this host: the socket's folder, [xdp] interfaces, addresses and the socket in use")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *path == "" && fs.NArg() == 1 {
		*path = fs.Arg(0)
	}
	if *path == "" || fs.NArg() > 1 || (fs.NArg() == 1 && fs.Arg(0) != *path) {
		fmt.Fprintln(stderr, "usage: queryd check [-local=false] FILE   (or -config FILE)")
		return 2
	}
	if h, warnings, err := config.CheckHost(*path, configModules()...); h != nil && isHost(h, err) {
		return checkHost(h, warnings, err, *local, stdout, stderr)
	}
	c, warnings, err := config.Check(*path, configModules()...)
	var errs config.Errors
	if err != nil && !errors.As(err, &errs) {
		fmt.Fprintln(stderr, err) // unreadable, a syntax error
		return 1
	}
	if c != nil { // else nothing decoded (a limit, a syntax error at a key): errs say why
		errs, warnings = checkFurther(c, errs, warnings, *local, stderr)
		c.Locate(errs)
	}
	if len(errs) > 0 {
		sort.SliceStable(errs, func(i, j int) bool { return errs[i].Key < errs[j].Key })
		fmt.Fprintf(stderr, "%s: %d error(s)\n", *path, len(errs))
		for _, e := range errs {
			fmt.Fprintf(stderr, "  %s\n", e)
		}
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	if len(errs) > 0 {
		return 1
	}
	fmt.Fprintf(stdout, "%s: ok\n", *path)
	return 0
}

// checkFurther adds to a decoded config's errors and warnings what needs
// more than the file: names resolved ([relay] upstream, [upstream] address),
// with local this host's checks (checkLocal), and the descriptor budget.
func checkFurther(c *config.Config, errs config.Errors, warnings []string, local bool, stderr io.Writer) (config.Errors, []string) {
	errs, warnings = checkNames(c, errs, warnings)
	if local {
		l := checkLocal(c, errs)
		errs, warnings = append(errs, l.errs...), append(warnings, l.warnings...)
		if l.note != "" {
			fmt.Fprintln(stderr, "note:", l.note)
		}
	}
	return errs, append(warnings, checkDescriptors(c, errs)...)
}

// checkDescriptors warns when this process's descriptor budget would lower
// c's caps (the daemon's may differ: it runs under its own LimitNOFILE).
func checkDescriptors(c *config.Config, errs config.Errors) []string {
	if why, err := daemon.FitDescriptors(c); err == nil && why != "" && len(errs) == 0 {
		return []string{why + " (in this shell; the daemon checks its own limit at start)"}
	}
	return nil
}

// checkNames adds the errors and warnings of what names resolve to
// ([relay] upstream, [upstream] address) and of the HTTP feed's token file.
func checkNames(c *config.Config, errs config.Errors, warnings []string) (config.Errors, []string) {
	for _, check := range []struct {
		key string
		fn  func(*config.Config) error
	}{{"relay.upstream", checkRelayName}, {"upstream.address", checkUpstreamName}, {"feed.http_token_file", checkFeedToken}} {
		if errs.Covers(check.key) {
			continue
		}
		if err := check.fn(c); err != nil {
			var e *config.Error
			if errors.As(err, &e) {
				errs = append(errs, e)
			} else {
				warnings = append(warnings, fmt.Sprintf("%s: %v (queryd resolves it again at start)", check.key, err))
			}
		}
	}
	return errs, warnings
}

// checkRelayName resolves a [relay] upstream given as a name, as the daemon
// does at start, and returns its error: a *config.Error when an address it
// resolves to loops back to queryd (an IP address is checked by Load).
func checkRelayName(c *config.Config) error {
	host, _, err := net.SplitHostPort(c.Relay.GameServer)
	if c.Relay.GameServer == "" || err != nil {
		return nil
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = c.RelayGameServer(ctx)
	return err
}

// checkUpstreamName resolves an [upstream] address given as a name, as the
// daemon does at start, and returns its error: a *config.Error when it
// resolves to queryd itself (an IP address is checked by Load; an address
// taken from [relay] upstream is checked there).
func checkUpstreamName(c *config.Config) error {
	host, _, err := net.SplitHostPort(c.Upstream.Address)
	if !c.Upstream.On() || c.Upstream.Address == "" || err != nil {
		return nil
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = c.UpstreamAddr(ctx)
	return err
}

// checkFeedToken reads [feed] http_token_file as the daemon does at start:
// a *config.Error when the file is unfit (a link, readable by others, a
// short token); a plain error (a warning) when this user may not read it,
// as the daemon's user may.
func checkFeedToken(c *config.Config) error {
	if !c.Feed.HTTP.IsValid() {
		return nil
	}
	_, err := feed.ReadToken(c.Feed.HTTPTokenFile)
	if err == nil || errors.Is(err, fs.ErrPermission) {
		return err
	}
	return &config.Error{Key: "feed.http_token_file", Reason: err.Error()}
}
