// Command k8sschema writes kubeconform's strict JSON schemas for built-in
// Kubernetes kinds from an OpenAPI v3 document, as openapi2jsonschema
// --strict does: one standalone file per kind (every schema it refers to
// under "definitions"), with additionalProperties false on every object
// that lists its properties, so a misspelt field is refused.
// deploy/ci/kubernetes.sh runs it on the Kubernetes OpenAPI documents that
// k8s.io/kube-openapi ships as test data (no network: kubeconform's own
// schemas are downloaded from a site CI cannot reach).
//
//	go run ./deploy/ci/k8sschema OUTDIR OPENAPI.json KIND GROUP/VERSION [KIND GROUP/VERSION ...]
//
// Each file is OUTDIR/<kind>-<group>-<version>.json (<kind>-<version>.json for
// the core group), the name kubeconform's {{.ResourceKind}}{{.KindSuffix}}
// template asks for.
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	if len(os.Args) < 5 || len(os.Args)%2 != 1 {
		fmt.Fprintln(os.Stderr, "usage: k8sschema OUTDIR OPENAPI.json KIND GROUP/VERSION [KIND GROUP/VERSION ...]")
		os.Exit(2)
	}
	if err := run(os.Args[1], os.Args[2], os.Args[3:]); err != nil {
		fmt.Fprintln(os.Stderr, "k8sschema:", err)
		os.Exit(1)
	}
}

func run(out, doc string, kinds []string) error {
	b, err := os.ReadFile(doc)
	if err != nil {
		return err
	}
	var spec struct {
		Components struct {
			Schemas map[string]any `json:"schemas"`
		} `json:"components"`
	}
	if err := json.Unmarshal(b, &spec); err != nil {
		return fmt.Errorf("%s: %w", doc, err)
	}
	defs := spec.Components.Schemas
	for name, s := range defs {
		defs[name] = strict(s)
	}
	for i := 0; i < len(kinds); i += 2 {
		kind, gv := kinds[i], kinds[i+1]
		group, version, ok := strings.Cut(gv, "/")
		if !ok {
			group, version = "core", gv
		}
		name := fmt.Sprintf("io.k8s.api.%s.%s.%s", group, version, kind)
		if _, ok := defs[name]; !ok {
			return fmt.Errorf("%s: no schema %s", doc, name)
		}
		schema := map[string]any{"$ref": "#/definitions/" + name, "definitions": defs}
		data, err := json.Marshal(schema)
		if err != nil {
			return err
		}
		file := strings.ToLower(kind) + "-" + strings.ReplaceAll(strings.TrimPrefix(gv, "core/"), "/", "-") + ".json"
		if err := os.WriteFile(filepath.Join(out, file), data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// strict rewrites references to "#/definitions/", lets an int-or-string be
// either, and closes every object schema that lists its properties (unless
// it keeps unknown fields).
func strict(v any) any {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			if k == "$ref" {
				if s, ok := c.(string); ok {
					t[k] = strings.Replace(s, "#/components/schemas/", "#/definitions/", 1)
				}
				continue
			}
			t[k] = strict(c)
		}
		if t["format"] == "int-or-string" { // IntOrString: a number or a string
			delete(t, "type")
			delete(t, "format")
			t["oneOf"] = []any{map[string]any{"type": "string"}, map[string]any{"type": "integer"}}
		}
		_, props := t["properties"]
		_, extra := t["additionalProperties"]
		if props && !extra && t["x-kubernetes-preserve-unknown-fields"] != true {
			t["additionalProperties"] = false
		}
	case []any:
		for i, c := range t {
			t[i] = strict(c)
		}
	}
	return v
}
