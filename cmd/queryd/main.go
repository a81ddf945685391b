package main

import (
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// dispatch runs one subcommand and returns the exit code.
func dispatch(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "query":
			return cmdQuery(args[1:], stdout, stderr)
		case "push":
			return cmdPush(args[1:], stdin, stdout, stderr)
		case "check":
			return cmdCheck(args[1:], stdout, stderr)
		case "version", "-version", "--version":
			return cmdVersion(stdout)
		case "help", "-h", "-help", "--help":
			fmt.Fprint(stdout, usage())
			return 0
		case "run":
			args = args[1:]
		}
	}
	return cmdRun(args, stderr)
}

// usage is the help text; the protocols come from the registration list.
func usage() string {
	return `queryd answers game-server queries for a game server that feeds it its state.

Usage:
  queryd [run] [-config FILE]         run the daemon (the embedded demo config without -config)
  queryd query [-proto P] [-timeout D] [-json|-table] [-logo FILE] HOST:PORT
                                      ask a server; P is ` + strings.Join(protoNames(), ", ") + ` or auto
  queryd push [-socket PATH | -config FILE [-server NAME]] [FILE|-]
                                      send feed messages (NDJSON), print each reply; the
                                      socket of the config's server (the demo's without -config)
  queryd check [-local=false] [-config] FILE
                                      validate a config (and what its start needs of this host),
                                      print every error with its key and the warnings
  queryd version                      print the version, commit and Go version
`
}
