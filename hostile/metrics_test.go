package hostile

import (
	"bufio"
	"io"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Sample is one Prometheus sample: its metric name, labels and value.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Metrics is one scrape of /metrics.
type Metrics []Sample

// Metrics scrapes the daemon's /metrics and parses the text format.
func (d *Daemon) Metrics(t testing.TB) Metrics {
	t.Helper()
	resp, err := d.httpClient(5 * time.Second).Get("http://" + d.AdminAddr + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	m, err := parseMetrics(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return m
}

// parseMetrics reads the Prometheus text exposition format (no escapes in
// label values beyond \" and \\, which queryd's labels never hold).
func parseMetrics(r io.Reader) (Metrics, error) {
	var out Metrics
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s := Sample{Labels: map[string]string{}}
		rest := line
		if i := strings.IndexByte(line, '{'); i >= 0 {
			j := strings.LastIndexByte(line, '}')
			if j < i {
				return nil, &parseError{line}
			}
			s.Name = line[:i]
			for _, kv := range splitLabels(line[i+1 : j]) {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return nil, &parseError{line}
				}
				s.Labels[k] = strings.Trim(v, `"`)
			}
			rest = strings.TrimSpace(line[j+1:])
		} else {
			name, val, ok := strings.Cut(line, " ")
			if !ok {
				return nil, &parseError{line}
			}
			s.Name, rest = name, val
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return nil, &parseError{line}
		}
		v, err := strconv.ParseFloat(f[0], 64)
		if err != nil {
			return nil, &parseError{line}
		}
		s.Value = v
		out = append(out, s)
	}
	return out, sc.Err()
}

func splitLabels(s string) []string {
	var out []string
	inQuote := false
	start := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '\\':
			i++
		case '"':
			inQuote = !inQuote
		case ',':
			if !inQuote {
				out = append(out, s[start:i])
				start = i + 1
			}
		}
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

type parseError struct{ line string }

func (e *parseError) Error() string { return "cannot parse metrics line " + strconv.Quote(e.line) }

// Sum adds the samples of name whose labels include every pair in match
// ("key", "value", ...).
func (m Metrics) Sum(name string, match ...string) float64 {
	var n float64
	for _, s := range m {
		if s.Name == name && s.matches(match) {
			n += s.Value
		}
	}
	return n
}

func (s Sample) matches(match []string) bool {
	for i := 0; i+1 < len(match); i += 2 {
		if s.Labels[match[i]] != match[i+1] {
			return false
		}
	}
	return true
}

// Requests returns queryd_requests_total by outcome for one protocol.
func (m Metrics) Requests(protocol string) map[string]float64 {
	out := map[string]float64{}
	for _, s := range m {
		if s.Name == "queryd_requests_total" && s.Labels["protocol"] == protocol {
			out[s.Labels["outcome"]] += s.Value
		}
	}
	return out
}

// Sub returns m - base for every sample of m (counters between two scrapes).
func (m Metrics) Sub(base Metrics) Metrics {
	key := func(s Sample) string {
		ks := make([]string, 0, len(s.Labels))
		for k, v := range s.Labels {
			ks = append(ks, k+"="+v)
		}
		sort.Strings(ks)
		return s.Name + "{" + strings.Join(ks, ",") + "}"
	}
	old := map[string]float64{}
	for _, s := range base {
		old[key(s)] = s.Value
	}
	out := make(Metrics, len(m))
	for i, s := range m {
		out[i] = Sample{Name: s.Name, Labels: s.Labels, Value: s.Value - old[key(s)]}
	}
	return out
}

func TestParseMetrics(t *testing.T) {
	text := `# HELP queryd_requests_total x
# TYPE queryd_requests_total counter
queryd_requests_total{outcome="answered",protocol="a2s"} 12
queryd_requests_total{outcome="malformed",protocol="a2s"} 3
queryd_requests_total{outcome="malformed",protocol="sagl"} 4
queryd_state_version 7
go_gc_duration_seconds{quantile="0.5"} 1.5e-05
`
	m, err := parseMetrics(strings.NewReader(text))
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
	if _, err := parseMetrics(strings.NewReader("broken{a=\"b\" 1\n")); err == nil {
		t.Errorf("a line without a closing brace parsed")
	}
}

// relayHandled is how many unclaimed datagrams the relay took in m: those
// it passed to the game server (forwarded) and those it dropped (its caps,
// a loop: relay_dropped).
func relayHandled(m Metrics) float64 {
	return m.Sum("queryd_requests_total", "outcome", "forwarded") + m.Sum("queryd_requests_total", "outcome", "relay_dropped")
}
