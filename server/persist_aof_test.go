package server

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/internal/testutil"
)

// aofWorkload is a command sequence covering every type, TTLs,
// MULTI/EXEC, binary keys and database changes.
var aofWorkload = [][]string{
	{"SET", "s", "hello"},
	{"SET", "bin\x00key\r\n", "v\x00\xff"},
	{"SET", "ex", "1", "EX", "100000"},
	{"RPUSH", "l", "a", "b", "c"},
	{"LPUSH", "l", "z"},
	{"SADD", "set", "1", "2", "x"},
	{"ZADD", "z", "1.5", "a", "-3", "b", "inf", "c"},
	{"HSET", "h", "f1", "v1", "f2", "v2"},
	{"INCRBYFLOAT", "f", "1.5"},
	{"EXPIRE", "h", "100000"},
	{"MULTI"}, {"INCR", "n"}, {"SADD", "set", "y"}, {"EXEC"},
	{"SELECT", "3"},
	{"SET", "in3", "v"},
	{"DEL", "nothing"},
	{"SELECT", "0"},
	{"LPOP", "l"},
}

// aofBigWorkload adds a value over 1 MB and collections over 10k
// elements (the rewrite batches them by 64) to aofWorkload.
func aofBigWorkload() [][]string {
	w := append([][]string{}, aofWorkload...)
	w = append(w, []string{"SET", "big", strings.Repeat("0123456789abcdef", 70000)})
	list := []string{"RPUSH", "biglist"}
	set := []string{"SADD", "bigset"}
	hash := []string{"HSET", "bighash"}
	zset := []string{"ZADD", "bigzset"}
	for i := 0; i < 10050; i++ {
		n := strconv.Itoa(i)
		list = append(list, "e"+n)
		set = append(set, "m"+n)
		hash = append(hash, "f"+n, "v"+n)
		zset = append(zset, n+".25", "z"+n)
	}
	return append(w, list, set, hash, zset, []string{"SADD", "intset", "1", "2", "3"}, []string{"PEXPIRE", "bigset", "100000000"})
}

func startLiveAOF(t *testing.T, dir string, extra ...string) (*liveServer, func()) {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "v.sock")
	// The real clock: TTLs written here must be in the future for
	// redis-server loading the same files.
	cfg, err := configs.Load(configs.LoadOptions{Args: append([]string{"--port", "0", "--unixsocket", sock, "--dir", dir,
		"--appendonly", "yes", "--appendfsync", "always", "--aof-use-rdb-preamble", "no"}, extra...)})
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	ts := &testServer{s: s}
	if err := ts.s.Listen(); err != nil {
		t.Fatal(err)
	}
	l := runLive(t, ts, sock)
	stop := func() {
		if err := l.stop(t); err != nil {
			t.Fatalf("server: %v", err)
		}
	}
	t.Cleanup(stop)
	return l, stop
}

// dialUnix waits for a unix socket to accept.
func dialUnix(t *testing.T, sock string) *aconn {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.Dial("unix", sock)
		if err == nil {
			t.Cleanup(func() { c.Close() })
			return &aconn{t: t, c: c, br: bufio.NewReader(c)}
		}
		if time.Now().After(deadline) {
			t.Fatalf("dial %s: %v", sock, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// aconn is a connection whose replies are raw RESP (rawDo).
type aconn struct {
	t  *testing.T
	c  net.Conn
	br *bufio.Reader
}

func (a *aconn) do(args ...string) string { a.t.Helper(); return rawDo(a.t, a.c, a.br, args...) }

// dumpKeys is a key-by-key dump of databases 0 and 3, comparable between
// servers (collections sorted, TTLs as present/absent).
func dumpKeys(t *testing.T, r *aconn) string {
	var b strings.Builder
	for _, db := range []string{"0", "3"} {
		r.do("SELECT", db)
		keys := parseArray(r.do("KEYS", "*"))
		sort.Strings(keys)
		for _, k := range keys {
			typ := r.do("TYPE", k)
			b.WriteString(db + " " + k + " " + typ)
			var v string
			switch typ {
			case "+string\r\n":
				v = r.do("GET", k)
			case "+list\r\n":
				v = r.do("LRANGE", k, "0", "-1")
			case "+set\r\n":
				m := parseArray(r.do("SMEMBERS", k))
				sort.Strings(m)
				v = strings.Join(m, ",")
			case "+zset\r\n":
				v = r.do("ZRANGE", k, "0", "-1", "WITHSCORES")
			case "+hash\r\n":
				m := parseArray(r.do("HGETALL", k))
				pairs := []string{}
				for i := 0; i+1 < len(m); i += 2 {
					pairs = append(pairs, m[i]+"="+m[i+1])
				}
				sort.Strings(pairs)
				v = strings.Join(pairs, ",")
			}
			b.WriteString(" " + v)
			if r.do("PTTL", k) != ":-1\r\n" {
				b.WriteString(" ttl")
			}
			b.WriteString("\n")
		}
	}
	r.do("SELECT", "0")
	return b.String()
}

// parseArray splits a RESP2 array of bulk strings.
func parseArray(s string) []string {
	br := bufio.NewReader(strings.NewReader(s))
	line, _ := br.ReadString('\n')
	if !strings.HasPrefix(line, "*") {
		return nil
	}
	var out []string
	for {
		hdr, err := br.ReadString('\n')
		if err != nil {
			return out
		}
		n := 0
		for _, c := range strings.TrimSpace(hdr[1:]) {
			n = n*10 + int(c-'0')
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(br, buf); err != nil {
			return out
		}
		out = append(out, string(buf[:n]))
	}
}

func waitInfo(t *testing.T, r *aconn, field, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		if strings.Contains(r.do("INFO", "persistence"), field+":"+want+"\r\n") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s never became %s", field, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestAOFPersistAndRewrite(t *testing.T) {
	t.Run("commands", func(t *testing.T) { testAOFPersistAndRewrite(t, "no") })
	// aof-use-rdb-preamble yes: bases are RDB files (persist_glue.go).
	t.Run("rdb-preamble", func(t *testing.T) { testAOFPersistAndRewrite(t, "yes") })
}

func testAOFPersistAndRewrite(t *testing.T, preamble string) {
	ext := "aof"
	if preamble == "yes" {
		ext = "rdb"
	}
	pre := []string{"--aof-use-rdb-preamble", preamble}
	dir := t.TempDir()
	l, stop := startLiveAOF(t, dir, pre...)
	r := dialUnix(t, l.sock)
	work := aofBigWorkload()
	for _, c := range work {
		r.do(c...)
	}
	want := dumpKeys(t, r)
	adir := filepath.Join(dir, "appendonlydir")
	man, _ := os.ReadFile(filepath.Join(adir, "appendonly.aof.manifest"))
	if string(man) != "file appendonly.aof.1.base."+ext+" seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n" {
		t.Fatalf("manifest %q", man)
	}
	ours, _ := os.ReadFile(filepath.Join(adir, "appendonly.aof.1.incr.aof"))
	// (a) the incremental file equals redis-server's for the same commands.
	if _, err := os.Stat(redisServerBin); err == nil {
		dial, oracle := startRedisAOF(t)
		rc, rbr := dial(2)
		for _, c := range work {
			rawDo(t, rc, rbr, c...)
		}
		theirs := oracle.incr(t)
		a, b := parseAOF(t, ours), parseAOF(t, theirs)
		if len(a) != len(b) {
			t.Fatalf("incr files differ: %d vs %d commands\nours:\n%q\ntheirs:\n%q", len(a), len(b), ours, theirs)
		}
		for i := range a {
			if !aofCommandEqual(maskTimes(a[i]), maskTimes(b[i])) {
				t.Fatalf("command %d differs: ours %s, redis %s", i, fmtCmd(a[i]), fmtCmd(b[i]))
			}
		}
	}
	if got := r.do("BGREWRITEAOF"); got != "+Background append only file rewriting started\r\n" {
		t.Fatalf("BGREWRITEAOF: %q", got)
	}
	waitInfo(t, r, "aof_rewrites", "1")
	waitInfo(t, r, "aof_rewrite_in_progress", "0")
	r.do("SET", "after", "rewrite")
	want = dumpKeys(t, r)
	info := r.do("INFO", "persistence")
	for _, f := range []string{"aof_enabled:1", "aof_last_bgrewrite_status:ok", "aof_current_size:", "aof_base_size:", "aof_buffer_length:0", "aof_delayed_fsync:0"} {
		if !strings.Contains(info, f) {
			t.Errorf("INFO persistence lacks %s:\n%s", f, info)
		}
	}
	stop()
	man, _ = os.ReadFile(filepath.Join(adir, "appendonly.aof.manifest"))
	if string(man) != "file appendonly.aof.2.base."+ext+" seq 2 type b\nfile appendonly.aof.2.incr.aof seq 2 type i\n" {
		t.Fatalf("manifest after rewrite %q", man)
	}
	ents, _ := os.ReadDir(adir)
	if len(ents) != 3 {
		t.Fatalf("history not deleted: %v", ents)
	}
	// Restart: the AOF loads.
	l2, _ := startLiveAOF(t, dir, pre...)
	r2 := dialUnix(t, l2.sock)
	if got := dumpKeys(t, r2); got != want {
		t.Fatalf("after restart: %s", dumpDiff(got, want))
	}
	// (d) redis-check-aof accepts our manifest; (c) redis-server loads it.
	if _, err := exec.LookPath("redis-check-aof"); err == nil {
		out, err := exec.Command("redis-check-aof", filepath.Join(adir, "appendonly.aof.manifest")).CombinedOutput()
		if err != nil || !bytes.Contains(out, []byte("is valid")) {
			t.Fatalf("redis-check-aof: %v\n%s", err, out)
		}
	}
	testutil.NeedRedis(t)
	rdir := t.TempDir()
	if err := os.CopyFS(filepath.Join(rdir, "appendonlydir"), os.DirFS(adir)); err != nil {
		t.Fatal(err)
	}
	ref := testutil.StartRedis(t, testutil.RedisOptions{Dir: rdir,
		Args: []string{"--appendonly", "yes", "--aof-use-rdb-preamble", preamble}})
	rr := dialUnix(t, ref.Sock)
	// redis-server answers -LOADING meanwhile, and INFO's loading field
	// can read 0 between two files of a multi-part AOF: wait for its
	// "ready to accept connections", logged once everything is loaded.
	testutil.Poll(t, 20*time.Second, "redis-server to finish loading", func() bool {
		return strings.Contains(ref.Log(), "ready to accept connections")
	})
	if got := dumpKeys(t, rr); got != want {
		log, _ := os.ReadFile(filepath.Join(rdir, "redis.log"))
		t.Fatalf("redis-server loaded: %s\n%s", dumpDiff(got, want), log)
	}
	// And we load theirs after a rewrite on their side.
	if got := rr.do("BGREWRITEAOF"); !strings.HasPrefix(got, "+Background") {
		t.Fatal(got)
	}
	waitInfo(t, rr, "aof_rewrite_in_progress", "0")
	waitInfo(t, rr, "aof_rewrites", "1")
	rr.do("SET", "theirs", "1")
	want = dumpKeys(t, rr)
	rr.c.Write(resp.AppendCommandStrings(nil, "SHUTDOWN", "NOSAVE"))
	ref.Cmd.Wait()
	l3, _ := startLiveAOF(t, rdir, pre...)
	r3 := dialUnix(t, l3.sock)
	if got := dumpKeys(t, r3); got != want {
		t.Fatalf("loading redis-server's AOF: %s", dumpDiff(got, want))
	}
}

func TestAOFTruncatedTail(t *testing.T) {
	dir := t.TempDir()
	l, stop := startLiveAOF(t, dir)
	r := dialUnix(t, l.sock)
	r.do("SET", "a", "1")
	r.do("SET", "b", "2")
	stop()
	incr := filepath.Join(dir, "appendonlydir", "appendonly.aof.1.incr.aof")
	b, _ := os.ReadFile(incr)
	os.WriteFile(incr, b[:len(b)-3], 0o644)
	// aof-load-truncated no: refused with guidance.
	ts := newTestServer(t, "--port", "0", "--dir", dir, "--appendonly", "yes", "--aof-load-truncated", "no")
	err := ts.s.loadDataOnStart()
	if err == nil || !strings.Contains(err.Error(), "redis-check-aof") {
		t.Fatalf("truncated AOF with aof-load-truncated no: %v", err)
	}
	// yes: the cut command is dropped.
	l2, _ := startLiveAOF(t, dir)
	r2 := dialUnix(t, l2.sock)
	if got := r2.do("GET", "a"); got != "$1\r\n1\r\n" {
		t.Fatal(got)
	}
	if got := r2.do("EXISTS", "b"); got != ":0\r\n" {
		t.Fatal(got)
	}
}

func TestAOFConfigSetAppendonly(t *testing.T) {
	dir := t.TempDir()
	l, _ := startLiveAOF(t, dir, "--appendonly", "no")
	r := dialUnix(t, l.sock)
	r.do("SET", "before", "1")
	if got := r.do("CONFIG", "SET", "appendonly", "yes"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	r.do("SET", "during", "2")
	waitInfo(t, r, "aof_rewrites", "1")
	waitInfo(t, r, "aof_rewrite_in_progress", "0")
	r.do("SET", "after", "3")
	if got := r.do("CONFIG", "SET", "appendonly", "no"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	r.do("SET", "off", "4")
	man, _ := os.ReadFile(filepath.Join(dir, "appendonlydir", "appendonly.aof.manifest"))
	if string(man) != "file appendonly.aof.1.base.aof seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n" {
		t.Fatalf("manifest %q", man)
	}
	l2, _ := startLiveAOF(t, dir)
	r2 := dialUnix(t, l2.sock)
	if got := r2.do("MGET", "before", "during", "after", "off"); got != "*4\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$-1\r\n" {
		t.Fatalf("%q", got)
	}
}

// maskTimes hides absolute unix-millisecond times (the test server runs
// on a fake clock).
func maskTimes(argv [][]byte) [][]byte {
	out := make([][]byte, len(argv))
	for i, a := range argv {
		out[i] = a
		if n, ok := parseInt(a); ok && n > 1e12 {
			out[i] = []byte("T")
		}
	}
	return out
}

func TestAOFAutoRewrite(t *testing.T) {
	dir := t.TempDir()
	l, _ := startLiveAOF(t, dir, "--auto-aof-rewrite-percentage", "100", "--auto-aof-rewrite-min-size", "4096")
	r := dialUnix(t, l.sock)
	for i := 0; i < 200; i++ {
		r.do("SET", "key", strings.Repeat("x", 100))
	}
	// The cron sees the AOF past min-size and 100% growth: a rewrite. It
	// may come while the SETs still flow, and then the AOF (a one-key base
	// and the SETs after it) can pass min-size and 100% growth again: one
	// rewrite or more.
	deadline := time.Now().Add(20 * time.Second)
	for {
		v := ""
		for _, line := range strings.Split(r.do("INFO", "persistence"), "\r\n") {
			if strings.HasPrefix(line, "aof_rewrites:") {
				v = strings.TrimPrefix(line, "aof_rewrites:")
			}
		}
		if n, _ := strconv.Atoi(v); n >= 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("aof_rewrites stayed %q", v)
		}
		time.Sleep(10 * time.Millisecond)
	}
	waitInfo(t, r, "aof_rewrite_in_progress", "0")
	if got := r.do("GET", "key"); !strings.Contains(got, strings.Repeat("x", 100)) {
		t.Fatal(got)
	}
}

func TestAOFStopDuringRewrite(t *testing.T) {
	dir := t.TempDir()
	l, stop := startLiveAOF(t, dir)
	r := dialUnix(t, l.sock)
	var pipe []byte
	for i := 0; i < 20000; i++ {
		pipe = resp.AppendCommandStrings(pipe, "SET", "k"+strconv.Itoa(i), "v")
	}
	r.c.Write(pipe)
	for i := 0; i < 20000; i++ {
		if _, err := resp.ReadValue(r.br, resp.DefaultReplyLimits); err != nil {
			t.Fatal(err)
		}
	}
	r.do("BGREWRITEAOF")
	if got := r.do("CONFIG", "SET", "appendonly", "no"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	waitInfo(t, r, "aof_rewrite_in_progress", "0")
	if got := r.do("CONFIG", "SET", "appendonly", "yes"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	r.do("SET", "last", "1")
	waitInfo(t, r, "aof_rewrite_in_progress", "0")
	// The abandoned rewrite's snapshot may still be closing: wait for the
	// re-enable's rewrite to complete (aof_rewrites counts both).
	deadline := time.Now().Add(20 * time.Second)
	for {
		ents, _ := os.ReadDir(filepath.Join(dir, "appendonlydir"))
		temps := 0
		for _, e := range ents {
			if strings.HasPrefix(e.Name(), "temp-") {
				temps++
			}
		}
		info := r.do("INFO", "persistence")
		if temps == 0 && strings.Contains(info, "aof_rewrite_scheduled:0") && strings.Contains(info, "aof_rewrite_in_progress:0") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("temporary files left: %v", ents)
		}
		time.Sleep(10 * time.Millisecond)
	}
	stop()
	l2, _ := startLiveAOF(t, dir)
	r2 := dialUnix(t, l2.sock)
	if got := r2.do("DBSIZE"); got != ":20001\r\n" {
		t.Fatal(got)
	}
}

// dumpDiff shows the first line where two dumps differ.
func dumpDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) && i < len(w); i++ {
		if g[i] != w[i] {
			return fmt.Sprintf("line %d:\n got  %.300q\n want %.300q\n before %.500q", i, g[i], w[i], strings.Join(g[max(0, i-8):i], "|"))
		}
	}
	return fmt.Sprintf("%d lines, want %d", len(g), len(w))
}

// BGREWRITEAOF with appendonly no writes a base and a manifest naming only
// it, and leaves the AOF off, as redis-server 7.0.
func TestAOFRewriteWhileOff(t *testing.T) {
	dir := t.TempDir()
	l, _ := startLiveAOF(t, dir, "--appendonly", "no")
	r := dialUnix(t, l.sock)
	adir := filepath.Join(dir, "appendonlydir")
	for i := 1; i <= 2; i++ {
		r.do("SET", "k"+strconv.Itoa(i), "v")
		if got := r.do("BGREWRITEAOF"); got != "+Background append only file rewriting started\r\n" {
			t.Fatal(got)
		}
		waitInfo(t, r, "aof_rewrite_in_progress", "0")
		man, _ := os.ReadFile(filepath.Join(adir, "appendonly.aof.manifest"))
		if want := "file appendonly.aof." + strconv.Itoa(i) + ".base.aof seq " + strconv.Itoa(i) + " type b\n"; string(man) != want {
			t.Fatalf("manifest %q, want %q", man, want)
		}
		ents, _ := os.ReadDir(adir)
		if len(ents) != 2 {
			t.Fatalf("files %v", ents)
		}
	}
	if info := r.do("INFO", "persistence"); !strings.Contains(info, "aof_enabled:0") || strings.Contains(info, "aof_current_size") {
		t.Fatal(info)
	}
}

// TestAOFRewriteScheduledInMulti: inside MULTI, BGREWRITEAOF and CONFIG SET
// appendonly yes schedule the rewrite (server.in_exec) and the cron starts
// it; enabling the AOF while a rewrite of a disabled AOF runs kills that
// rewrite and starts another (startAppendOnly), as redis-server 7.0.15
// (multi.tcl's "MULTI with BGREWRITEAOF" / "MULTI with config set
// appendonly", checked by hand against redis-server).
func TestAOFRewriteScheduledInMulti(t *testing.T) {
	dir := t.TempDir()
	l, _ := startLiveAOF(t, dir, "--appendonly", "no")
	r := dialUnix(t, l.sock)
	r.do("MULTI")
	r.do("SET", "a", "1")
	r.do("BGREWRITEAOF")
	if got := r.do("EXEC"); got != "*2\r\n+OK\r\n+Background append only file rewriting scheduled\r\n" {
		t.Fatalf("EXEC: %q", got)
	}
	waitInfo(t, r, "aof_rewrites", "1")
	waitInfo(t, r, "aof_rewrite_in_progress", "0")

	r.do("MULTI")
	r.do("SET", "b", "2")
	r.do("CONFIG", "SET", "appendonly", "yes")
	if got := r.do("EXEC"); got != "*2\r\n+OK\r\n+OK\r\n" {
		t.Fatalf("EXEC: %q", got)
	}
	waitInfo(t, r, "aof_rewrites", "2")
	waitInfo(t, r, "aof_rewrite_in_progress", "0")
	waitInfo(t, r, "aof_enabled", "1")
	r.do("SET", "c", "3")

	// A slow rewrite of the disabled AOF, then appendonly yes.
	if got := r.do("CONFIG", "SET", "appendonly", "no"); got != "+OK\r\n" {
		t.Fatal(got)
	}
	for i := 0; i < 20; i++ {
		r.do("SET", "k"+strconv.Itoa(i), "v")
	}
	r.do("CONFIG", "SET", "rdb-key-save-delay", "100000")
	if got := r.do("BGREWRITEAOF"); got != "+Background append only file rewriting started\r\n" {
		t.Fatal(got)
	}
	if got := r.do("CONFIG", "SET", "appendonly", "yes"); got != "+OK\r\n" {
		t.Fatalf("CONFIG SET appendonly yes during a rewrite: %q", got)
	}
	r.do("CONFIG", "SET", "rdb-key-save-delay", "0")
	waitInfo(t, r, "aof_rewrites", "4")
	waitInfo(t, r, "aof_rewrite_in_progress", "0")
	waitInfo(t, r, "aof_rewrite_scheduled", "0")
	waitInfo(t, r, "aof_enabled", "1")
	r.do("SET", "d", "4")
	// Each rewrite started counts as a fork (the killed one too).
	if info := r.do("INFO", "stats"); !strings.Contains(info, "\r\ntotal_forks:4\r\n") {
		t.Fatalf("total_forks: %s", info)
	}
	l2, _ := startLiveAOF(t, dir)
	r2 := dialUnix(t, l2.sock)
	if got := r2.do("MGET", "a", "b", "c", "d", "k19"); got != "*5\r\n$1\r\n1\r\n$1\r\n2\r\n$1\r\n3\r\n$1\r\n4\r\n$1\r\nv\r\n" {
		t.Fatalf("%q", got)
	}
}
