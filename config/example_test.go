package config_test

import (
	"fmt"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/queryd/queryd/config"
)

// exampleSamples are the keys queryd.toml.example sets to something other
// than their default, each marked "sample" there: [server] (empty and 0 by
// default), [feed] socket (the packages install the file as
// /etc/queryd/queryd.toml, for the unit's /run/queryd) and [agones]
// enabled (the table's presence turns Agones on: the file keeps it off).
var exampleSamples = []string{"feed.socket", "agones.enabled"}

// exampleSpelledOut are keys whose zero value in Defaults stands for their
// default, which the example writes out.
var exampleSpelledOut = []string{"relay.idle_timeout", "relay.max_sessions"}

// TestExampleShowsDefaults: queryd.toml.example says it shows every key with
// its default; every key it sets has its default but the samples (it gave
// [server] values that are no defaults without saying so).
func TestExampleShowsDefaults(t *testing.T) {
	b, err := os.ReadFile("../queryd.toml.example")
	if err != nil {
		t.Fatal(err)
	}
	ex, err := config.Parse(b, exampleModules...)
	if err != nil {
		t.Fatal(err)
	}
	def, err := config.Parse(nil, exampleModules...)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, table := range []string{"Listen", "Feed", "Limits", "Relay", "Upstream", "Admin", "Log", "XDP"} {
		got = append(got, differing(strings.ToLower(table), reflect.ValueOf(*ex).FieldByName(table), reflect.ValueOf(*def).FieldByName(table))...)
	}
	for _, s := range ex.Modules {
		got = append(got, differing(s.Name, reflect.ValueOf(s.Section).Elem(), reflect.ValueOf(def.Section(s.Name)).Elem())...)
	}
	for _, k := range got {
		if !slices.Contains(exampleSamples, k) && !slices.Contains(exampleSpelledOut, k) {
			t.Errorf("queryd.toml.example sets %s to something other than its default (a sample? say so, and list it in exampleSamples)", k)
		}
	}
	// The samples say they are: a "(sample" in the comment lines above them.
	for _, k := range append([]string{"server"}, exampleSamples...) {
		table, key, _ := strings.Cut(k, ".")
		if !sampleMarked(string(b), table, key) {
			t.Errorf("queryd.toml.example does not mark %s as a sample", k)
		}
	}
}

// sampleMarked reports whether the comment block right above [table] (key
// "") or above key in [table] says "sample".
func sampleMarked(text, table, key string) bool {
	lines := strings.Split(text, "\n")
	in := false
	for i, l := range lines {
		if strings.HasPrefix(l, "[") {
			in = strings.TrimSpace(l) == "["+table+"]"
			if !in || key != "" {
				continue
			}
		} else if !in || key == "" || !strings.HasPrefix(l, key+" ") {
			continue
		}
		for j := i - 1; j >= 0 && strings.HasPrefix(lines[j], "#"); j-- {
			if strings.Contains(lines[j], "sample") {
				return true
			}
		}
		return false
	}
	return false
}

// differing lists the keys (table.key, by toml tag) whose values differ.
func differing(table string, a, b reflect.Value) []string {
	var out []string
	for i := 0; i < a.NumField(); i++ {
		tag, _, _ := strings.Cut(a.Type().Field(i).Tag.Get("toml"), ",")
		if tag == "" || tag == "-" {
			continue
		}
		fa, fb := a.Field(i), b.Field(i)
		if fa.Kind() == reflect.Slice && fa.Len() == 0 && fb.Len() == 0 {
			continue // [] is nil
		}
		if !reflect.DeepEqual(fa.Interface(), fb.Interface()) {
			out = append(out, fmt.Sprintf("%s.%s", table, tag))
		}
	}
	return out
}
