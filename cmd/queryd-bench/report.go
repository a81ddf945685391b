package main

import (
	"fmt"
	"io"
	"strconv"
	"time"
)

// report prints a run's figures for people, then the RESULT line for
// scripts (bench/run.sh reads it): key=value pairs, values without units.
func report(w io.Writer, c *loadConfig, r *loadResult) {
	secs := r.elapsed.Seconds()
	rate := 0.0
	if secs > 0 {
		rate = float64(r.answered) / secs
	}
	p50, p99 := float64(r.lat.quantile(0.50))/1e3, float64(r.lat.quantile(0.99))/1e3
	fmt.Fprintf(w, "queryd-bench load: %s -> %s, %d sources x %d in flight, %.1fs measured (io=%s)\n",
		c.proto.name, c.target, c.sources, c.inflight, secs, c.io)
	fmt.Fprintf(w, "  answered/s   %.0f  (%d answers, %d requests, %d lost, %d challenges, %d stray)\n",
		rate, r.answered, r.sent+r.asks, r.lost, r.challenges, r.stray)
	fmt.Fprintf(w, "  latency      p50 %.1f us   p99 %.1f us\n", p50, p99)
	srv := perReply(r.serverCPU, r.answered)
	fmt.Fprintf(w, "  server CPU   %s us per reply (pid %d)\n", srv, c.pid)
	gen := perReply(r.selfCPU, r.answered)
	fmt.Fprintf(w, "  generator    %s us CPU per reply\n", gen)
	fmt.Fprintf(w, "  bytes        in %d (%d datagrams), out %d\n", r.bytesIn, r.dgramsIn, r.bytesOut)
	fmt.Fprintf(w, "RESULT proto=%s answered_per_s=%.0f p50_us=%.1f p99_us=%.1f cpu_us_per_reply=%s gen_cpu_us_per_reply=%s answered=%d requests=%d lost=%d stray=%d challenges=%d bytes_in=%d bytes_out=%d dgrams_in=%d seconds=%.3f\n",
		c.proto.name, rate, p50, p99, srv, gen, r.answered, r.sent+r.asks, r.lost, r.stray, r.challenges, r.bytesIn, r.bytesOut, r.dgramsIn, secs)
}

// perReply formats CPU time per answer in microseconds, "na" when unknown.
func perReply(cpu time.Duration, answered int64) string {
	if cpu < 0 || answered == 0 {
		return "na"
	}
	return strconv.FormatFloat(float64(cpu.Nanoseconds())/1e3/float64(answered), 'f', 3, 64)
}
