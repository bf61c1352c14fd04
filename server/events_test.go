package server

import (
	"strconv"
	"strings"
	"testing"
)

// eventCase is a command with its dirty increment and keyevents.
type eventCase struct {
	cmd    []string
	dirty  int
	events []string
}

// eventRun runs cases on a server where c runs commands, sub is
// subscribed to the key events and the channel "marker", and pub
// publishes on "marker" after each command to close its events.
func eventRun(t *testing.T, cases []eventCase, c, sub, pub *rconn) {
	t.Helper()
	if got := sub.do("PSUBSCRIBE", "__keyevent@*__:*"); !strings.HasPrefix(got, `["psubscribe"`) {
		t.Fatalf("PSUBSCRIBE: %s", got)
	}
	if got := sub.do("SUBSCRIBE", "marker"); !strings.HasPrefix(got, `["subscribe"`) {
		t.Fatalf("SUBSCRIBE: %s", got)
	}
	dirty := func() int {
		info := c.do("INFO", "persistence")
		i := strings.Index(info, "rdb_changes_since_last_save:")
		if i < 0 {
			t.Fatalf("INFO persistence: %s", info)
		}
		n, _ := strconv.Atoi(strings.SplitN(info[i+len("rdb_changes_since_last_save:"):], `\r`, 2)[0])
		return n
	}
	for _, tc := range cases {
		before := dirty()
		c.do(tc.cmd...)
		if d := dirty() - before; d != tc.dirty {
			t.Errorf("%v: dirty +%d, want +%d", tc.cmd, d, tc.dirty)
		}
		pub.do("PUBLISH", "marker", "x")
		var events []string
		for {
			m := sub.read()
			if m == `["message", "marker", "x"]` {
				break
			}
			// ["pmessage", "__keyevent@*__:*", "__keyevent@0__:setbit", "k"]
			parts := strings.Split(strings.TrimSuffix(m, "]"), ", ")
			if len(parts) != 4 {
				t.Fatalf("unexpected message %s", m)
			}
			ev := strings.TrimPrefix(strings.Trim(parts[2], `"`), "__keyevent@0__:")
			events = append(events, ev+" "+strings.Trim(parts[3], `"`))
		}
		if strings.Join(events, ", ") != strings.Join(tc.events, ", ") {
			t.Errorf("%v: events %q, want %q", tc.cmd, events, tc.events)
		}
	}
}

// eventRunRedis runs cases on a live redis-server (keyspace events on, as
// the Vigil side's --notify-keyspace-events EAnm), the oracle of each
// type's event table.
func eventRunRedis(t *testing.T, cases []eventCase) {
	t.Helper()
	dial := startRedis(t)
	conn := func() *rconn {
		nc, br := dial(2)
		return &rconn{t: t, c: nc, br: br}
	}
	c := conn()
	if got := c.do("CONFIG", "SET", "notify-keyspace-events", "EAnm"); got != "+OK" {
		t.Fatal(got)
	}
	eventRun(t, cases, c, conn(), conn())
}
