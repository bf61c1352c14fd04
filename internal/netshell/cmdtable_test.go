package netshell

import (
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/resp"
)

type testHandler func(argv [][]byte) string

func argv(line string) [][]byte {
	var out [][]byte
	for _, f := range strings.Fields(line) {
		out = append(out, []byte(f))
	}
	return out
}

func testTable() *Table[testHandler] {
	h := func(name string) testHandler { return func([][]byte) string { return name } }
	return NewTable([]*Command[testHandler]{
		{Name: "get", Arity: 2, Flags: FlagReadonly | FlagFast, Handler: h("get")},
		{Name: "config", Arity: -2, Subs: []*Command[testHandler]{
			{Name: "get", Arity: -3, Handler: h("config|get")},
			{Name: "resetstat", Arity: 2, Handler: h("config|resetstat")},
		}},
		{Name: "command", Arity: -1, Handler: h("command"), Subs: []*Command[testHandler]{
			{Name: "count", Arity: 2, Handler: h("command|count")},
		}},
	})
}

func TestResolve(t *testing.T) {
	tbl := testTable()
	m, err := tbl.Renamed(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ line, ran, errText string }{
		{"GET k", "get", ""},
		{"get", "", "ERR wrong number of arguments for 'get' command"},
		{"config", "", "ERR wrong number of arguments for 'config' command"},
		{"CONFIG Get x", "config|get", ""},
		{"config get", "", "ERR wrong number of arguments for 'config|get' command"},
		{"config nope", "", "ERR unknown subcommand 'nope'. Try CONFIG HELP."},
		{"config resetstat x", "", "ERR wrong number of arguments for 'config|resetstat' command"},
		{"command", "command", ""},
		{"command count", "command|count", ""},
	} {
		a := argv(tc.line)
		cmd := Lookup(m, a[0])
		if cmd == nil {
			t.Fatalf("%q: no command", tc.line)
		}
		got, errText := cmd.Resolve(a)
		if errText != tc.errText {
			t.Errorf("%q: error %q, want %q", tc.line, errText, tc.errText)
		}
		if errText == "" && got.Handler(a) != tc.ran {
			t.Errorf("%q ran %s, want %s", tc.line, got.Handler(a), tc.ran)
		}
		if strings.Contains(tc.errText, "unknown subcommand") && got != nil {
			t.Errorf("%q: an unknown subcommand is charged to %s", tc.line, got.FullName())
		}
	}
	if g := tbl.Get("config").SubNamed("get"); g.FullName() != "config|get" || g.Parent() != tbl.Get("config") || tbl.All[g.Index()] != g {
		t.Errorf("config|get indexed as %q parent %v index %d", g.FullName(), g.Parent(), g.Index())
	}
	if n := tbl.Get("get").Flags.Names(); strings.Join(n, " ") != "readonly fast" {
		t.Errorf("flag names %q", n)
	}
}

func TestRenamed(t *testing.T) {
	tbl := testTable()
	m, err := tbl.Renamed(map[string]string{"get": "", "config": "get"})
	if err != nil {
		t.Fatal(err)
	}
	if c := m["get"]; c == nil || c.Name != "config" || m["config"] != nil || len(m) != 2 {
		t.Fatalf("renamed map %v", m)
	}
	if _, err := tbl.Renamed(map[string]string{"nope": "x"}); err == nil || err.Error() != "No such command in rename-command: 'nope'" {
		t.Errorf("unknown command: %v", err)
	}
	if _, err := tbl.Renamed(map[string]string{"get": "command"}); err == nil || !strings.HasPrefix(err.Error(), "Target command name already exists") {
		t.Errorf("existing target: %v", err)
	}
}

type session struct {
	w     resp.Writer
	name  string
	flags ReplyFlags
}

func (s *session) Writer() *resp.Writer       { return &s.w }
func (s *session) ClientID() int64            { return 7 }
func (s *session) ClientName() string         { return s.name }
func (s *session) SetClientName(n string)     { s.name = n }
func (s *session) SetProto(p int)             { s.w.Proto = p }
func (s *session) ReplyFlags() ReplyFlags     { return s.flags }
func (s *session) SetReplyFlags(f ReplyFlags) { s.flags = f }

func TestClientReplyFlags(t *testing.T) {
	s := &session{}
	run := func(arg string) {
		ClientReply(s, argv("client reply "+arg))
		s.flags = s.flags.Next()
	}
	run("skip")
	if !s.flags.Suppressing() {
		t.Fatal("SKIP does not suppress the next command")
	}
	s.flags = s.flags.Next() // the skipped command
	if s.flags != 0 {
		t.Fatalf("flags %b after the skipped command", s.flags)
	}
	run("off")
	run("skip") // SKIP while OFF changes nothing
	if s.flags != ReplyOff {
		t.Fatalf("flags %b", s.flags)
	}
	run("on")
	if s.flags != 0 || string(s.w.B) != "+OK\r\n" {
		t.Fatalf("ON: flags %b reply %q", s.flags, s.w.B)
	}
}

func TestParseKill(t *testing.T) {
	users := func(u string) bool { return u == "alice" }
	for _, tc := range []struct {
		line, errText string
		match         bool // against client 3 at 1.2.3.4:5, user alice, not self
	}{
		{"client kill 1.2.3.4:5", "", true},
		{"client kill id 0 x", "-ERR client-id should be greater than 0\r\n", false},
		{"client kill id 3 skipme", "-ERR syntax error\r\n", false},
		{"client kill id 3 type pubsub", "", false},
		{"client kill user bob", "-ERR No such user 'bob'\r\n", false},
		{"client kill user alice laddr x", "", false},
		{"client kill type master user alice", "", false},
		{"client kill addr 1.2.3.4:5 id 3 type normal", "", true},
	} {
		var w resp.Writer
		f, ok := ParseKill(&w, argv(tc.line), users)
		if string(w.B) != tc.errText || ok != (tc.errText == "") {
			t.Errorf("%q: reply %q ok %v", tc.line, w.B, ok)
			continue
		}
		v := ClientView{ID: 3, Addr: "1.2.3.4:5", LAddr: "l", User: "alice", Type: ClientNormal}
		if ok && f.Match(v, false) != tc.match {
			t.Errorf("%q: match %v", tc.line, !tc.match)
		}
	}
}
