package server

import (
	"bufio"
	"net"
	"regexp"
	"strings"
	"testing"
)

// quicklistFields are the DEBUG OBJECT fields of a list both servers print
// the same way.
var quicklistFields = regexp.MustCompile(`(serializedlength|ql_\w+):\S+`)

// listDiff is the pair the list differentials compare: Vigil's test server
// (DEBUG enabled) and redis-server 7.0.15, the commands sent so far kept
// for a failure's report.
type listDiff struct {
	t       *testing.T
	ts      *testServer
	c       *Client
	rc      net.Conn
	rbr     *bufio.Reader
	history []string
}

func newListDiff(t *testing.T) *listDiff {
	t.Helper()
	dial, _ := startRedisAOF(t)
	rc, rbr := dial(2)
	ts := newTestServer(t, "--enable-debug-command", "yes")
	return &listDiff{t: t, ts: ts, c: ts.client(), rc: rc, rbr: rbr}
}

// run sends args to redis-server, then to Vigil, and returns both replies
// (got: Vigil's), DEBUG OBJECT's reduced to quicklistFields.
func (d *listDiff) run(args ...string) (got, want string) {
	d.t.Helper()
	want = rawDo(d.t, d.rc, d.rbr, args...)
	got = d.ts.do(d.c, args...)
	d.history = append(d.history, shortCommand(args))
	if len(args) > 1 && args[0] == "DEBUG" && strings.EqualFold(args[1], "OBJECT") {
		got = strings.Join(quicklistFields.FindAllString(got, -1), " ")
		want = strings.Join(quicklistFields.FindAllString(want, -1), " ")
	}
	return got, want
}

// last is the last n commands sent, one a line.
func (d *listDiff) last(n int) string {
	return strings.Join(d.history[max(0, len(d.history)-n):], "\n")
}

// same runs args on both (run) and fails the test unless the replies are
// equal; it returns Vigil's.
func (d *listDiff) same(args ...string) string {
	d.t.Helper()
	got, want := d.run(args...)
	if got != want {
		d.t.Fatalf("%.80q:\n vigil %.300q\n redis %.300q\nlast commands:\n%s", args, got, want, d.last(12))
	}
	return got
}
