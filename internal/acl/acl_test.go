package acl

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

// testTable is a small command table: enough commands per category for the
// best-fit description to pick categories, containers with subcommands,
// and the pub/sub commands whose channels the ACL checks.
func testTable() *Table {
	return NewTable([]CommandSpec{
		{"get", []string{"read", "string", "fast"}},
		{"set", []string{"write", "string", "slow"}},
		{"del", []string{"keyspace", "write", "slow"}},
		{"exists", []string{"keyspace", "read", "fast"}},
		{"copy", []string{"keyspace", "write", "slow"}},
		{"select", []string{"fast", "connection"}},
		{"ping", []string{"fast", "connection"}},
		{"auth", []string{"fast", "connection"}},
		{"flushall", []string{"keyspace", "write", "slow", "dangerous"}},
		{"config", []string{"slow"}},
		{"config|get", []string{"admin", "slow", "dangerous"}},
		{"config|set", []string{"admin", "slow", "dangerous"}},
		{"client", []string{"slow"}},
		{"client|id", []string{"slow", "connection"}},
		{"client|kill", []string{"admin", "slow", "dangerous", "connection"}},
		{"publish", []string{"pubsub", "fast"}},
		{"subscribe", []string{"pubsub", "slow"}},
		{"psubscribe", []string{"pubsub", "slow"}},
		{"unsubscribe", []string{"pubsub", "slow"}},
	})
}

func user(t *testing.T, st *Store, rules ...string) *User {
	t.Helper()
	u, _, msg := st.SetUser("u", rules)
	if msg != "" {
		t.Fatalf("SETUSER %q: %s", rules, msg)
	}
	return u
}

// TestDescribe: the rule text ACL LIST prints (ACLDescribeUser): flags,
// passwords, root selector (keys, channels, commands by best-fit
// categories then single commands and first args), then "(...)" selectors.
func TestDescribe(t *testing.T) {
	cases := []struct {
		rules []string
		want  string
	}{
		{nil, "off resetchannels -@all"},
		{[]string{"on", "nopass", "~*", "&*", "+@all"}, "on nopass ~* &* +@all"},
		{[]string{"on", ">pw", "+@all"}, "on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 resetchannels +@all"},
		{[]string{"+@all", "-@dangerous"}, "off resetchannels +@all -@dangerous"},
		{[]string{"+@read"}, "off resetchannels -@all +@read"},
		{[]string{"+@all", "-@keyspace", "+exists"}, "off resetchannels +@all -@keyspace +exists"},
		{[]string{"-@all", "+config|get", "+client|id"}, "off resetchannels -@all +config|get +client|id"},
		{[]string{"-@all", "+config", "-config|set"}, "off resetchannels -@all +config -config|set"},
		{[]string{"-@all", "+select|0", "+select|1"}, "off resetchannels -@all +select|0 +select|1"},
		{[]string{"+select|0", "+select"}, "off resetchannels -@all +select"},
		{[]string{"~a*", "%R~b*", "%W~c*", "%RW~d*", "%R~a*", "&x", "&x"}, "off ~a* %R~b* %W~c* ~d* resetchannels &x -@all"},
		{[]string{"%R~k", "%W~k"}, "off ~k resetchannels -@all"},
		{[]string{"~x", "allkeys"}, "off ~* resetchannels -@all"},
		{[]string{"&x", "allchannels"}, "off &* -@all"},
		{[]string{"(+get ~x*)", "(+set &c)"}, "off resetchannels -@all (~x* resetchannels -@all +get) (resetchannels &c -@all +set)"},
		{[]string{"(+get ~x*)", "clearselectors"}, "off resetchannels -@all"},
		{[]string{"nopass", "skip-sanitize-payload"}, "off nopass skip-sanitize-payload resetchannels -@all"},
		{[]string{"on", "+@all", "~*", "reset"}, "off sanitize-payload resetchannels -@all"},
	}
	for _, c := range cases {
		st := NewStore(testTable())
		if got := user(t, st, c.rules...).Describe(); got != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.rules, got, c.want)
		}
	}
}

func TestSetUserErrors(t *testing.T) {
	cases := []struct {
		rules []string
		want  string
	}{
		{[]string{"+nosuch"}, "ERR Error in ACL SETUSER modifier '+nosuch': Unknown command or category name in ACL"},
		{[]string{"+@nosuch"}, "ERR Error in ACL SETUSER modifier '+@nosuch': Unknown command or category name in ACL"},
		{[]string{"foo"}, "ERR Error in ACL SETUSER modifier 'foo': Syntax error"},
		{[]string{"+config|"}, "ERR Error in ACL SETUSER modifier '+config|': Syntax error"},
		{[]string{"+config|get|x"}, "ERR Error in ACL SETUSER modifier '+config|get|x': Allowing first-arg of a subcommand is not supported"},
		{[]string{"+config|nosuch"}, "ERR Error in ACL SETUSER modifier '+config|nosuch': Unknown command or category name in ACL"},
		{[]string{"%X~k"}, "ERR Error in ACL SETUSER modifier '%X~k': Syntax error"},
		{[]string{"%RR~k"}, "ERR Error in ACL SETUSER modifier '%RR~k': Syntax error"},
		{[]string{"~*", "~x"}, "ERR Error in ACL SETUSER modifier '~x': Adding a pattern after the * pattern (or the 'allkeys' flag) is not valid and does not have any effect. Try 'resetkeys' to start with an empty list of patterns"},
		{[]string{"!abc"}, "ERR Error in ACL SETUSER modifier '!abc': The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"},
		{[]string{"<x"}, "ERR Error in ACL SETUSER modifier '<x': The password you are trying to remove from the user does not exist"},
		{[]string{"(+get", "~x"}, "ERR Unmatched parenthesis in acl selector starting at '(+get'."},
	}
	for _, c := range cases {
		st := NewStore(testTable())
		if _, _, msg := st.SetUser("u", c.rules); msg != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.rules, msg, c.want)
		}
		if st.User("u") != nil {
			t.Errorf("%q: a failed SETUSER created the user", c.rules)
		}
	}
	st := NewStore(testTable())
	if _, _, msg := st.SetUser("a b", nil); msg != "ERR Usernames can't contain spaces or null characters" {
		t.Errorf("space in name: %s", msg)
	}
	// A failed SETUSER leaves an existing user unchanged.
	u := user(t, st, "on", "+get")
	if _, _, msg := st.SetUser("u", []string{"+set", "+nosuch"}); msg == "" {
		t.Fatal("no error")
	}
	if got := u.Describe(); got != "on resetchannels -@all +get" {
		t.Errorf("after a failed SETUSER: %s", got)
	}
}

func b(args ...string) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = []byte(a)
	}
	return out
}

// keys gives the key positions of the test commands with their access, as
// the server derives them from key specs.
func keys(args [][]byte) KeyFunc {
	return func() ([]KeyRef, bool) {
		switch strings.ToLower(string(args[0])) {
		case "get":
			return []KeyRef{{1, KeyRead}}, true
		case "set":
			return []KeyRef{{1, KeyWrite}}, true
		case "exists":
			return []KeyRef{{1, 0}}, true
		case "copy":
			return []KeyRef{{1, KeyRead}, {2, KeyWrite}}, true
		case "del":
			var out []KeyRef
			for i := 1; i < len(args); i++ {
				out = append(out, KeyRef{i, KeyWrite})
			}
			return out, true
		}
		return nil, false
	}
}

// TestCheck: commands, subcommands, first args, key patterns with read and
// write access, channels and patterns, and selectors, as
// ACLCheckAllUserCommandPerm decides them.
func TestCheck(t *testing.T) {
	st := NewStore(testTable())
	mk := func(name string, rules ...string) *User {
		u, _, msg := st.SetUser(name, rules)
		if msg != "" {
			t.Fatal(msg)
		}
		return u
	}
	cmdU := mk("cmd", "-@all", "+ping", "+config|get", "+select|0", "~*")
	keyU := mk("key", "+@all", "%R~r*", "%W~w*", "%RW~rw*", "~k*")
	chU := mk("ch", "+@all", "~*", "&news*", "(+subscribe &other)")
	selU := mk("sel", "-@all", "+get", "~a*", "(+set ~b*)", "(+get +set ~c*)")
	cases := []struct {
		u    *User
		args []string
		res  Result
		idx  int
	}{
		{cmdU, []string{"ping"}, OK, 0},
		{cmdU, []string{"get", "k"}, DeniedCmd, 0},
		{cmdU, []string{"auth", "x"}, OK, 0}, // no_auth
		{cmdU, []string{"config", "get", "x"}, OK, 0},
		{cmdU, []string{"config", "set", "x", "y"}, DeniedCmd, 0},
		{cmdU, []string{"select", "0"}, OK, 0},
		{cmdU, []string{"SELECT", "0"}, OK, 0},
		{cmdU, []string{"select", "1"}, DeniedCmd, 0},
		{keyU, []string{"get", "r1"}, OK, 0},
		{keyU, []string{"set", "r1", "v"}, DeniedKey, 1},
		{keyU, []string{"set", "w1", "v"}, OK, 0},
		{keyU, []string{"get", "w1"}, DeniedKey, 1},
		{keyU, []string{"exists", "w1"}, OK, 0}, // no access flags: any pattern
		{keyU, []string{"exists", "zz"}, DeniedKey, 1},
		{keyU, []string{"copy", "r1", "w1"}, OK, 0},
		{keyU, []string{"copy", "w1", "r1"}, DeniedKey, 1},
		{keyU, []string{"copy", "rw1", "r1"}, DeniedKey, 2},
		{keyU, []string{"del", "k1", "rw", "z"}, DeniedKey, 3},
		{chU, []string{"publish", "news1", "m"}, OK, 0},
		{chU, []string{"publish", "other", "m"}, DeniedChannel, 1},
		{chU, []string{"subscribe", "news1", "x"}, DeniedChannel, 2},
		{chU, []string{"subscribe", "other"}, OK, 0}, // second selector
		{chU, []string{"psubscribe", "news*"}, OK, 0},
		{chU, []string{"psubscribe", "news1*"}, DeniedChannel, 1}, // patterns match literally
		{chU, []string{"unsubscribe", "zz"}, OK, 0},
		{selU, []string{"get", "a1"}, OK, 0},
		{selU, []string{"set", "b1", "v"}, OK, 0},
		{selU, []string{"get", "c1"}, OK, 0},
		{selU, []string{"set", "a1", "v"}, DeniedKey, 1},
		{selU, []string{"del", "a1"}, DeniedCmd, 0},
	}
	for _, c := range cases {
		args := b(c.args...)
		name := strings.ToLower(c.args[0])
		if name == "config" {
			name += "|" + c.args[1]
		}
		id, ok := st.Table().Lookup(name)
		if !ok {
			t.Fatalf("no command %s", name)
		}
		res, idx := c.u.Check(id, name == "auth", args, keys(args))
		if res != c.res || idx != c.idx {
			t.Errorf("%s %v: got %v at %d, want %v at %d", c.u.Name(), c.args, res, idx, c.res, c.idx)
		}
	}
	if !st.Default().Unrestricted() || keyU.Unrestricted() {
		t.Error("Unrestricted")
	}
}

// TestGetUserShape: ACL GETUSER's map, as redis-server 7.0.15 replies it
// (RESP2).
func TestGetUserShape(t *testing.T) {
	st := NewStore(testTable())
	u := user(t, st, "on", ">pw", "~k*", "%R~r*", "&ch*", "+get", "(+set ~x*)")
	w := &resp.Writer{Proto: 2}
	WriteGetUser(w, u)
	want := "*12\r\n$5\r\nflags\r\n*1\r\n$2\r\non\r\n$9\r\npasswords\r\n*1\r\n$64\r\n30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4\r\n" +
		"$8\r\ncommands\r\n$10\r\n-@all +get\r\n$4\r\nkeys\r\n$9\r\n~k* %R~r*\r\n$8\r\nchannels\r\n$4\r\n&ch*\r\n" +
		"$9\r\nselectors\r\n*1\r\n*6\r\n$8\r\ncommands\r\n$10\r\n-@all +set\r\n$4\r\nkeys\r\n$3\r\n~x*\r\n$8\r\nchannels\r\n$0\r\n\r\n"
	if string(w.B) != want {
		t.Errorf("got %q\nwant %q", w.B, want)
	}
	w = &resp.Writer{Proto: 3}
	WriteGetUser(w, nil)
	if string(w.B) != "_\r\n" {
		t.Errorf("nil user: %q", w.B)
	}
}

func TestAuthenticateAndRequirePass(t *testing.T) {
	st := NewStore(testTable())
	if st.Authenticate("default", "anything") != st.Default() {
		t.Error("nopass default refused")
	}
	st.SetRequirePass("secret")
	if st.Authenticate("default", "x") != nil || st.Authenticate("default", "secret") != st.Default() {
		t.Error("requirepass")
	}
	if got := st.Lines()[0]; got != "user default on #2bb80d537b1da3e38bd30361aa855686bde0eacd7162fef6a25fe97bf527a25b ~* &* +@all" {
		t.Error(got)
	}
	st.SetRequirePass("")
	if !st.Default().NoPass() {
		t.Error("requirepass \"\" is not nopass")
	}
	u := user(t, st, "on", ">p")
	if st.Authenticate("u", "p") != u || st.Authenticate("u", "q") != nil {
		t.Error("named user")
	}
	user(t, st, "off")
	if st.Authenticate("u", "p") != nil {
		t.Error("disabled user authenticated")
	}
}

func TestDelUserAndPubsubKill(t *testing.T) {
	st := NewStore(testTable())
	u := user(t, st, "on", "&a*", "&b")
	_, kill, _ := st.SetUser("u", []string{"&c"}) // a superset: nothing to kill
	if kill != nil {
		t.Error("adding a channel kills subscribers")
	}
	_, kill, _ = st.SetUser("u", []string{"resetchannels", "&a*"})
	if kill == nil {
		t.Fatal("revoking channels kills nobody")
	}
	if kill([]string{"a1"}, nil) || !kill([]string{"b"}, nil) || kill(nil, []string{"a*"}) || !kill(nil, []string{"a1*"}) {
		t.Error("kill decisions")
	}
	if _, kill, _ = st.SetUser("u", []string{"allchannels"}); kill != nil {
		t.Error("allchannels kills")
	}
	if gone, msg := st.DelUser([]string{"u", "default"}); msg != "ERR The 'default' user cannot be removed" || gone != nil {
		t.Error("deleting default")
	}
	gone, msg := st.DelUser([]string{"u", "nosuch"})
	if msg != "" || len(gone) != 1 || gone[0] != u || st.User("u") != nil {
		t.Error("DelUser")
	}
}

func TestLog(t *testing.T) {
	st := NewStore(testTable())
	st.LogMax = 2
	t0 := time.Unix(1000, 0)
	st.AddLog(t0, DeniedCmd, "toplevel", "get", "u", "c1")
	st.AddLog(t0.Add(time.Second), DeniedKey, "multi", "k", "u", "c2")
	st.AddLog(t0.Add(2*time.Second), DeniedCmd, "toplevel", "get", "u", "c3") // merged, moved to the head
	l := st.Log(10)
	if len(l) != 2 || l[0].Count != 2 || l[0].ClientInfo != "c3" || l[1].Reason != "key" || l[1].Context != "multi" {
		t.Fatalf("%+v", l)
	}
	st.AddLog(t0.Add(70*time.Second), DeniedCmd, "toplevel", "get", "u", "c4") // older than 60s: new entry
	st.AddLog(t0.Add(71*time.Second), DeniedAuth, "toplevel", "AUTH", "x", "c5")
	l = st.Log(10)
	if len(l) != 2 || l[0].Reason != "auth" || l[1].Count != 1 {
		t.Fatalf("%+v", l)
	}
	w := &resp.Writer{Proto: 2}
	WriteLog(w, st, []string{"acl", "log", "1"}, t0.Add(72500*time.Millisecond))
	want := "*1\r\n*14\r\n$5\r\ncount\r\n:1\r\n$6\r\nreason\r\n$4\r\nauth\r\n$7\r\ncontext\r\n$8\r\ntoplevel\r\n$6\r\nobject\r\n$4\r\nAUTH\r\n" +
		"$8\r\nusername\r\n$1\r\nx\r\n$11\r\nage-seconds\r\n$3\r\n1.5\r\n$11\r\nclient-info\r\n$2\r\nc5\r\n"
	if string(w.B) != want {
		t.Errorf("got %q\nwant %q", w.B, want)
	}
	st.ResetLog()
	if len(st.Log(10)) != 0 {
		t.Error("reset")
	}
}

func TestConfigUsers(t *testing.T) {
	st := NewStore(testTable())
	err := st.LoadConfig("foo", [][]string{{"alice", "on", ">pw", "+@all"}, {"default", "on", "nopass", "~*", "&*", "+@all"}})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"user alice on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 resetchannels +@all",
		"user default on nopass sanitize-payload ~* &* +@all"}
	if got := st.Lines(); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q", got)
	}
	for _, c := range []struct {
		lines [][]string
		err   string
	}{
		{[][]string{{"x", "on"}, {"x", "off"}}, "Error in user declaration 'x': Duplicate user found. A user can only be defined once in config files"},
		{[][]string{{"x", "foo"}}, "Error in user declaration 'user': Syntax error"},
		{[][]string{{"x", "+nosuch"}}, "Error loading ACL rule '+nosuch' for the user named 'x': Unknown command or category name in ACL"},
	} {
		if err := NewStore(testTable()).LoadConfig("", c.lines); err == nil || err.Error() != c.err {
			t.Errorf("%q: %v, want %s", c.lines, err, c.err)
		}
	}
}

// TestFile: ACL SAVE writes ACL LIST's lines; ACL LOAD reads them back, all
// or nothing, keeping the default user's identity.
func TestFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "users.acl")
	st := NewStore(testTable())
	def := st.Default()
	alice := user(t, st, "on", ">pw", "~k*", "+get")
	if err := st.SaveFile(path, time.Unix(1, 0)); err != nil {
		t.Fatal(err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != strings.Join(st.Lines(), "\n")+"\n" {
		t.Errorf("saved %q", data)
	}
	os.WriteFile(path, append(data, []byte("user bob on nopass +@all\n")...), 0o644)
	gone, msg := st.LoadFile(path)
	if msg != "" || len(gone) != 1 || gone[0] != alice || st.Default() != def || st.User("bob") == nil {
		t.Fatalf("load: %q %v", msg, gone)
	}
	os.WriteFile(path, []byte("user x on +nosuch\nfoo\nuser y on\nuser y off\n"), 0o644)
	_, msg = st.LoadFile(path)
	want := path + ":1: Error in applying operation '+nosuch': Unknown command or category name in ACL. " +
		path + ":2 should start with user keyword followed by the username. WARNING: Duplicate user 'y' found on line 4. " +
		"WARNING: ACL errors detected, no change to the previously active ACL rules was performed"
	if msg != want {
		t.Errorf("got  %s\nwant %s", msg, want)
	}
	if st.User("bob") == nil || st.User("x") != nil {
		t.Error("a failed load changed the users")
	}
	_, msg = st.LoadFile(filepath.Join(dir, "nosuch"))
	if msg != "Error loading ACLs, opening file '"+filepath.Join(dir, "nosuch")+"': No such file or directory" {
		t.Error(msg)
	}
}
