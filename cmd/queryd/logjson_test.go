package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/queryd/queryd/config"
)

// TestJSONLogDurations: with [log] format = "json", durations are written
// as the config writes them ("60s"), at the top level and in a group, not
// as slog's integer of nanoseconds (60000000000); the text format is as
// before.
func TestJSONLogDurations(t *testing.T) {
	var b bytes.Buffer
	log := newLogger(config.Log{Level: slog.LevelInfo, Format: config.LogJSON}, &b)
	log.Warn("feed is stale", "stale_after", 60*time.Second, slog.Group("poll", "interval", 1500*time.Millisecond), "n", 3)
	var got map[string]any
	if err := json.Unmarshal(b.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, b.String())
	}
	poll, _ := got["poll"].(map[string]any)
	if got["stale_after"] != "1m0s" || poll["interval"] != "1.5s" || got["n"] != 3.0 {
		t.Errorf("JSON log line: %s", b.String())
	}
	b.Reset()
	newLogger(config.Log{Level: slog.LevelInfo, Format: config.LogText}, &b).Info("x", "d", 2*time.Second)
	if !strings.Contains(b.String(), " d=2s") {
		t.Errorf("text log line: %s", b.String())
	}
}
