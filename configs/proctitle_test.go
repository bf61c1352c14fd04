package configs

import "testing"

// TestExpandProcTitle: redisProcTitleGetVariable's values, as
// redis-server and redis-sentinel 7.0.15 show them in ps.
func TestExpandProcTitle(t *testing.T) {
	def := "{title} {listen-addr} {server-mode}"
	for _, tc := range []struct {
		tmpl string
		v    ProcTitleVars
		want string
	}{
		{def, ProcTitleVars{Title: "redis-server", Bind: "*", Port: 6379}, "redis-server *:6379"},
		{def, ProcTitleVars{Title: "redis-server", Bind: "127.0.0.1", Port: 6379}, "redis-server 127.0.0.1:6379"},
		{def, ProcTitleVars{Title: "redis-sentinel", Bind: "*", Port: 26379, Mode: "[sentinel]"}, "redis-sentinel *:26379 [sentinel]"},
		{def, ProcTitleVars{Title: "redis-server", Bind: "*", UnixSocket: "/tmp/r.sock"}, "redis-server unixsocket:/tmp/r.sock"},
		{def, ProcTitleVars{Title: "redis-server", Bind: "*", TLSPort: 6380}, "redis-server *:6380"},
		{"{port} {tls-port} {unixsocket} {config-file}", ProcTitleVars{Port: 1}, "1 0  -"},
		{"{{x}} {title}}", ProcTitleVars{Title: "t"}, "{x}} t}"},
	} {
		if got, ok := ExpandProcTitle(tc.tmpl, tc.v); !ok || got != tc.want {
			t.Errorf("ExpandProcTitle(%q) = %q, %v; want %q", tc.tmpl, got, ok, tc.want)
		}
	}
	for _, bad := range []string{"{invalid-var}", "{title", "{", " ", "{server-mode}", "{unixsocket}"} {
		if validProcTitle(bad) == nil {
			t.Errorf("proc-title-template %q accepted", bad)
		}
	}
	for _, good := range []string{def, "{title}}", "x", "{{"} {
		if err := validProcTitle(good); err != nil {
			t.Errorf("proc-title-template %q: %v", good, err)
		}
	}
}
