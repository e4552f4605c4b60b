package suite

import (
	"fmt"
	"slices"
	"testing"
)

// TestShardSplit: n shards of any number of flows cover every flow
// exactly once, in contiguous parts whose sizes differ by at most one.
func TestShardSplit(t *testing.T) {
	t.Parallel()
	for total := range 12 {
		var targets []Target
		for i := range total {
			targets = append(targets, Target{Name: fmt.Sprintf("f%02d", total-1-i)}) // unsorted
		}
		for n := 1; n <= 5; n++ {
			var all []string
			sizes := map[int]bool{}
			for i := 1; i <= n; i++ {
				part := Shard{i, n}.Of(targets)
				sizes[len(part)] = true
				for _, p := range part {
					all = append(all, p.Name)
				}
			}
			want := make([]string, total)
			for i := range total {
				want[i] = fmt.Sprintf("f%02d", i)
			}
			if !slices.Equal(all, want) || len(sizes) > 2 {
				t.Errorf("%d flows in %d shards: %v (sizes %v)", total, n, all, sizes)
			}
		}
	}
	if got := (Shard{}).Of([]Target{{Name: "b"}, {Name: "a"}}); got[0].Name != "b" {
		t.Errorf("the whole suite: got %v, want the targets in their order", got)
	}
}

// TestParseShard: i/n with 1 ≤ i ≤ n, and its text.
func TestParseShard(t *testing.T) {
	s, err := ParseShard("2/4")
	if err != nil || s != (Shard{2, 4}) || s.String() != "2/4" {
		t.Errorf("2/4: got %v %q, %v", s, s.String(), err)
	}
	for _, bad := range []string{"0/2", "3/2", "1/0", "x", "1/2/3", "-1/2"} {
		if _, err := ParseShard(bad); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
	if _, err := ParseShard("x"); err == nil || err.Error() != `want i/n with 1 ≤ i ≤ n, e.g. 2/4, got "x"` {
		t.Errorf("x: got %v", err)
	}
	if (Shard{}).String() != "" {
		t.Error("the whole suite: got a text")
	}
}
