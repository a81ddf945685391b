package config_test

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/queryd/queryd/config"
)

// BenchmarkLoadHost200: LoadHost of a main file and 200 server files (the
// issue's scale), with every module: what a start or a SIGHUP spends on
// the config. Measured 2026-12-01 on the 2-CPU machine shared with four
// other helpers' builds (load average 10-13): 21.5 ms, 3.0 MB and 36,400
// allocations per LoadHost (about 0.1 ms per server file).
func BenchmarkLoadHost200(b *testing.B) {
	files := map[string]string{"queryd.toml": hostMain}
	for i := range 200 {
		files[fmt.Sprintf("s/s%03d.toml", i)] = udpServer(fmt.Sprintf("127.0.0.1:%d", 20000+i), "") +
			fmt.Sprintf("[server]\nname = \"server %d\"\nmap = \"arena\"\nmax_players = 16\n", i)
	}
	dir := writeFiles(b, files)
	b.ReportAllocs()
	for b.Loop() {
		h, err := config.LoadHost(filepath.Join(dir, "queryd.toml"), modules...)
		if err != nil || len(h.Servers) != 200 {
			b.Fatalf("%v %d", err, len(h.Servers))
		}
	}
}
