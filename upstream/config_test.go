package upstream_test

import (
	"testing"

	"github.com/queryd/queryd/config"
	"github.com/queryd/queryd/upstream"
)

// [upstream]'s defaults (in config, which cannot import this package) are
// the poller's.
func TestConfigDefaultsAgree(t *testing.T) {
	if config.DefaultUpstreamInterval != upstream.DefaultInterval || config.DefaultUpstreamTimeout != upstream.DefaultTimeout {
		t.Fatalf("config %s/%s, upstream %s/%s", config.DefaultUpstreamInterval, config.DefaultUpstreamTimeout, upstream.DefaultInterval, upstream.DefaultTimeout)
	}
}
