package server

import (
	"bufio"
	"bytes"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/internal/testutil"
	"github.com/vigil-kv/vigil/server/aof"
)

// aofOracle is a redis-server 7.0.15 run with `appendonly yes appendfsync
// always`: its incremental AOF file is the byte-for-byte oracle of what
// Vigil's write path propagates (server.c call() -> feedAppendOnlyFile).
// Active expiry is off on it (DEBUG SET-ACTIVE-EXPIRE 0), so that keys
// are deleted, and their DELs propagated, only where Vigil's test server,
// which runs no cron, deletes them too: on access.
type aofOracle struct {
	dir string
}

// startRedisAOF starts the oracle and returns a dialer for it (as
// startRedis) and the oracle.
func startRedisAOF(t *testing.T) (func(proto int) (net.Conn, *bufio.Reader), *aofOracle) {
	t.Helper()
	r := testutil.StartRedis(t, testutil.RedisOptions{Args: []string{"--appendonly", "yes", "--appendfsync", "always",
		"--auto-aof-rewrite-percentage", "0", "--enable-debug-command", "yes"}})
	dial := redisDialer(t, r)
	c, br := dial(2)
	if got := rawDo(t, c, br, "DEBUG", "SET-ACTIVE-EXPIRE", "0"); got != "+OK\r\n" {
		t.Fatalf("DEBUG SET-ACTIVE-EXPIRE 0: %q", got)
	}
	return dial, &aofOracle{dir: r.Dir}
}

// incr returns the whole incremental AOF file.
func (o *aofOracle) incr(t *testing.T) []byte {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(o.dir, "appendonlydir", "*.incr.aof"))
	if len(files) != 1 {
		t.Fatalf("want one incremental AOF file in %s, found %v", o.dir, files)
	}
	b, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// aofMark is where a comparison starts in both streams.
type aofMark struct {
	redis int
	vigil int
	rec   *Recorder
	// file is an AOF writer (server/aof) fed by the same write path: the
	// file it writes must hold exactly the recorded stream.
	file *aofFileProp
}

// aofFileProp is an aof.Writer on a temporary incremental file, attached
// to the write path as the server attaches its own (persist_aof.go).
type aofFileProp struct {
	w    *aof.Writer
	path string
}

func (p *aofFileProp) Propagate(ops []Op) {
	for _, op := range ops {
		if op.Target&TargetAOF != 0 {
			p.w.Append(op.DB, op.Argv)
		}
	}
}

// begin attaches a Recorder to ts and synchronises both streams' selected
// database: FLUSHALL in db 0 on both, then the comparison starts after it.
func (o *aofOracle) begin(t *testing.T, ts *testServer, rc net.Conn, rbr *bufio.Reader, vc *Client) aofMark {
	t.Helper()
	rec := &Recorder{}
	path := filepath.Join(t.TempDir(), "appendonly.aof.1.incr.aof")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fp := &aofFileProp{w: aof.NewWriter(f, 0, aof.FsyncNo, nil), path: path}
	t.Cleanup(func() { fp.w.Close(time.Now()) })
	ts.s.AddPropagator(rec)
	ts.s.AddPropagator(fp)
	rawDo(t, rc, rbr, "FLUSHALL")
	ts.do(vc, "FLUSHALL")
	return aofMark{redis: len(o.incr(t)), vigil: len(rec.Bytes()), rec: rec, file: fp}
}

// check compares what both servers propagated since m, command by command,
// with absolute millisecond times (the argument after PXAT, PEXPIREAT's
// time) equal to within a minute: Vigil's test clock stands still while
// Redis's runs.
func (o *aofOracle) check(t *testing.T, ts *testServer, m aofMark, history []string) {
	t.Helper()
	want := parseAOF(t, o.incr(t)[m.redis:])
	ts.s.mu.Lock()
	got := parseAOF(t, m.rec.Bytes()[m.vigil:])
	recorded := append([]byte(nil), m.rec.Bytes()...)
	if err := m.file.w.Flush(time.Now(), true); err != nil {
		t.Fatal(err)
	}
	ts.s.mu.Unlock()
	if written, err := os.ReadFile(m.file.path); err != nil || !bytes.Equal(written, recorded) {
		t.Fatalf("the AOF file written by server/aof differs from the recorded stream (%v): %d vs %d bytes", err, len(written), len(recorded))
	}
	if len(want) == 0 {
		t.Fatal("the oracle's AOF recorded nothing: the comparison would be vacuous")
	}
	n := min(len(want), len(got))
	for i := 0; i < n; i++ {
		if !aofCommandEqual(want[i], got[i]) {
			t.Fatalf("propagated stream differs at command %d:\n redis: %s\n vigil: %s\nredis before/after:\n%s\nvigil before/after:\n%s\nlast commands:\n%s",
				i, fmtCmd(want[i]), fmtCmd(got[i]), around(want, i), around(got, i), strings.Join(history, "\n"))
		}
	}
	if len(want) != len(got) {
		t.Fatalf("propagated stream: redis has %d commands, vigil %d; first extra:\n redis tail:\n%s\n vigil tail:\n%s\nlast commands:\n%s",
			len(want), len(got), around(want, n), around(got, n), strings.Join(history, "\n"))
	}
}

func fmtCmd(c [][]byte) string {
	var q []string
	for _, a := range c {
		s := string(a)
		if len(s) > 40 {
			s = s[:40] + "..."
		}
		q = append(q, strconv.Quote(s))
	}
	return strings.Join(q, " ")
}

func around(cmds [][][]byte, i int) string {
	var b strings.Builder
	for j := max(0, i-4); j < min(len(cmds), i+3); j++ {
		mark := "  "
		if j == i {
			mark = "> "
		}
		fmt.Fprintf(&b, "%s%d: %s\n", mark, j, fmtCmd(cmds[j]))
	}
	return b.String()
}

// parseAOF splits an AOF byte stream into commands.
func parseAOF(t *testing.T, b []byte) [][][]byte {
	t.Helper()
	r := resp.NewReader(bytes.NewReader(b), resp.Limits{})
	var out [][][]byte
	for {
		args, err := r.Next()
		if err == nil && args == nil {
			err = r.Fill()
			if err == nil {
				continue
			}
		}
		if err != nil {
			if r.Buffered() != 0 {
				t.Fatalf("AOF stream: %v with %d bytes left", err, r.Buffered())
			}
			return out
		}
		cp := make([][]byte, len(args))
		for i, a := range args {
			cp[i] = append([]byte(nil), a...)
		}
		out = append(out, cp)
	}
}

// aofCommandEqual compares two propagated commands, absolute times loosely
// (PXAT's, PEXPIREAT's; the delivery TIME of a propagated XCLAIM only as
// an integer).
func aofCommandEqual(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if bytes.Equal(a[i], b[i]) {
			continue
		}
		isTime := i > 0 && bytes.EqualFold(a[i-1], []byte("PXAT")) ||
			i == 2 && bytes.EqualFold(a[0], []byte("PEXPIREAT"))
		if i == 7 && bytes.EqualFold(a[0], []byte("XCLAIM")) && bytes.EqualFold(a[6], []byte("TIME")) {
			// A delivery time: Vigil's test clock is not Redis's clock.
			_, err1 := strconv.ParseInt(string(a[i]), 10, 64)
			_, err2 := strconv.ParseInt(string(b[i]), 10, 64)
			if err1 != nil || err2 != nil {
				return false
			}
			continue
		}
		if !isTime {
			return false
		}
		x, err1 := strconv.ParseInt(string(a[i]), 10, 64)
		y, err2 := strconv.ParseInt(string(b[i]), 10, 64)
		if err1 != nil || err2 != nil || x-y > 60000 || y-x > 60000 {
			return false
		}
	}
	return true
}
