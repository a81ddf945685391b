package querydtest

import (
	"strings"
	"testing"
)

func TestParseMetrics(t *testing.T) {
	text := `# HELP queryd_requests_total x
# TYPE queryd_requests_total counter
queryd_requests_total{outcome="answered",protocol="a2s"} 12
queryd_requests_total{outcome="malformed",protocol="a2s"} 3
queryd_requests_total{outcome="malformed",protocol="sagl"} 4
queryd_state_version 7
go_gc_duration_seconds{quantile="0.5"} 1.5e-05
`
	m, err := ParseMetrics(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	if got := m.Sum("queryd_requests_total"); got != 19 {
		t.Errorf("sum of requests = %v, want 19", got)
	}
	if got := m.Sum("queryd_requests_total", "outcome", "malformed"); got != 7 {
		t.Errorf("malformed = %v, want 7", got)
	}
	if got := m.Requests("a2s")["answered"]; got != 12 {
		t.Errorf("a2s answered = %v, want 12", got)
	}
	if got := m.Sum("queryd_state_version"); got != 7 {
		t.Errorf("version = %v, want 7", got)
	}
	if got := m[1].String(); got != `queryd_requests_total{outcome="malformed",protocol="a2s"}` {
		t.Errorf("a sample as /metrics prints it: %s", got)
	}
	if d := m.Sub(m[:1]); d[0].Value != 0 || d[1].Value != 3 {
		t.Errorf("m - m[:1] = %v", d)
	}
	if _, err := ParseMetrics(strings.NewReader("broken{a=\"b\" 1\n")); err == nil {
		t.Errorf("a line without a closing brace parsed")
	}
}

func TestOver(t *testing.T) {
	base := Tables{"feed": {"socket": "/s", "stale_after": "60s"}}
	got := base.Over(Tables{"feed": {"stale_after": nil, "http": "x"}}, Tables{"a2s": {"enabled": true}})
	if len(got["feed"]) != 2 || got["feed"]["socket"] != "/s" || got["feed"]["http"] != "x" || got["a2s"]["enabled"] != true {
		t.Errorf("layers: %v", got)
	}
	if len(base["feed"]) != 2 || base["feed"]["stale_after"] != "60s" {
		t.Errorf("the base changed: %v", base)
	}
}
