package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/queryd/queryd/config"
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
	c, err := config.Load(*path)
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
	for _, w := range c.Warnings() {
		fmt.Fprintln(stderr, "warning:", w)
	}
	fmt.Fprintf(stdout, "%s: ok\n", *path)
	return 0
}
