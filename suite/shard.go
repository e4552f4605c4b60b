package suite

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// Shard is part I of N of a suite (--shard i/n), 1 ≤ I ≤ N; the zero
// Shard is the whole suite.
type Shard struct{ I, N int }

// ParseShard reads i/n.
func ParseShard(v string) (Shard, error) {
	a, b, ok := strings.Cut(v, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil || n < 1 || i < 1 || i > n {
		return Shard{}, fmt.Errorf("want i/n with 1 ≤ i ≤ n, e.g. 2/4, got %q", v)
	}
	return Shard{I: i, N: n}, nil
}

// String is i/n, or "" for the whole suite.
func (s Shard) String() string {
	if s.N == 0 {
		return ""
	}
	return fmt.Sprintf("%d/%d", s.I, s.N)
}

// Of returns the shard's part of the targets, sorted by name then path:
// Playwright's split, N contiguous parts whose sizes differ by at most
// one, the larger ones first, so N jobs cover every flow exactly once.
// The whole suite is every target, in its order.
func (s Shard) Of(targets []Target) []Target {
	if s.N == 0 {
		return targets
	}
	sorted := slices.Clone(targets)
	slices.SortStableFunc(sorted, func(a, b Target) int {
		if c := strings.Compare(a.Name, b.Name); c != 0 {
			return c
		}
		return strings.Compare(a.Path, b.Path)
	})
	size := len(sorted) / s.N
	extra := len(sorted) - size*s.N
	k := s.I - 1
	from := size*k + min(extra, k)
	to := from + size
	if k < extra {
		to++
	}
	return sorted[from:to]
}
