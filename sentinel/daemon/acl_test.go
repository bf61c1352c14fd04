package daemon

import (
	"bufio"
	"context"
	"fmt"
	"math/rand"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/internal/acl"
	"github.com/vigil-kv/vigil/internal/netshell"
	"github.com/vigil-kv/vigil/internal/resp"
)

// TestACLReplies replays testdata/acl_replies.txt, recorded from
// redis-sentinel 7.0.15 with the users of its "#conf" lines, on one
// connection, and compares the raw replies (as TestReplies).
func TestACLReplies(t *testing.T) {
	data, err := os.ReadFile("testdata/acl_replies.txt")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	var conf strings.Builder
	for _, l := range lines {
		if c, ok := strings.CutPrefix(l, "#conf "); ok {
			conf.WriteString(c + "\n")
		}
	}
	conf.WriteString(fmt.Sprintf("sentinel monitor mym 127.0.0.1 %d 2\n", freePort(t)))
	port, _ := startSentinel(t, conf.String())
	replayReplies(t, port, lines, nil)
}

func newTestUser(t *testing.T, rules ...string) *acl.User {
	t.Helper()
	st := acl.NewStore(aclTable())
	for _, r := range rules {
		if _, _, msg := st.SetUser("u", []string{r}); msg != "" {
			t.Fatalf("set %q: %v", r, msg)
		}
	}
	u, _, _ := st.SetUser("u", nil)
	return u
}

// TestACLDescribe: the rules ACL LIST shows for users built from rules,
// each checked against redis-sentinel 7.0.15 (whose single-command rules
// come in its command dict's order, which varies per run; these cases
// have at most one).
func TestACLDescribe(t *testing.T) {
	cases := []struct {
		rules []string
		want  string
	}{
		{nil, "off resetchannels -@all"},
		{[]string{"on", "nopass", "~*", "&*", "+@all"}, "on nopass ~* &* +@all"},
		{[]string{"on", ">pw", "+@all"}, "on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 resetchannels +@all"},
		{[]string{"+@all", "-@slow"}, "off resetchannels +@all -@slow"},
		{[]string{"-@all", "+@connection", "+acl|cat", "-client|list"}, "off resetchannels -@all +@connection -client|list +acl|cat"}, // Redis: either order
		{[]string{"allcommands", "-acl", "+acl|whoami"}, "off resetchannels +@all -acl +acl|whoami"},
		{[]string{"-@all", "+acl", "-acl|cat"}, "off resetchannels -@all +acl -acl|cat"},
		{[]string{"+@all", "-@dangerous", "+info"}, "off resetchannels +@all -@admin"},
		{[]string{"reset"}, "off sanitize-payload resetchannels -@all"},
		{[]string{"nopass", "skip-sanitize-payload"}, "off nopass skip-sanitize-payload resetchannels -@all"},
		{[]string{"~a*", "%R~b*", "%W~c*", "%RW~d*", "%R~a*", "&x", "&x"}, "off ~a* %R~b* %W~c* ~d* resetchannels &x -@all"},
		{[]string{"-@all", "+ping|x"}, "off resetchannels -@all +ping|x"},
		{[]string{"(+ping ~x)"}, "off resetchannels -@all (~x resetchannels -@all +ping)"},
	}
	for _, c := range cases {
		u := newTestUser(t, c.rules...)
		if got := u.Describe(); got != c.want {
			t.Errorf("%q:\n got %s\nwant %s", c.rules, got, c.want)
		}
	}
}

func TestACLSetErrors(t *testing.T) {
	const (
		unknown  = "Unknown command or category name in ACL"
		syntax   = "Syntax error"
		badHash  = "The password hash must be exactly 64 characters and contain only lowercase hexadecimal characters"
		noPass   = "The password you are trying to remove from the user does not exist"
		firstArg = "Allowing first-arg of a subcommand is not supported"
	)
	cases := []struct {
		op   string
		want string
	}{
		{"+nosuch", unknown},
		{"+@nosuch", unknown},
		{"-acl|nosuch", unknown},
		{"foo", syntax},
		{"+client|", syntax},
		{"+client|id|x", firstArg},
		{"!abc", badHash},
		{"<nope", noPass},
		{"%X~a", syntax},
		{"%", syntax},
		{"%~x", syntax},
	}
	for _, c := range cases {
		st := acl.NewStore(aclTable())
		want := "ERR Error in ACL SETUSER modifier '" + c.op + "': " + c.want
		if _, _, msg := st.SetUser("u", []string{c.op}); msg != want {
			t.Errorf("%q: got %v, want %v", c.op, msg, want)
		}
	}
	st := acl.NewStore(aclTable())
	if _, _, msg := st.SetUser("u", []string{"~*", "~x"}); !strings.Contains(msg, "'allkeys' flag") {
		t.Errorf("~x after ~*: %v", msg)
	}
	if _, _, msg := st.SetUser("u", []string{"&*", "&x"}); !strings.Contains(msg, "'allchannels' flag") {
		t.Errorf("&x after &*: %v", msg)
	}
}

// TestACLCheck: command, subcommand, first-arg and channel permissions, as
// ACLCheckAllUserCommandPerm decides them.
func TestACLCheck(t *testing.T) {
	id := func(name string) int {
		i, ok := aclLookup(name)
		if !ok {
			t.Fatalf("no command %s", name)
		}
		return i
	}
	u := newTestUser(t, "-@all", "+ping", "+sentinel|masters", "+shutdown|nosave", "&chan*")
	v := newTestUser(t, "+@all", "&chan*", "(+info &other)")
	cases := []struct {
		u        *acl.User
		cmd      string
		args     []string
		res      acl.Result
		deniedAt int
	}{
		{u, "ping", []string{"ping"}, acl.OK, 0},
		{u, "info", []string{"info"}, acl.DeniedCmd, 0},
		{u, "sentinel|masters", []string{"sentinel", "masters"}, acl.OK, 0},
		{u, "sentinel|master", []string{"sentinel", "master", "x"}, acl.DeniedCmd, 0},
		{u, "auth", []string{"auth", "x"}, acl.OK, 0},
		{u, "shutdown", []string{"shutdown", "NOSAVE"}, acl.OK, 0},
		{u, "shutdown", []string{"shutdown"}, acl.DeniedCmd, 0},
		{u, "shutdown", []string{"shutdown", "save"}, acl.DeniedCmd, 0},
		{v, "subscribe", []string{"subscribe", "chan1", "other"}, acl.DeniedChannel, 2},
		{v, "psubscribe", []string{"psubscribe", "chan*"}, acl.OK, 0},
		{v, "psubscribe", []string{"psubscribe", "chan1*"}, acl.DeniedChannel, 1},
		{v, "publish", []string{"publish", "chanx", "m"}, acl.OK, 0},
		{v, "publish", []string{"publish", "other", "m"}, acl.DeniedChannel, 1},
	}
	for _, c := range cases {
		cmd := strings.Split(c.cmd, "|")[0]
		noAuth := table.Get(cmd).Has(netshell.FlagNoAuth)
		res, at := c.u.Check(id(c.cmd), noAuth, toBytes(c.args), nil)
		if res != c.res || at != c.deniedAt {
			t.Errorf("%v: got %d at %d, want %d at %d", c.args, res, at, c.res, c.deniedAt)
		}
	}
}

// toBytes converts a command's arguments as the reader returns them.
func toBytes(args []string) [][]byte {
	out := make([][]byte, len(args))
	for i, a := range args {
		out[i] = []byte(a)
	}
	return out
}

// TestACLConfigUsers: user lines and requirepass at start-up, and their
// errors, as redis-sentinel 7.0.15 reports them.
func TestACLConfigUsers(t *testing.T) {
	load := func(body string) (*aclState, error) {
		t.Helper()
		path := filepath.Join(t.TempDir(), "sentinel.conf")
		if err := os.WriteFile(path, []byte("port 0\n"+body), 0o644); err != nil {
			t.Fatal(err)
		}
		st, err := LoadConfig(path, nil)
		if err != nil {
			return nil, err
		}
		return newACL(st.Server)
	}
	cases := []struct {
		body  string
		lines []string
		err   string
	}{
		{"user default on nopass ~* &* +@all\n", []string{"user default on nopass sanitize-payload ~* &* +@all"}, ""},
		{"requirepass foo\nuser alice on >pw +@all\n", []string{
			"user alice on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 resetchannels +@all",
			"user default on #2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae ~* &* +@all"}, ""},
		{"acl-pubsub-default allchannels\nuser bob on >b +@all\n", []string{
			"user bob on #3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d &* +@all",
			"user default on nopass ~* &* +@all"}, ""},
		{"user x on >a (+ping\n", nil, "at line 2\n>>> 'user x on >a (+ping'\nError in user declaration 'on': Unknown command or category name in ACL"},
		{"user x foo\n", nil, "Error in user declaration 'user': Syntax error"},
		{"user x on\nuser x off\n", nil, "at line 3\n>>> 'user x off'\nError in user declaration 'x': Duplicate user found. A user can only be defined once in config files"},
		{"user x on +nosuch\n", nil, "Error loading ACL rule '+nosuch' for the user named 'x': Unknown command or category name in ACL"},
	}
	for _, c := range cases {
		a, err := load(c.body)
		if c.err != "" {
			if err == nil || !strings.HasSuffix(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %s", c.body, err, c.err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%q: %v", c.body, err)
		}
		if got := a.lines(); strings.Join(got, "\n") != strings.Join(c.lines, "\n") {
			t.Errorf("%q:\n got %q\nwant %q", c.body, got, c.lines)
		}
	}
}

// TestLoopbackSentinelUser: sentinels whose default user is off
// authenticate to each other as the sentinel-user/sentinel-pass user the
// others define, with only the permissions a sentinel needs, and a client
// authenticates as its own user.
func TestLoopbackSentinelUser(t *testing.T) {
	if testing.Short() {
		t.Skip("loopback test: skipped with -short")
	}
	mport := redisServer(t)
	conf := fmt.Sprintf("user default off\n"+
		"user admin on >adminpw ~* &* +@all\n"+
		"user sentinel-user on >spass -@all +ping +publish +client|setname +sentinel|is-master-down-by-addr &__sentinel__:hello\n"+
		"sentinel sentinel-user sentinel-user\nsentinel sentinel-pass spass\n"+
		"sentinel monitor mym 127.0.0.1 %d 2\nsentinel down-after-milliseconds mym 1000\n", mport)
	var ports []int
	for i := 0; i < 3; i++ {
		p, _ := startSentinel(t, conf)
		ports = append(ports, p)
	}
	ctx := context.Background()
	var scs []*redis.SentinelClient
	var rcs []*redis.Client
	for _, p := range ports {
		opt := &redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(p), Username: "admin", Password: "adminpw"}
		sc := redis.NewSentinelClient(opt)
		rc := redis.NewClient(opt)
		t.Cleanup(func() { sc.Close(); rc.Close() })
		scs = append(scs, sc)
		rcs = append(rcs, rc)
	}
	// Each sentinel sees the two others as healthy sentinels (their pings
	// are answered: not s_down), and the others' links to it are clients
	// of the sentinel user.
	waitFor(t, 45*time.Second, "sentinels linked as sentinel-user", func() bool {
		for i, sc := range scs {
			sens, err := sc.Sentinels(ctx, "mym").Result()
			if err != nil || len(sens) != 2 {
				return false
			}
			for _, s := range sens {
				if s["flags"] != "sentinel" {
					return false
				}
			}
			list, err := rcs[i].ClientList(ctx).Result()
			if err != nil || strings.Count(list, "user=sentinel-user") < 2 {
				return false
			}
		}
		return true
	})
	for i, rc := range rcs {
		// No command of a sentinel's link was refused.
		n, err := rc.Do(ctx, "ACL", "LOG").Slice()
		if err != nil || len(n) != 0 {
			t.Errorf("sentinel %d: ACL LOG = %v, %v", i, n, err)
		}
	}
	// The default user is off: a client without credentials is refused.
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(ports[0])})
	defer c.Close()
	if err := c.Ping(ctx).Err(); err == nil || !strings.HasPrefix(err.Error(), "NOAUTH") {
		t.Errorf("PING without AUTH: %v", err)
	}
}

// TestACLKillsClients: ACL DELUSER closes the clients of the deleted user
// (the caller's after its reply), and ACL SETUSER closes the subscribers
// whose channels are revoked, as redis-sentinel 7.0.15 does.
func TestACLKillsClients(t *testing.T) {
	port, _ := startSentinel(t, "user zed on >z +@all &news*\n")
	dial := func() (net.Conn, *bufio.Reader) {
		c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c, bufio.NewReader(c)
	}
	do := func(c net.Conn, br *bufio.Reader, args ...string) string {
		t.Helper()
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write(resp.AppendCommandStrings(nil, args...)); err != nil {
			return "closed"
		}
		b, err := readFrame(br)
		if err != nil {
			return "closed"
		}
		return escape(b)
	}
	adm, ab := dial()
	z1, b1 := dial()
	z2, b2 := dial()
	z3, b3 := dial()
	for _, x := range []struct {
		c  net.Conn
		br *bufio.Reader
	}{{z1, b1}, {z2, b2}, {z3, b3}} {
		if got := do(x.c, x.br, "AUTH", "zed", "z"); got != `+OK\r\n` {
			t.Fatalf("AUTH zed: %s", got)
		}
	}
	do(z2, b2, "SUBSCRIBE", "news1")
	do(z3, b3, "PSUBSCRIBE", "news*")
	if got := do(adm, ab, "ACL", "SETUSER", "zed", "resetchannels", "&news1"); got != `+OK\r\n` {
		t.Fatalf("SETUSER: %s", got)
	}
	if got := do(z3, b3, "PING"); got != "closed" {
		t.Errorf("psubscriber of a revoked pattern: PING = %s, want closed", got)
	}
	if got := do(z2, b2, "PING"); got != `*2\r\n$4\r\npong\r\n$0\r\n\r\n` {
		t.Errorf("subscriber of an allowed channel: PING = %s", got)
	}
	if got := do(adm, ab, "ACL", "DELUSER", "zed"); got != `:1\r\n` {
		t.Fatalf("DELUSER: %s", got)
	}
	if got := do(z1, b1, "PING"); got != "closed" {
		t.Errorf("client of a deleted user: PING = %s, want closed", got)
	}
	do(adm, ab, "ACL", "SETUSER", "self", "on", "nopass", "+@all")
	s, sb := dial()
	do(s, sb, "AUTH", "self", "x")
	if got := do(s, sb, "ACL", "DELUSER", "self"); got != `:1\r\n` {
		t.Errorf("DELUSER self: %s", got)
	}
	if got := do(s, sb, "PING"); got != "closed" {
		t.Errorf("after deleting its own user: PING = %s, want closed", got)
	}
}

// TestACLRewrite: the sentinel's config rewrite writes every user as ACL
// LIST shows it, in place of the old user lines, as redis-sentinel 7.0.15
// rewrote the same file after the same commands.
func TestACLRewrite(t *testing.T) {
	port, d := startSentinel(t, fmt.Sprintf("requirepass foo\nuser alice on >pw +@all\nuser bob on >b -@all +ping\n"+
		"sentinel monitor mym 127.0.0.1 %d 2\n", freePort(t)))
	rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), Username: "alice", Password: "pw"})
	defer rc.Close()
	ctx := context.Background()
	for _, cmd := range [][]any{
		{"ACL", "SETUSER", "zoe", "on", ">z", "+@all", "-@dangerous"},
		{"ACL", "DELUSER", "bob"},
		{"SENTINEL", "SET", "mym", "quorum", "3"},
	} {
		if err := rc.Do(ctx, cmd...).Err(); err != nil {
			t.Fatalf("%v: %v", cmd, err)
		}
	}
	data, err := os.ReadFile(d.st.File)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(l, "user ") || strings.HasPrefix(l, "requirepass") || strings.HasPrefix(l, "#") {
			got = append(got, l)
		}
	}
	want := []string{
		`requirepass "foo"`,
		"user alice on #30c952fab122c3f9759f02a6d95c3758b246b4fee239957b2d4fee46e26170c4 resetchannels +@all",
		"user default on #2c26b46b68ffc68ff99b453c1d30413413422d706483bfa0f98a5e886266e7ae ~* &* +@all",
		"# Generated by CONFIG REWRITE",
		"user zoe on #594e519ae499312b29433b7dd8a97ff068defcba9755b6d5d00e84c524d67b06 resetchannels +@all -@dangerous",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("rewritten file:\n%s\nwant these lines:\n%s", data, strings.Join(want, "\n"))
	}
}

// TestACLTableCoversCommands: every command and subcommand of the table
// has an ACL id, so none escapes the permission check.
func TestACLTableCoversCommands(t *testing.T) {
	for _, c := range table.All {
		if _, ok := aclLookup(c.FullName()); !ok {
			t.Errorf("no ACL id for %s", c.FullName())
		}
	}
}

// vigilArity lists the commands whose arity Vigil's extensions widen
// (COMMAND still answers the recorded one): SENTINEL FAILOVER <name>
// [COORDINATED].
var vigilArity = map[string][2]int{"sentinel|failover": {3, -3}}

// vigilOnly lists Vigil's own subcommands, absent from the recording.
var vigilOnly = map[string]bool{"sentinel|timeline": true}

// TestTableMatchesRecording: the table's arity, flags and ACL categories
// are redis-sentinel 7.0.15's (the recorded COMMAND reply), but for
// vigilArity.
func TestTableMatchesRecording(t *testing.T) {
	recorded := map[string]resp.Value{}
	for _, e := range commandInfos {
		recorded[e.Elems[0].Str] = e
		for _, sub := range e.Elems[9].Elems {
			recorded[sub.Elems[0].Str] = sub
		}
	}
	set := func(vs []resp.Value, trim string) string {
		var out []string
		for _, v := range vs {
			out = append(out, strings.TrimPrefix(v.Str, trim))
		}
		slices.Sort(out)
		return strings.Join(out, ",")
	}
	for _, c := range table.All {
		e, ok := recorded[c.FullName()]
		if !ok && vigilOnly[c.FullName()] {
			continue
		}
		if !ok {
			t.Errorf("%s is not in the recording", c.FullName())
			continue
		}
		flags := slices.Clone(c.Flags.Names())
		slices.Sort(flags)
		cats := slices.Clone(c.ACL)
		slices.Sort(cats)
		arity := c.Arity
		if v, ok := vigilArity[c.FullName()]; ok && v[1] == arity {
			arity = v[0]
		}
		if int(e.Elems[1].Int) != arity || set(e.Elems[2].Elems, "") != strings.Join(flags, ",") ||
			set(e.Elems[6].Elems, "@") != strings.Join(cats, ",") {
			t.Errorf("%s: arity %d flags %v acl %v, recorded %d %s %s", c.FullName(), c.Arity, flags, cats,
				e.Elems[1].Int, set(e.Elems[2].Elems, ""), set(e.Elems[6].Elems, "@"))
		}
	}
}

// TestACLDifferential runs random ACL SETUSER rule lists on Debian's
// redis-sentinel 7.0.15 and on the daemon and compares the SETUSER
// replies, GETUSER (single-command rules as a set: Redis orders them by
// its command dict, seeded per run) and ACL DRYRUN of a set of commands.
func TestACLDifferential(t *testing.T) {
	if testing.Short() {
		t.Skip("differential test: skipped with -short")
	}
	bin, err := exec.LookPath("redis-sentinel")
	if err != nil {
		t.Skip("redis-sentinel not installed")
	}
	body := "user alice on >pw +@all ~* &*\nsentinel monitor mym 127.0.0.1 1 2\n"
	rport := freePort(t)
	path := filepath.Join(t.TempDir(), "sentinel.conf")
	if err := os.WriteFile(path, []byte(fmt.Sprintf("port %d\nbind 127.0.0.1\n%s", rport, body)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, path)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	vport, _ := startSentinel(t, body)
	ctx := context.Background()
	client := func(port int) *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port), Username: "alice", Password: "pw",
			Protocol: 2, MaxRetries: -1})
		t.Cleanup(func() { c.Close() })
		return c
	}
	real, ours := client(rport), client(vport)
	waitFor(t, 10*time.Second, "redis-sentinel up", func() bool { return real.Ping(ctx).Err() == nil })
	do := func(c *redis.Client, args ...any) string {
		v, err := c.Do(ctx, args...).Result()
		if err != nil {
			return "error: " + err.Error()
		}
		if a, ok := v.([]any); ok && len(a) == 12 && a[4] == "commands" {
			// GETUSER: the rules as a set.
			f := strings.Fields(a[5].(string))
			slices.Sort(f)
			a[5] = f
			for _, s := range a[11].([]any) {
				if sa, ok := s.([]any); ok && len(sa) == 6 {
					f := strings.Fields(sa[1].(string))
					slices.Sort(f)
					sa[1] = f
				}
			}
		}
		return fmt.Sprint(v)
	}
	cats := []string{"keyspace", "read", "write", "pubsub", "admin", "fast", "slow", "dangerous", "connection", "blocking", "all", "nosuch"}
	cmds := []string{"ping", "info", "role", "shutdown", "publish", "subscribe", "psubscribe", "auth", "hello", "command", "acl",
		"client", "sentinel", "acl|cat", "acl|whoami", "acl|setuser", "client|id", "client|list", "sentinel|masters",
		"sentinel|master", "sentinel|set", "command|info", "nosuch", "ping|x", "shutdown|nosave", "client|id|x", "sentinel|"}
	other := []string{"allcommands", "nocommands", "on", "off", "nopass", "resetpass", "reset", "&ch*", "&x", "allchannels",
		"resetchannels", "~k*", "%R~r", "%W~w", "%", "allkeys", "resetkeys", ">pw", "<pw", "sanitize-payload", "clearselectors",
		"(+ping ~x)", "(+@admin &y)"}
	tests := [][]any{{"ping"}, {"info"}, {"role"}, {"sentinel", "masters"}, {"sentinel", "master", "m"}, {"client", "id"},
		{"client", "list"}, {"acl", "whoami"}, {"acl", "setuser", "x"}, {"command"}, {"command", "info"},
		{"publish", "ch1", "x"}, {"publish", "y", "x"}, {"subscribe", "ch2"}, {"psubscribe", "ch*"}, {"shutdown", "nosave"},
		{"shutdown"}, {"hello"}}
	rnd := rand.New(rand.NewSource(7))
	for i := 0; i < 150; i++ {
		var ops []any
		for n := 1 + rnd.Intn(6); n > 0; n-- {
			switch r := rnd.Float64(); {
			case r < 0.25:
				ops = append(ops, []string{"+@", "-@"}[rnd.Intn(2)]+cats[rnd.Intn(len(cats))])
			case r < 0.6:
				ops = append(ops, []string{"+", "-"}[rnd.Intn(2)]+cmds[rnd.Intn(len(cmds))])
			default:
				ops = append(ops, other[rnd.Intn(len(other))])
			}
		}
		name := "f" + strconv.Itoa(i)
		args := append([]any{"ACL", "SETUSER", name}, ops...)
		if r, o := do(real, args...), do(ours, args...); r != o {
			t.Errorf("SETUSER %v: redis-sentinel %s, vigil %s", ops, r, o)
			continue
		}
		if r, o := do(real, "ACL", "GETUSER", name), do(ours, "ACL", "GETUSER", name); r != o {
			t.Errorf("GETUSER after %v:\nredis-sentinel %s\nvigil          %s", ops, r, o)
		}
		for _, tc := range tests {
			args := append([]any{"ACL", "DRYRUN", name}, tc...)
			if r, o := do(real, args...), do(ours, args...); r != o {
				t.Errorf("DRYRUN %v after %v: redis-sentinel %s, vigil %s", tc, ops, r, o)
			}
		}
		do(real, "ACL", "DELUSER", name)
		do(ours, "ACL", "DELUSER", name)
	}
}

// TestContainerErrorsBeforeAuth: an unknown subcommand or a wrong number of
// arguments is answered before NOAUTH, as processCommand does (replies of
// redis-sentinel 7.0.15 with requirepass); COMMAND's subcommands included,
// now that they are rows of the table.
func TestContainerErrorsBeforeAuth(t *testing.T) {
	port, _ := startSentinel(t, "requirepass pw\n")
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	for _, tc := range []struct{ cmd, want string }{
		{"COMMAND foo", `-ERR unknown subcommand 'foo'. Try COMMAND HELP.\r\n`},
		{"COMMAND count x", `-ERR wrong number of arguments for 'command|count' command\r\n`},
		{"COMMAND getkeys", `-ERR wrong number of arguments for 'command|getkeys' command\r\n`},
		{"COMMAND", `-NOAUTH Authentication required.\r\n`},
		{"COMMAND COUNT", `-NOAUTH Authentication required.\r\n`},
		{"AUTH pw", `+OK\r\n`},
		{"ACL DRYRUN default COMMAND foo", `-ERR Command 'COMMAND' not found\r\n`},
		{"ACL DRYRUN default COMMAND count x", `-ERR wrong number of arguments for 'command|count' command\r\n`},
		{"ACL DRYRUN default COMMAND count", `+OK\r\n`},
		{"CLIENT LIST ID x", `-ERR Invalid client ID\r\n`},
		{"CLIENT KILL ID 0 x", `-ERR client-id should be greater than 0\r\n`},
		{"CLIENT PAUSE 10 foo", `-ERR CLIENT PAUSE mode must be WRITE or ALL\r\n`},
		{"CLIENT UNBLOCK x foo", `-ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR\r\n`},
		{"CLIENT CACHING yes", `-ERR CLIENT CACHING can be called only when the client is in tracking mode with OPTIN or OPTOUT mode enabled\r\n`},
	} {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write(resp.AppendCommandStrings(nil, strings.Fields(tc.cmd)...)); err != nil {
			t.Fatal(err)
		}
		b, err := readFrame(br)
		if err != nil {
			t.Fatalf("%s: %v", tc.cmd, err)
		}
		if got := escape(b); got != tc.want {
			t.Errorf("%s: %s, want %s", tc.cmd, got, tc.want)
		}
	}
}

// TestSubscribeUnderReplyOff: SUBSCRIBE's confirmations are pushes, sent
// whatever CLIENT REPLY says (redis-sentinel 7.0.15's bytes for CLIENT
// REPLY OFF, SUBSCRIBE a b, PING, UNSUBSCRIBE a in one write: PING's
// reply is dropped).
func TestSubscribeUnderReplyOff(t *testing.T) {
	port, _ := startSentinel(t, "")
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write([]byte("CLIENT REPLY OFF\r\nSUBSCRIBE a b\r\nPING\r\nUNSUBSCRIBE a\r\n")); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(c)
	var got []string
	for i := 0; i < 3; i++ {
		b, err := readFrame(br)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, escape(b))
	}
	want := []string{`*3\r\n$9\r\nsubscribe\r\n$1\r\na\r\n:1\r\n`, `*3\r\n$9\r\nsubscribe\r\n$1\r\nb\r\n:2\r\n`, `*3\r\n$11\r\nunsubscribe\r\n$1\r\na\r\n:1\r\n`}
	if !slices.Equal(got, want) {
		t.Fatalf("replies %q, want %q", got, want)
	}
}
