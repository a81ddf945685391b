package agones

import (
	"os"
	"strings"
	"testing"
)

// TestDocHonest: doc.go names every field the mapping sets, every state
// it classes, every outcome counted, and the defaults the code has.
func TestDocHonest(t *testing.T) {
	b, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, f := range fields {
		if !strings.Contains(doc, f.name) {
			t.Errorf("doc.go does not name the field %s", f.name)
		}
	}
	for st := range classes {
		if !strings.Contains(doc, st) {
			t.Errorf("doc.go does not name the state %s", st)
		}
	}
	for _, o := range Outcomes {
		if !strings.Contains(doc, o) {
			t.Errorf("doc.go does not name the outcome %s", o)
		}
	}
	for _, want := range []string{
		`timeout = "` + DefaultTimeout.String() + `"`,
		`interval = "` + DefaultInterval.String() + `"`,
		`players_list = "` + DefaultPlayers + `"`,
		`port_name = "` + DefaultPortName + `"`,
		`sdk = "localhost:` + DefaultSDKPort + `"`,
		SDKPrefix, ManifestPrefix, RulePrefix,
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("doc.go does not say %s", want)
		}
	}
}
