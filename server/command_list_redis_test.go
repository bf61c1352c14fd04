package server

import (
	"sort"
	"strings"
	"testing"
)

// TestCommandListMatchesRedis: every command and subcommand name in
// redis-server 7.0's COMMAND LIST is in vigil-server's, and vigil-server
// lists no name redis-server does not (issue 22's "done when").
func TestCommandListMatchesRedis(t *testing.T) {
	if testing.Short() {
		t.Skip("starts redis-server")
	}
	dial := startRedis(t)
	rc, rbr := dial(2)
	names := func(reply string) []string {
		var out []string
		for _, f := range strings.Split(reply, `"`) {
			f = strings.TrimSpace(f)
			if f != "" && f != "[" && f != "]" && f != "," && !strings.ContainsAny(f, "[], ") {
				out = append(out, f)
			}
		}
		sort.Strings(out)
		return out
	}
	want := names(renderValue(parseReply(t, rawDo(t, rc, rbr, "COMMAND", "LIST"))))
	ts := newTestServer(t)
	got := names(ts.doR(t, ts.client(), "COMMAND", "LIST"))
	if len(want) < 300 {
		t.Fatalf("redis-server's COMMAND LIST has %d names: %v", len(want), want)
	}
	have := map[string]bool{}
	for _, n := range got {
		have[n] = true
	}
	for _, n := range want {
		if !have[n] {
			t.Errorf("COMMAND LIST lacks %q", n)
		}
		delete(have, n)
	}
	for n := range have {
		t.Errorf("COMMAND LIST has %q, which redis-server 7.0 does not", n)
	}
}
