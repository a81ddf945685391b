package querydtest

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
	resp, err := d.HTTPClient(5 * time.Second).Get("http://" + d.AdminAddr + "/metrics")
	if err != nil {
		t.Fatalf("GET /metrics: %v", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	m, err := ParseMetrics(resp.Body)
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	return m
}

// Metric returns one sample's value from the daemon's /metrics, the
// sample named as /metrics prints it (`name{label="value",...}`, labels
// in order); it fails t when /metrics has no such sample.
func (d *Daemon) Metric(t testing.TB, sample string) float64 {
	t.Helper()
	for _, s := range d.Metrics(t) {
		if s.String() == sample {
			return s.Value
		}
	}
	t.Fatalf("/metrics has no %s", sample)
	return 0
}

// String is the sample's name and labels as /metrics prints them: the
// labels sorted by name, each value quoted.
func (s Sample) String() string {
	if len(s.Labels) == 0 {
		return s.Name
	}
	ks := make([]string, 0, len(s.Labels))
	for k := range s.Labels {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	for i, k := range ks {
		ks[i] = k + "=" + strconv.Quote(s.Labels[k])
	}
	return s.Name + "{" + strings.Join(ks, ",") + "}"
}

// ParseMetrics reads the Prometheus text exposition format (no escapes in
// label values beyond \" and \\, which queryd's labels never hold).
func ParseMetrics(r io.Reader) (Metrics, error) {
	var out Metrics
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			return nil, err
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// parseSample parses one sample line.
func parseSample(line string) (Sample, error) {
	s := Sample{Labels: map[string]string{}}
	rest := line
	if i := strings.IndexByte(line, '{'); i >= 0 {
		j := strings.LastIndexByte(line, '}')
		if j < i {
			return s, &parseError{line}
		}
		s.Name = line[:i]
		for _, kv := range splitLabels(line[i+1 : j]) {
			k, v, ok := strings.Cut(kv, "=")
			if !ok {
				return s, &parseError{line}
			}
			s.Labels[k] = strings.Trim(v, `"`)
		}
		rest = strings.TrimSpace(line[j+1:])
	} else {
		name, val, ok := strings.Cut(line, " ")
		if !ok {
			return s, &parseError{line}
		}
		s.Name, rest = name, val
	}
	f := strings.Fields(rest)
	if len(f) == 0 {
		return s, &parseError{line}
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return s, &parseError{line}
	}
	s.Value = v
	return s, nil
}

// splitLabels splits a sample's label list at the commas outside quotes.
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

// parseError is a /metrics line ParseMetrics cannot read.
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

// Sub returns m - base for every sample of m (counters between two
// scrapes).
func (m Metrics) Sub(base Metrics) Metrics {
	old := map[string]float64{}
	for _, s := range base {
		old[s.String()] = s.Value
	}
	out := make(Metrics, len(m))
	for i, s := range m {
		out[i] = Sample{Name: s.Name, Labels: s.Labels, Value: s.Value - old[s.String()]}
	}
	return out
}

// RelayHandled is how many unclaimed datagrams the relay took in m: those
// it passed to the game server (forwarded) and those it dropped (its caps,
// a loop: relay_dropped).
func RelayHandled(m Metrics) float64 {
	return m.Sum("queryd_requests_total", "outcome", "forwarded") + m.Sum("queryd_requests_total", "outcome", "relay_dropped")
}
