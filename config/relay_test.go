package config

import (
	"strings"
	"testing"
)

func TestRelayQueueWarning(t *testing.T) {
	c, err := Parse([]byte("[relay]\nqueue = 64\n"))
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(c.Warnings(), "\n"); !strings.Contains(w, "relay.queue: no longer used") {
		t.Errorf("warnings %q", w)
	}
}
