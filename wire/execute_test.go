package wire

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

func raw(t *testing.T, s string) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestExecuteArgNames: the names (the table every decoder walks) list
// every field of ExecuteArgs, in its order, as its JSON tags spell them.
func TestExecuteArgNames(t *testing.T) {
	var tags []string
	ty := reflect.TypeFor[ExecuteArgs]()
	for i := range ty.NumField() {
		f := ty.Field(i)
		if !f.IsExported() {
			continue
		}
		tags = append(tags, strings.Split(f.Tag.Get("json"), ",")[0])
	}
	if got := ExecuteArgNames(); !slices.Equal(got, tags) {
		t.Errorf("ExecuteArgNames: got %v, want the tags %v", got, tags)
	}
}

// TestExecuteCheck: the caps refuse with the texts flowargs had, a file
// input counting by its path; other types are the schema's.
func TestExecuteCheck(t *testing.T) {
	big := strings.Repeat("a", MaxNameBytes+1)
	long := "/" + strings.Repeat("p", MaxPathBytes)
	for _, c := range []struct {
		args, field, want string
	}{
		{`{"name":"home","project_root":"/p"}`, "", ""},
		{`{"name":"` + big + `"}`, ArgName, "name is 129 bytes; a flow name has at most 128"},
		{`{"device":"` + big + `"}`, ArgDevice, "device is 129 bytes; a device id has at most 64"},
		{`{"project_root":"` + long + `"}`, ArgProjectRoot, "project_root is 4097 bytes; a path has at most 4096"},
		{`{"flow_path":{"__argentFileInput":true,"path":"` + long + `"}}`, ArgFlowPath, "flow_path's path is 4097 bytes; a path has at most 4096"},
		{`{"flow_file":"` + long + `"}`, ArgFlowFile, "flow_file is 4097 bytes; a path has at most 4096"},
		{`{"name":3,"device":{"x":1}}`, "", ""},
	} {
		a := ReadExecute(raw(t, c.args))
		err := a.Check()
		var ae *ArgError
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%.40s: got %v, want no error", c.args, err)
		case c.want != "" && (!errors.As(err, &ae) || ae.Field != c.field || ae.Message != c.want):
			t.Errorf("%.40s: got %#v, want %s: %s", c.args, err, c.field, c.want)
		}
	}
}

// TestExecuteFlowName: the name, else the base name of flow_path or of
// flow_file, a file input's path too.
func TestExecuteFlowName(t *testing.T) {
	for args, want := range map[string]string{
		`{"name":"home","flow_path":"/x/y.yaml"}`:                                         "home",
		`{"flow_path":"/x/y.yaml"}`:                                                       "y",
		`{"flow_file":{"__argentFileInput":true,"path":"C:\\p\\.argent\\flows\\w.yaml"}}`: "w",
		`{"name":7}`: "",
	} {
		a := ReadExecute(raw(t, args))
		if got := a.FlowName(); got != want {
			t.Errorf("%s: got %q, want %q", args, got, want)
		}
	}
}

// TestExecuteFlowInput: the first of flow_path and flow_file sent as a
// file input; members tell a linked call, an empty list too.
func TestExecuteFlowInput(t *testing.T) {
	a := ReadExecute(raw(t, `{"flow_path":"/a.yaml","flow_file":{"__argentFileInput":true,"path":"/p/.argent/flows/a.yaml","members":[]}}`))
	target, in, ok := a.FlowInput()
	if !ok || target != ArgFlowFile || in.Path != "/p/.argent/flows/a.yaml" || !a.SentMembers() {
		t.Errorf("got %q %+v %v members %v, want flow_file with members", target, in, ok, a.SentMembers())
	}
	a = ReadExecute(raw(t, `{"flow_path":{"__argentFileInput":true,"path":"/a.yaml"}}`))
	if target, _, ok := a.FlowInput(); !ok || target != ArgFlowPath || a.SentMembers() {
		t.Errorf("got %q %v members %v, want flow_path without members", target, ok, a.SentMembers())
	}
	if _, _, ok := ReadExecute(raw(t, `{"name":"a"}`)).FlowInput(); ok {
		t.Error("no file input: got one")
	}
}

// TestExecuteDecode: a wrong type is encoding/json's error of an unnamed
// struct (as tool.Decode gave), and the other arguments are decoded.
func TestExecuteDecode(t *testing.T) {
	var a ExecuteArgs
	err := a.Decode(raw(t, `{"name":"home","snapshotDefaults":{"maxDiffPixels":1.0},"updateBaselines":false}`))
	want := "json: cannot unmarshal number 1.0 into Go struct field .snapshotDefaults.maxDiffPixels of type int"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %s", err, want)
	}
	if a.Name != "home" || a.UpdateBaselines == nil || *a.UpdateBaselines {
		t.Errorf("got %+v, want name and updateBaselines false decoded", a)
	}
}

// TestExecuteMap: the map marshals to the bytes flow run has always sent:
// device always, unset arguments never, snapshotDefaults in its field
// order.
func TestExecuteMap(t *testing.T) {
	yes, m := true, 0.5
	a := ExecuteArgs{ProjectRoot: "/p", PrerequisiteAcknowledged: true, UpdateBaselines: &yes, Name: "home",
		SnapshotDefaults: &SnapshotDefaults{MaxMismatch: &m, Sources: map[string]string{"maxMismatch": "flag"}}}
	b, err := json.Marshal(a.Map())
	if err != nil {
		t.Fatal(err)
	}
	want := `{"device":"","name":"home","prerequisiteAcknowledged":true,"project_root":"/p","snapshotDefaults":{"maxMismatch":0.5,"sources":{"maxMismatch":"flag"}},"updateBaselines":true}`
	if string(b) != want {
		t.Errorf("got %s\nwant %s", b, want)
	}
	back := StepArgs(a.Map())
	back.SnapshotDefaults = a.SnapshotDefaults
	if !reflect.DeepEqual(back, a) {
		t.Errorf("StepArgs of the map: got %+v, want %+v", back, a)
	}
}

// TestStepArgs: a tool: step's arguments as YAML holds them; another type
// is zero, updateBaselines nil when absent or not a bool.
func TestStepArgs(t *testing.T) {
	a := StepArgs(map[string]any{"name": "inner", "project_root": 3, "updateBaselines": "yes", "prerequisiteAcknowledged": true})
	if a.Name != "inner" || a.ProjectRoot != "" || a.UpdateBaselines != nil || !a.PrerequisiteAcknowledged {
		t.Errorf("got %+v", a)
	}
	no := false
	if a := StepArgs(map[string]any{"updateBaselines": false}); a.UpdateBaselines == nil || *a.UpdateBaselines != no {
		t.Errorf("updateBaselines false: got %v", a.UpdateBaselines)
	}
	for _, c := range []struct {
		args           map[string]any
		update, narrow bool
	}{
		{map[string]any{}, false, false},
		{map[string]any{"updateBaselines": true}, true, false},
		{map[string]any{"updateOnly": "changed"}, true, true},
	} {
		if u, n := StepArgs(c.args).Update(); u != c.update || n != c.narrow {
			t.Errorf("Update of %v: got %v %v, want %v %v", c.args, u, n, c.update, c.narrow)
		}
	}
}

// TestRunStandsFor: what the recorder may inline as run: — the flow, the
// device by any of its names, the platform, the acknowledgement, the
// derived file input — and nothing a run: cannot say.
func TestRunStandsFor(t *testing.T) {
	for _, k := range []string{"name", "project_root", "device", "udid", "device_id", "platform", "prerequisiteAcknowledged", "flow_file"} {
		if !RunStandsFor(k) {
			t.Errorf("%s: got false, want true", k)
		}
	}
	for _, k := range []string{"flow_path", "updateBaselines", "updateOnly", "snapshotDefaults", "baseURL", "tunnel", "strict", "delayMs"} {
		if RunStandsFor(k) {
			t.Errorf("%s: got true, want false", k)
		}
	}
}
