package main

import (
	"net/http"
	"strings"
	"testing"
)

// TestServeAuthTokenNamesTheVariable: serve --auth-token ENV reads the
// token from ENV (and the default, ARGENT_AUTH_TOKEN, no longer applies);
// a name that is no variable name, or a variable given but unset, is a
// usage error that names it, before anything listens.
func TestServeAuthTokenNamesTheVariable(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		e    env
		name string
		want string
	}{
		{nil, "1TOKEN", `--auth-token "1TOKEN" is not an environment variable name`},
		{nil, "MY-TOKEN", `--auth-token "MY-TOKEN" is not an environment variable name`},
		{nil, "", `--auth-token "" is not an environment variable name`},
		{nil, "A\x1b[2J", `--auth-token "A\x1b[2J" is not an environment variable name`},
		{env{"ARGENT_AUTH_TOKEN": "other"}, "MY_TOKEN", "--auth-token MY_TOKEN: $MY_TOKEN is unset or empty"},
		{env{"MY_TOKEN": ""}, "MY_TOKEN", "--auth-token MY_TOKEN: $MY_TOKEN is unset or empty"},
	} {
		code, _, errOut := runCLIEnv(t, c.e, "serve", "--addr", "127.0.0.1:0", "--auth-token", c.name)
		if code != 2 || !strings.Contains(errOut, c.want) || strings.Contains(errOut, "\x1b") {
			t.Errorf("--auth-token %q: exit %d\n%q, want a usage error with %q", c.name, code, errOut, c.want)
		}
	}
	code, _, errOut := runCLIEnv(t, nil, "serve", "--addr", "0.0.0.0:0", "--auth-token", "MY_TOKEN")
	if code != 2 || !strings.Contains(errOut, "$MY_TOKEN is unset") {
		t.Errorf("a wildcard bind with --auth-token of an unset variable: exit %d\n%s", code, errOut)
	}

	u := startServe(t, env{"MY_TOKEN": "mine", "ARGENT_AUTH_TOKEN": "default"}, false, "--auth-token", "MY_TOKEN")
	for token, want := range map[string]int{"": http.StatusUnauthorized, "default": http.StatusUnauthorized, "mine": http.StatusOK} {
		req, _ := http.NewRequest("GET", u+"/tools", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET /tools with token %q: %d, want %d", token, resp.StatusCode, want)
		}
	}
}
