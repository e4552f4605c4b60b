package server

import (
	"bytes"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestReadBody: a body comes back whole whether its length is told or
// not, small or over several chunks; past the limit it is refused with
// *http.MaxBytesError, whether its length says so or only its bytes do.
func TestReadBody(t *testing.T) {
	t.Parallel()
	const limit = 3*readChunk + 100
	for _, tc := range []struct {
		name   string
		n      int
		told   bool
		refuse bool
	}{
		{"empty", 0, true, false},
		{"small, told", 300, true, false},
		{"small, not told", 300, false, false},
		{"three chunks and a bit, told", 3*readChunk + 7, true, false},
		{"three chunks and a bit, not told", 3*readChunk + 7, false, false},
		{"at the limit, not told", limit, false, false},
		{"over, told", limit + 1, true, true},
		{"over, not told", limit + 1, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := make([]byte, tc.n)
			for i := range want {
				want[i] = byte(i * 7)
			}
			r := httptest.NewRequest("POST", "/tools/x", io.MultiReader(bytes.NewReader(want)))
			r.ContentLength = -1
			if tc.told {
				r.ContentLength = int64(tc.n)
			}
			got, err := readBody(httptest.NewRecorder(), r, limit)
			var mbe *http.MaxBytesError
			switch {
			case tc.refuse:
				if !errors.As(err, &mbe) || mbe.Limit != limit {
					t.Fatalf("got %d bytes, %v; want a MaxBytesError of %d", len(got), err, limit)
				}
			case err != nil || !bytes.Equal(got, want):
				t.Fatalf("got %d bytes (equal: %v), %v; want the %d bytes sent", len(got), bytes.Equal(got, want), err, tc.n)
			}
		})
	}
}
