package server

import (
	"regexp"
	"testing"
)

// TestMonitorScriptsVsRedis is introspection.tcl's MONITOR cases on Vigil
// and redis-server 7.0.15: EVAL, EVALSHA and FCALL (CMD_SKIP_MONITOR)
// feed the monitors themselves, before the script runs, so the script's
// commands follow them, shown with "lua" for the client; MIGRATE's AUTH
// and AUTH2 credentials show as "(redacted)". Vigil fed neither EVAL nor
// FCALL, showed "?:0" for the script's commands and MIGRATE's password.
// Each line is compared without its timestamp and peer address.
func TestMonitorScriptsVsRedis(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t)
	redis := monitorScenario(t, dialRedis)
	vigil := monitorScenario(t, func() *rconn { return l.dial(t) })
	if len(redis) != len(vigil) {
		t.Fatalf("monitor lines:\nredis %q\nvigil %q", redis, vigil)
	}
	for i := range redis {
		if redis[i] != vigil[i] {
			t.Errorf("line %d: vigil %s, redis %s", i, vigil[i], redis[i])
		}
	}
	if want := `[0 lua] "set" "foo" "bar"`; len(redis) < 2 || redis[1] != want {
		t.Errorf("redis's line 1 %q, want %s", redis, want)
	}
}

var monitorPrefix = regexp.MustCompile(`^\+\d+\.\d{6} \[(\d+) (lua|unix:[^\]]*|[^\]]*)\]`)

func monitorScenario(t *testing.T, dial func() *rconn) []string {
	t.Helper()
	m, c := dial(), dial()
	if got := m.do("MONITOR"); got != "+OK" {
		t.Fatalf("MONITOR: %s", got)
	}
	cmds := [][]string{
		{"EVAL", "redis.call('set',KEYS[1],ARGV[1])", "1", "foo", "bar"},
		{"EVALSHA", "d8f2fad9f8e86a53d2a6ebd960b33c4972cacc37", "0"}, // not loaded: fed all the same
		{"SCRIPT", "LOAD", "return redis.call('get', 'foo')"},
		{"EVALSHA_RO", "a6a6a5e5d3cd2b3a7bc9d6da12b1d0f3e4e3d4a1", "0"},
		{"EVAL", "return 1", "-1"}, // refused by the script: fed first
		{"FUNCTION", "LOAD", "REPLACE", "#!lua name=test\nredis.register_function('test', function() return redis.call('set', 'foo', 'bar') end)"},
		{"FCALL", "test", "0"},
		{"FCALL", "nosuch", "0"},
		{"MULTI"}, {"EVAL", "return redis.call('incr', 'n')", "0"}, {"EXEC"},
		{"MIGRATE", "127.0.0.1", "1", "key", "9", "5000", "AUTH", "secret"},
		{"MIGRATE", "127.0.0.1", "1", "key", "9", "5000", "AUTH2", "user", "secret"},
		{"MIGRATE", "127.0.0.1", "1", "key", "9", "5000", "COPY", "AUTH2", "user", "secret", "REPLACE"},
		{"PING"},
	}
	for _, cmd := range cmds {
		c.do(cmd...)
	}
	var out []string
	for {
		line := m.read()
		sm := monitorPrefix.FindStringSubmatch(line)
		if sm == nil {
			t.Fatalf("monitor line %q", line)
		}
		who := "client"
		if sm[2] == "lua" {
			who = "lua"
		}
		norm := "[" + sm[1] + " " + who + "]" + line[len(sm[0]):]
		if norm == `[0 client] "ping"` || norm == `[0 client] "PING"` {
			return out
		}
		out = append(out, norm)
	}
}
