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

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/feed"
)

// cmdPush sends NDJSON feed messages from a file or stdin and prints each reply.
func cmdPush(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("push", flag.ContinueOnError)
	fs.SetOutput(stderr)
	def, _ := config.Parse(config.Default, configModules()...)
	socket := fs.String("socket", def.FeedSocket(), "feed socket path")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 1 {
		fmt.Fprintln(stderr, "usage: queryd push [-socket PATH] [FILE|-]")
		return 2
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

func replyLine(r feed.Reply) string {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Sprintf(`{"ok":false,"error":%q}`, err.Error())
	}
	return string(b)
}
