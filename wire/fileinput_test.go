package wire_test

import (
	"testing"

	"github.com/toolserver/toolserver/wire"
)

func TestIsFileArgument(t *testing.T) {
	for _, tc := range []struct {
		in   wire.FileInput
		want bool
	}{
		{wire.FileInput{Target: "baselinePath", Path: "${baselinePath}", Kind: "file"}, true},
		{wire.FileInput{Target: "outputDir", Path: "${outputDir}", Kind: "probe"}, false},
		{wire.FileInput{Target: "flow_file", Path: "${project_root}/.argent/flows/${name}.yaml", Kind: "file"}, false},
	} {
		if got := tc.in.IsFileArgument(); got != tc.want {
			t.Errorf("%+v: got %v, want %v", tc.in, got, tc.want)
		}
	}
}
