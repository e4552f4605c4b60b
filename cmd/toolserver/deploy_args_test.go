package main

import (
	"os"
	"testing"

	"go.yaml.in/yaml/v3"
)

// TestDeployArgsAreServeFlags: the arguments deploy/ gives the image
// (the Kubernetes Deployment, the compose file) are flags serve has,
// with values it accepts, so a renamed flag cannot leave the manifests
// behind.
func TestDeployArgsAreServeFlags(t *testing.T) {
	t.Parallel()
	var dep struct {
		Spec struct {
			Template struct {
				Spec struct {
					Containers []struct{ Args []string }
				}
			}
		}
	}
	var compose struct {
		Services map[string]struct {
			Command []string
		}
	}
	read := func(p string, v any) {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := yaml.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
	}
	read("../../deploy/kubernetes/deployment.yaml", &dep)
	read("../../deploy/compose.yaml", &compose)
	lists := map[string][]string{"deployment.yaml": dep.Spec.Template.Spec.Containers[0].Args}
	for name, s := range compose.Services {
		if len(s.Command) > 0 && s.Command[0] == "serve" {
			lists["compose.yaml "+name] = s.Command
		}
	}
	if len(lists) < 2 {
		t.Fatalf("found the serve arguments of %d files, want the Deployment's and compose's", len(lists))
	}
	for where, args := range lists {
		if len(args) == 0 || args[0] != "serve" {
			t.Errorf("%s: args %q do not start with serve", where, args)
			continue
		}
		cmd := newServeCommand(streams{getenv: func(string) string { return "" }})
		if err := cmd.ParseFlags(args[1:]); err != nil {
			t.Errorf("%s: serve refuses %q: %v", where, args[1:], err)
		}
		if rest := cmd.Flags().Args(); len(rest) > 0 {
			t.Errorf("%s: serve takes no arguments, got %q", where, rest)
		}
	}
}
