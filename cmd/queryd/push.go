package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/feed"
	"github.com/queryd/queryd/internal/nearest"
)

// cmdPush sends NDJSON feed messages from a file or stdin and prints each reply.
func cmdPush(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("socket", "", "feed socket path (default: the demo config's, or -config's)")
	path := fs.String("config", "", "find the socket in this config file (the daemon's)")
	server := fs.String("server", "", "with -config: the server whose socket to use (host mode)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 1 || (*socket != "" && *path != "") || (*server != "" && *path == "") {
		fmt.Fprintln(stderr, "usage: queryd push [-socket PATH | -config FILE [-server NAME]] [FILE|-]")
		return 2
	}
	if *socket == "" {
		var err error
		if *socket, err = pushSocket(*path, *server); err != nil {
			fmt.Fprintln(stderr, "push:", err)
			return 1
		}
	}
	in := stdin
	if name := fs.Arg(0); name != "" && name != "-" {
		f, err := os.Open(name)
		if err != nil {
			fmt.Fprintln(stderr, "push:", err)
			return 1
		}
		defer f.Close()
		in = f
	}
	c, err := feed.Dial(*socket)
	if err != nil {
		fmt.Fprintln(stderr, "push:", err)
		return 1
	}
	defer c.Close()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64<<10), feed.MaxLine+1)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		rep, err := c.Send(line)
		var rerr *feed.ReplyError
		if err != nil && !errors.As(err, &rerr) {
			fmt.Fprintf(stderr, "push: line %d: %v\n", n, err)
			return 1
		}
		fmt.Fprintln(stdout, replyLine(rep))
		if rerr != nil {
			fmt.Fprintf(stderr, "push: line %d rejected: %s\n", n, rerr.Msg)
			return 1
		}
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintln(stderr, "push: reading input:", err)
		return 1
	}
	return 0
}

// pushSocket finds the feed socket of a server as the daemon does: the
// demo config's without path, else that of the server named server in the
// config at path ([feed] socket, or the default in $XDG_RUNTIME_DIR/queryd
// or <tmp>/queryd-<uid>, NAME.sock for an included server). server may be
// left out when the config has one server.
func pushSocket(path, server string) (string, error) {
	if path == "" {
		def, err := config.Parse(config.Default, configModules()...)
		if err != nil {
			return "", err
		}
		return def.FeedSocket(), nil
	}
	h, err := config.LoadHost(path, configModules()...)
	if err != nil {
		return "", err
	}
	names := make([]string, len(h.Servers))
	for i, s := range h.Servers {
		names[i] = s.Name
	}
	switch {
	case len(h.Servers) == 0:
		return "", fmt.Errorf("%s has no server (no server file yet)", path)
	case server == "" && len(h.Servers) == 1:
		return h.Servers[0].Config.FeedSocket(), nil
	case server == "":
		return "", fmt.Errorf("%s has %d servers (%s): name one with -server", path, len(names), strings.Join(names, ", "))
	case h.Server(server) == nil:
		return "", fmt.Errorf("%s has no server %q (it has %s)%s", path, server, strings.Join(names, ", "), nearest.Hint(server, names))
	}
	return h.Server(server).Config.FeedSocket(), nil
}

func replyLine(r feed.Reply) string {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Sprintf(`{"ok":false,"error":%q}`, err.Error())
	}
	return string(b)
}
