package configs

import (
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestGet(t *testing.T) {
	c := Default()
	tests := []struct {
		patterns []string
		want     []string
	}{
		{[]string{"port"}, []string{"port", "6379"}},
		{[]string{"PORT"}, []string{"PORT", "6379"}}, // exact names are echoed as given
		{[]string{"port", "port"}, []string{"port", "6379"}},
		{[]string{"P*T"}, []string{"port", "6379"}},
		{[]string{"nosuch"}, nil},
		{[]string{"nosuch*"}, nil},
		{[]string{"key-load-delay"}, []string{"key-load-delay", "0"}}, // hidden: exact name only
		{[]string{"*load-delay*"}, nil},
		{[]string{"*priority*"}, []string{"replica-priority", "100", "slave-priority", "100"}},
		{[]string{"slaveof"}, []string{"slaveof", ""}},
		{[]string{"save", "bind"}, []string{"save", "3600 1 300 100 60 10000", "bind", "* -::*"}},
		{[]string{"client-output-buffer-limit"}, []string{"client-output-buffer-limit", "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"}},
		{[]string{"proto-max-bulk-len", "appendonly", "loglevel", "unixsocketperm", "notify-keyspace-events"},
			[]string{"proto-max-bulk-len", "536870912", "appendonly", "no", "loglevel", "notice", "unixsocketperm", "0", "notify-keyspace-events", ""}},
		{[]string{"maxmemory*", "maxmemory"}, []string{
			"maxmemory-policy", "noeviction", "maxmemory-samples", "5", "maxmemory-eviction-tenacity", "10",
			"maxmemory", "0", "maxmemory-clients", "0",
		}},
		{[]string{"requirepass", "masterauth"}, []string{"requirepass", "", "masterauth", ""}},
	}
	for _, tt := range tests {
		if got := c.Get(tt.patterns...); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("Get(%q) = %q, want %q", tt.patterns, got, tt.want)
		}
	}
	// CONFIG GET * of redis-server 7.0.15 lists 192 names (aliases included).
	if n := len(c.Get("*")) / 2; n != 192 {
		t.Errorf("Get(*) lists %d directives, want 192", n)
	}
}

// TestSet checks CONFIG SET against the replies of redis-server 7.0.15 to the
// same commands. Each case starts from Default().
func TestSet(t *testing.T) {
	setErr := func(arg, reason string) string {
		return "ERR CONFIG SET failed (possibly related to argument '" + arg + "') - " + reason
	}
	tests := []struct {
		pairs [][2]string
		err   string            // "" = OK
		get   map[string]string // CONFIG GET afterwards
	}{
		{[][2]string{{"port", "abc"}}, setErr("port", "argument couldn't be parsed into an integer"), map[string]string{"port": "6379"}},
		{[][2]string{{"foo", "1"}}, "ERR Unknown option or number of arguments for CONFIG SET - 'foo'", nil},
		{[][2]string{{"daemonize", "yes"}}, setErr("daemonize", "can't set immutable config"), nil},
		{[][2]string{{"Daemonize", "yes"}}, setErr("Daemonize", "can't set immutable config"), nil},
		{[][2]string{{"PORT", "1"}, {"port", "2"}}, setErr("port", "duplicate parameter"), map[string]string{"port": "6379"}},
		{[][2]string{{"slave-priority", "5"}, {"replica-priority", "6"}}, "", map[string]string{"slave-priority": "6"}},
		{[][2]string{{"foo", "1"}, {"daemonize", "yes"}}, "ERR Unknown option or number of arguments for CONFIG SET - 'foo'", nil},
		{[][2]string{{"daemonize", "yes"}, {"foo", "1"}}, setErr("daemonize", "can't set immutable config"), nil},
		{[][2]string{{"maxmemory", "10"}, {"hz", "abc"}}, setErr("hz", "argument couldn't be parsed into an integer"), map[string]string{"maxmemory": "0"}},
		{[][2]string{{"slave-priority", "abc"}}, setErr("slave-priority", "argument couldn't be parsed into an integer"), nil},
		{[][2]string{{"maxmemory", "mb"}}, "", map[string]string{"maxmemory": "0"}},
		{[][2]string{{"maxmemory", "1k"}}, "", map[string]string{"maxmemory": "1000"}},
		{[][2]string{{"maxmemory", "5B"}}, "", map[string]string{"maxmemory": "5"}},
		{[][2]string{{"maxmemory", " 5"}}, setErr("maxmemory", "argument must be a memory value"), nil},
		{[][2]string{{"maxmemory", "18446744073709551615kb"}}, "", map[string]string{"maxmemory": "18446744073709550592"}},
		{[][2]string{{"port", " 5"}}, setErr("port", "argument couldn't be parsed into an integer"), nil},
		{[][2]string{{"replica-announce-port", "5x"}}, setErr("replica-announce-port", "argument couldn't be parsed into an integer"), nil},
		{[][2]string{{"save", "1 2  3 4"}}, setErr("save", "Invalid save parameters"), map[string]string{"save": "3600 1 300 100 60 10000"}},
		{[][2]string{{"save", "1 2 3 4"}}, "", map[string]string{"save": "1 2 3 4"}},
		{[][2]string{{"save", ""}}, "", map[string]string{"save": ""}},
		{[][2]string{{"save", " 5 1"}}, setErr("save", "Invalid save parameters"), nil},
		{[][2]string{{"save", "+5 -0"}}, "", map[string]string{"save": "5 0"}},
		{[][2]string{{"save", "5 4294967297"}}, "", map[string]string{"save": "5 1"}},
		{[][2]string{{"bind", ""}}, "", map[string]string{"bind": ""}},
		{[][2]string{{"bind", "127.0.0.1 -::1"}}, "", map[string]string{"bind": "127.0.0.1 -::1"}},
		{[][2]string{{"bind", "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17"}}, setErr("bind", "Too many bind addresses specified."), nil},
		{[][2]string{{"hz", "1000"}}, "", map[string]string{"hz": "500"}},
		{[][2]string{{"hz", "0"}}, "", map[string]string{"hz": "1"}},
		{[][2]string{{"loglevel", "WARNING"}}, "", map[string]string{"loglevel": "warning"}},
		{[][2]string{{"SLAVE-priority", "7"}}, "", map[string]string{"slave-priority": "7", "replica-priority": "7"}},
		{[][2]string{{"notify-keyspace-events", "gAKn"}}, "", map[string]string{"notify-keyspace-events": "AK"}},
		{[][2]string{{"notify-keyspace-events", "$lshzxetdg"}}, "", map[string]string{"notify-keyspace-events": "A"}},
		{[][2]string{{"notify-keyspace-events", "Em"}}, "", map[string]string{"notify-keyspace-events": "Em"}},
		{[][2]string{{"dir", "/tmp"}}, setErr("dir", "can't set protected config"), nil},
		{[][2]string{{"dbfilename", "a/b"}}, setErr("dbfilename", "can't set protected config"), nil},
		{[][2]string{{"maxmemory-clients", "5%"}}, "", map[string]string{"maxmemory-clients": "5%"}},
		{[][2]string{{"maxmemory-clients", "0%"}}, "", map[string]string{"maxmemory-clients": "0"}},
		{[][2]string{{"maxmemory-clients", "-1"}}, setErr("maxmemory-clients", "argument must be a memory or percent value"), nil},
		{[][2]string{{"unixsocketperm", "700"}}, setErr("unixsocketperm", "can't set immutable config"), nil},
		{[][2]string{{"socket-mark-id", "1"}}, setErr("socket-mark-id", "can't set immutable config"), nil},
		{[][2]string{{"enable-debug-command", "yes"}}, setErr("enable-debug-command", "can't set immutable config"), nil},
		{[][2]string{{"replicaof", "127.0.0.1 6380"}}, setErr("replicaof", "can't set immutable config"), nil},
		{[][2]string{{"oom-score-adj-values", "1 2"}}, setErr("oom-score-adj-values", "wrong number of arguments"), nil},
		{[][2]string{{"oom-score-adj-values", "1 2 a"}}, setErr("oom-score-adj-values", "Invalid oom-score-adj-values, elements must be between -2000 and 2000."), nil},
		{[][2]string{{"oom-score-adj-values", "1  2"}}, "", map[string]string{"oom-score-adj-values": "1 0 2"}},
		{[][2]string{{"oom-score-adj", "relative"}}, "", map[string]string{"oom-score-adj": "yes"}},
		{[][2]string{{"appendfsync", "bad"}}, setErr("appendfsync", "argument(s) must be one of the following: everysec, always, no"), nil},
		{[][2]string{{"repl-diskless-load", "bad"}}, setErr("repl-diskless-load", "argument(s) must be one of the following: disabled, on-empty-db, swapdb"), nil},
		{[][2]string{{"appendonly", "maybe"}}, setErr("appendonly", "argument must be 'yes' or 'no'"), nil},
		{[][2]string{{"appendonly", "YES"}}, "", map[string]string{"appendonly": "yes"}},
		{[][2]string{{"shutdown-on-sigint", "force now nosave"}}, "", map[string]string{"shutdown-on-sigint": "nosave now force"}},
		{[][2]string{{"shutdown-on-sigint", "save nosave"}}, setErr("shutdown-on-sigint", "shutdown options SAVE and NOSAVE can't be used simultaneously"), nil},
		{[][2]string{{"shutdown-on-sigint", ""}}, setErr("shutdown-on-sigint", "argument(s) must be one of the following: default, save, nosave, now, force"), nil},
		{[][2]string{{"shutdown-on-sigint", "default save"}}, "", map[string]string{"shutdown-on-sigint": "save"}},
		{[][2]string{{"latency-tracking-info-percentiles", "99.99 50.0 0 100 1e2"}}, "", map[string]string{"latency-tracking-info-percentiles": "99.99 50 0 100 100"}},
		{[][2]string{{"latency-tracking-info-percentiles", "abc"}}, setErr("latency-tracking-info-percentiles", "Invalid latency-tracking-info-percentiles parameters"), map[string]string{"latency-tracking-info-percentiles": "50 99 99.9"}},
		{[][2]string{{"latency-tracking-info-percentiles", "0x1p2 inf"}}, setErr("latency-tracking-info-percentiles", "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"), nil},
		{[][2]string{{"latency-tracking-info-percentiles", ""}}, "", map[string]string{"latency-tracking-info-percentiles": ""}},
		{[][2]string{{"client-output-buffer-limit", "pubsub 1mb 2mb 3"}}, "", map[string]string{"client-output-buffer-limit": "normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 2097152 3"}},
		{[][2]string{{"client-output-buffer-limit", "replica 1k 2kb 3 slave 5 6 7"}}, "", map[string]string{"client-output-buffer-limit": "normal 0 0 0 slave 5 6 7 pubsub 33554432 8388608 60"}},
		{[][2]string{{"client-output-buffer-limit", "normal 1 2 4294967297"}}, "", map[string]string{"client-output-buffer-limit": "normal 1 2 1 slave 268435456 67108864 60 pubsub 33554432 8388608 60"}},
		{[][2]string{{"cluster-announce-hostname", "a_b"}}, setErr("cluster-announce-hostname", "Hostnames may only contain alphanumeric characters, hyphens or dots"), nil},
		{[][2]string{{"proc-title-template", "{x}"}}, setErr("proc-title-template", "template format is invalid or contains unknown variables"), nil},
		{[][2]string{{"proc-title-template", "{title}"}}, setErr("proc-title-template", "template format is invalid or contains unknown variables"), nil},
		{[][2]string{{"proc-title-template", "redis {port}"}}, "", nil},
		{[][2]string{{"proc-title-template", "{{x}"}}, "", nil},
		{[][2]string{{"proc-title-template", "a}"}}, "", nil},
		{[][2]string{{"proc-title-template", "{unixsocket}"}}, setErr("proc-title-template", "template format is invalid or contains unknown variables"), nil},
		{[][2]string{{"proc-title-template", ""}}, setErr("proc-title-template", "template format is invalid or contains unknown variables"), nil},
		{[][2]string{{"activedefrag", "yes"}}, setErr("activedefrag", "Active defragmentation cannot be enabled: it requires a Redis server compiled with a modified Jemalloc like the one shipped by default with the Redis source distribution"), nil},
		{[][2]string{{"requirepass", "s3cret"}, {"masterauth", "x y"}}, "", map[string]string{"requirepass": "s3cret", "masterauth": "x y"}},
		{[][2]string{{"lua-time-limit", "100"}}, "", map[string]string{"busy-reply-threshold": "100"}},
		{[][2]string{{"slowlog-log-slower-than", "-1"}}, "", map[string]string{"slowlog-log-slower-than": "-1"}},
		{[][2]string{{"slowlog-log-slower-than", "-2"}}, setErr("slowlog-log-slower-than", "argument must be between -1 and 9223372036854775807 inclusive"), nil},
		{[][2]string{{"loglevel", "nothing"}}, "", map[string]string{"loglevel": "nothing"}}, // Redis 7.2's level, accepted by Vigil
	}
	for _, tt := range tests {
		c := Default()
		err := c.Set(tt.pairs...)
		if tt.err == "" && err != nil || tt.err != "" && (err == nil || err.Error() != tt.err) {
			t.Errorf("Set(%q) = %v\nwant %q", tt.pairs, err, tt.err)
			continue
		}
		for name, want := range tt.get {
			if got, _ := c.Value(name); got != want {
				t.Errorf("after Set(%q): %s = %q, want %q", tt.pairs, name, got, want)
			}
		}
	}
}

func TestSetProtectedAndLoading(t *testing.T) {
	dir := t.TempDir()
	real, _ := filepath.EvalSymlinks(dir)
	c := Default()
	c.EnableProtectedConfigs = "local"
	if err := c.Set([2]string{"dir", dir}); err == nil || !strings.Contains(err.Error(), "can't set protected config") {
		t.Errorf("remote client set dir: %v", err)
	}
	if err := c.SetWith(SetOptions{LocalClient: true}, [2]string{"dir", dir}); err != nil || c.Dir != real {
		t.Errorf("local client set dir: %v, Dir %q", err, c.Dir)
	}
	c.EnableProtectedConfigs = "yes"
	if err := c.Set([2]string{"dir", "/dev/null"}); err == nil || err.Error() != "ERR CONFIG SET failed (possibly related to argument 'dir') - Not a directory" {
		t.Errorf("dir to a file: %v", err)
	}
	if err := c.Set([2]string{"dir", "/"}, [2]string{"dir", "."}); err == nil || !strings.Contains(err.Error(), "duplicate parameter") {
		t.Errorf("dir twice: %v", err)
	}
	if err := c.Set([2]string{"dir", "/"}); err != nil || c.Dir != "/" {
		t.Errorf("dir /: %v %q", err, c.Dir)
	}
	if err := c.Set([2]string{"dir", "tmp"}); err != nil || c.Dir != mustEval(t, "/tmp") {
		t.Errorf("relative dir: %v %q", err, c.Dir)
	}
	if err := c.Set([2]string{"dbfilename", "a/b"}); err == nil || err.Error() != "ERR CONFIG SET failed (possibly related to argument 'dbfilename') - dbfilename can't be a path, just a filename" {
		t.Errorf("dbfilename path: %v", err)
	}

	err := c.SetWith(SetOptions{Loading: true}, [2]string{"maxmemory", "1mb"}, [2]string{"appendonly", "yes"})
	if err == nil || err.Error() != "LOADING Redis is loading the dataset in memory" || c.Maxmemory != 0 {
		t.Errorf("while loading: %v, maxmemory %d", err, c.Maxmemory)
	}
	if err := c.SetWith(SetOptions{Loading: true}, [2]string{"maxmemory", "1mb"}); err != nil || c.Maxmemory != 1<<20 {
		t.Errorf("maxmemory while loading: %v", err)
	}
}

func mustEval(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestSetAtomic: a CONFIG SET with one bad value changes nothing.
func TestSetAtomic(t *testing.T) {
	c := Default()
	var applied []string
	c.OnSet = func(name string) error { applied = append(applied, name); return nil }
	before := c.Get("*")
	err := c.Set([2]string{"maxmemory", "10mb"}, [2]string{"port", "6380"}, [2]string{"save", ""},
		[2]string{"bind", "10.0.0.1"}, [2]string{"hz", "abc"}, [2]string{"loglevel", "debug"})
	if err == nil || !strings.Contains(err.Error(), "'hz'") {
		t.Fatalf("Set = %v", err)
	}
	if after := c.Get("*"); !reflect.DeepEqual(before, after) {
		t.Error("a failed CONFIG SET changed the configuration")
	}
	if applied != nil {
		t.Errorf("OnSet called for %v on a failed CONFIG SET", applied)
	}
	if c.Maxmemory != 0 || c.Port != 6379 || len(c.Save) != 3 || c.Bind[0] != "*" {
		t.Error("typed fields changed")
	}
}

// TestSetOnSet: OnSet sees changed directives only, by primary name; its
// error undoes the whole command and re-applies the old values.
func TestSetOnSet(t *testing.T) {
	c := Default()
	var applied []string
	c.OnSet = func(name string) error {
		applied = append(applied, name+"="+c.Get(name)[1])
		if name == "port" && c.Port == 1 {
			return errors.New("Unable to listen on this port. Check server logs.")
		}
		return nil
	}
	if err := c.Set([2]string{"slave-priority", "5"}, [2]string{"maxmemory", "0"}, [2]string{"port", "6380"}); err != nil {
		t.Fatal(err)
	}
	if want := []string{"replica-priority=5", "port=6380"}; !reflect.DeepEqual(applied, want) {
		t.Errorf("OnSet calls %v, want %v", applied, want)
	}

	applied = nil
	err := c.Set([2]string{"timeout", "30"}, [2]string{"port", "1"}, [2]string{"hz", "20"})
	want := "ERR CONFIG SET failed (possibly related to argument 'port') - Unable to listen on this port. Check server logs."
	if err == nil || err.Error() != want {
		t.Fatalf("Set = %v, want %q", err, want)
	}
	if c.Timeout != 0 || c.Port != 6380 || c.Hz != 10 {
		t.Errorf("not restored: timeout %d port %d hz %d", c.Timeout, c.Port, c.Hz)
	}
	// Applied timeout, failed port; then both re-applied with the old values.
	if want := []string{"timeout=30", "port=1", "timeout=0", "port=6380"}; !reflect.DeepEqual(applied, want) {
		t.Errorf("OnSet calls %v, want %v", applied, want)
	}
	if c.OnSet == nil {
		t.Error("OnSet lost by the restore")
	}
}

// FuzzConfigSet feeds CONFIG SET values a client could send: Set must never
// panic, a failed Set must change nothing, and a value CONFIG GET prints
// must be accepted back unchanged (the restore path depends on it).
func FuzzConfigSet(f *testing.F) {
	for _, s := range []string{"", "0", "-1", "yes", "1gb", "5%", "18446744073709551615kb", "1 2 3", "a b  c", "\x00", "{title}", "normal 1 2 3", "KEA"} {
		f.Add(uint8(0), s)
		f.Add(uint8(120), s)
	}
	f.Fuzz(func(t *testing.T, idx uint8, value string) {
		d := table[int(idx)%len(table)]
		c := Default()
		before := c.Get("*")
		if err := c.Set([2]string{d.Name, value}); err != nil {
			if after := c.Get("*"); !reflect.DeepEqual(before, after) {
				t.Fatalf("failed Set(%s, %q) changed the configuration", d.Name, value)
			}
			return
		}
		got, _ := c.Value(d.Name)
		if err := c.Set([2]string{d.Name, got}); err != nil {
			t.Fatalf("Set(%s, %q) ok, but its CONFIG GET value %q is refused: %v", d.Name, value, got, err)
		}
		if again, _ := c.Value(d.Name); again != got {
			t.Fatalf("Set(%s, %q): GET %q, set back gives %q", d.Name, value, got, again)
		}
	})
}
