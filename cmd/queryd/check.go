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
	"time"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/daemon"
	"github.com/queryd/queryd/feed"
)

// cmdCheck validates a config file and prints every error with its key.
func cmdCheck(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("check", flag.ContinueOnError)
	fs.SetOutput(stderr)
	path := fs.String("config", "", "config file to check (required)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *path == "" || fs.NArg() > 0 {
		fmt.Fprintln(stderr, "usage: queryd check -config FILE")
		return 2
	}
	c, err := config.Load(*path, configModules()...)
	if err != nil {
		var errs config.Errors
		if errors.As(err, &errs) {
			fmt.Fprintf(stderr, "%s: %d error(s)\n", *path, len(errs))
			for _, e := range errs {
				fmt.Fprintf(stderr, "  %s\n", e)
			}
		} else {
			fmt.Fprintln(stderr, err)
		}
		return 1
	}
	warnings := c.Warnings()
	for _, check := range []struct {
		key string
		fn  func(*config.Config) error
	}{{"relay.upstream", checkRelayName}, {"upstream.address", checkUpstreamName}, {"feed.http_token_file", checkFeedToken}} {
		if err := check.fn(c); err != nil {
			var e *config.Error
			if errors.As(err, &e) {
				fmt.Fprintf(stderr, "%s: 1 error(s)\n  %s\n", *path, e)
				return 1
			}
			warnings = append(warnings, fmt.Sprintf("%s: %v (queryd resolves it again at start)", check.key, err))
		}
	}
	// The descriptor budget of this process (the daemon's may differ: it
	// runs under its own LimitNOFILE).
	if why, err := daemon.FitDescriptors(c); err == nil && why != "" {
		warnings = append(warnings, why+" (in this shell; the daemon checks its own limit at start)")
	}
	for _, w := range warnings {
		fmt.Fprintln(stderr, "warning:", w)
	}
	fmt.Fprintf(stdout, "%s: ok\n", *path)
	return 0
}

// checkRelayName resolves a [relay] upstream given as a name, as the daemon
// does at start, and returns its error: a *config.Error when an address it
// resolves to loops back to queryd (an IP address is checked by Load).
func checkRelayName(c *config.Config) error {
	host, _, err := net.SplitHostPort(c.Relay.Upstream)
	if c.Relay.Upstream == "" || err != nil {
		return nil
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = c.RelayUpstream(ctx)
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
