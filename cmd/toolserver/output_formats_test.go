package main

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestVersionOutputFormats: version -o json and -o yaml print the parts
// of its line as data, and the default stays the line.
func TestVersionOutputFormats(t *testing.T) {
	t.Parallel()
	code, line, _ := runCLI(t, "version")
	if code != 0 || !strings.HasPrefix(line, "toolserver ") {
		t.Fatalf("version: exit %d\n%s", code, line)
	}
	var fromJSON, fromYAML versionInfo
	code, out, errOut := runCLI(t, "version", "-o", "json")
	if err := json.Unmarshal([]byte(out), &fromJSON); code != 0 || err != nil {
		t.Fatalf("version -o json: exit %d %v\n%s%s", code, err, out, errOut)
	}
	code, out, errOut = runCLI(t, "version", "-o", "yaml")
	if err := yaml.Unmarshal([]byte(out), &fromYAML); code != 0 || err != nil || strings.HasPrefix(out, "{") {
		t.Fatalf("version -o yaml: exit %d %v\n%s%s", code, err, out, errOut)
	}
	if fromJSON.Version == "" || fromJSON.Commit == "" || fromJSON.Go == "" || fromJSON != fromYAML {
		t.Errorf("json %+v, yaml %+v", fromJSON, fromYAML)
	}
	if want := "toolserver " + fromJSON.Version + " (commit " + fromJSON.Commit + ", " + fromJSON.Go + ")\n"; line != want {
		t.Errorf("the line %q and the data %+v differ", line, fromJSON)
	}
}

// TestFlowSchemaOutputFormats: flow schema (and --config) -o yaml prints
// the same document as the default JSON, in YAML's block style; -o json
// prints the default.
func TestFlowSchemaOutputFormats(t *testing.T) {
	t.Parallel()
	for _, extra := range [][]string{nil, {"--config"}} {
		args := append([]string{"flow", "schema"}, extra...)
		code, def, _ := runCLI(t, args...)
		if code != 0 {
			t.Fatalf("%q: exit %d", args, code)
		}
		code, js, _ := runCLI(t, append(args, "-o", "json")...)
		if code != 0 || js != def {
			t.Errorf("%q -o json: exit %d, not the default", args, code)
		}
		code, y, errOut := runCLI(t, append(args, "-o", "yaml")...)
		if code != 0 || strings.HasPrefix(y, "{") || !strings.HasPrefix(y, "$schema: ") {
			t.Fatalf("%q -o yaml: exit %d, not block YAML\n%.300s%s", args, code, y, errOut)
		}
		var want, got any
		if err := json.Unmarshal([]byte(def), &want); err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal([]byte(y), &got); err != nil {
			t.Fatalf("%q -o yaml: %v", args, err)
		}
		// YAML reads integers as int; through JSON both are float64.
		b, _ := json.Marshal(got)
		got = nil
		if err := json.Unmarshal(b, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%q -o yaml is not the schema's document: %v", args, err)
		}
	}
}
