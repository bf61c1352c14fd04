package server

import (
	"regexp"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/resp"
)

func TestJeUsableAndSds(t *testing.T) {
	for _, c := range [][2]int64{{1, 8}, {9, 16}, {100, 112}, {129, 160}, {1025, 1280}, {16390, 20480}, {400012, 458752}} {
		if got := jeUsable(c[0]); got != c[1] {
			t.Errorf("jeUsable(%d) = %d, want %d", c[0], got, c[1])
		}
	}
	// redis-server 7.0.15: a fresh client's query buffer after its first
	// read (qbuf=26 qbuf-free=20448), and the one a 400000-byte argument
	// leaves (qbuf-free=458716 under a 26-byte CLIENT INFO).
	if got := sdsMakeRoom(0, 0, protoIOBufLen, false); got != 20474 {
		t.Errorf("first read's alloc %d, want 20474", got)
	}
	if got := sdsAllocFor(400002); got != 458742 {
		t.Errorf("big argument's buffer %d, want 458742", got)
	}
}

var bufFields = regexp.MustCompile(`qbuf=\d+ qbuf-free=\d+|rbs=\d+ rbp=\d+`)

// TestClientBuffersModel: CLIENT LIST/INFO's qbuf, qbuf-free, rbs and rbp
// follow Redis 7.0's query and reply buffers (bufmodel.go), with the
// figures redis-server 7.0.15 shows: 26 bytes of query buffer for the
// running CLIENT INFO in a fresh 20474-byte buffer, a 16 KB reply buffer;
// then, clientsCron pass by pass (the fake clock's ticks), the cases of
// querybuf.tcl (a buffer an idle client does not use freed; a big
// argument's buffer shrunk to the recent peak while the client is busy)
// and replybufsize.tcl (an idle client's reply buffer shrunk to 1 KB, a
// busy one's doubled up to 16 KB under DEBUG REPLYBUFFER PEAK-RESET-TIME
// NEVER). Before, every field was 0 but the running client's rbs.
func TestClientBuffersModel(t *testing.T) {
	l := startLive(t, "--enable-debug-command", "yes")
	a, b := l.dial(t), l.dial(t)
	fields := func(s string) string { return strings.Join(bufFields.FindAllString(s, -1), " ") }
	if got := fields(a.do("CLIENT", "INFO")); got != "qbuf=26 qbuf-free=20448 rbs=16384 rbp=16384" {
		t.Fatalf("fresh client's own CLIENT INFO: %s", got)
	}
	b.do("CLIENT", "SETNAME", "test_client")
	bid := b.id()
	other := func() string { return fields(a.do("CLIENT", "LIST", "ID", bid)) }
	if got := other(); got != "qbuf=0 qbuf-free=20474 rbs=16384 rbp=16384" {
		t.Fatalf("another client after its command: %s", got)
	}
	tick := func() { cronTick(t, l) }
	// The first pass resets the reply buffer's peak (createClient's reset
	// time is in seconds), the second shrinks the idle buffer to 1 KB.
	tick()
	tick()
	if got := other(); got != "qbuf=0 qbuf-free=20474 rbs=1024 rbp=0" {
		t.Fatalf("after two cron passes: %s", got)
	}
	// Idle for more than 2 seconds: the query buffer is freed.
	l.s.mu.Lock()
	for _, cl := range l.s.clientsByID() {
		if cl.name == "test_client" {
			cl.lastInteraction.Store(l.s.nowMs - 3000) // the server's clock is a fake one
		}
	}
	l.s.mu.Unlock()
	tick()
	if got := other(); !strings.HasPrefix(got, "qbuf=0 qbuf-free=0 ") {
		t.Fatalf("idle client's query buffer: %s", got)
	}
	// A 400000-byte argument: its buffer is kept while the peak is high,
	// then shrunk to the recent peak (not 0) while the client is busy.
	b.do("SET", "x", strings.Repeat("A", 400000))
	if got := other(); !strings.HasPrefix(got, "qbuf=0 qbuf-free=458742 ") {
		t.Fatalf("after a big argument: %s", got)
	}
	tick()
	b.do("SET", "x", strings.Repeat("A", 100))
	tick()
	if got := other(); !strings.HasPrefix(got, "qbuf=0 qbuf-free=128 ") { // the 128-byte SET's peak
		t.Fatalf("busy client's query buffer after a small command: %s", got)
	}
	// A 32 KB reply fills the reply buffer: it doubles each pass, to 16 KB.
	b.do("SET", "bigval", strings.Repeat("x", 32768))
	a.do("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "NEVER")
	var sizes []string
	for range 6 {
		b.do("GET", "bigval")
		tick()
		sizes = append(sizes, strings.Fields(other())[2])
	}
	if got := strings.Join(sizes, " "); got != "rbs=2048 rbs=4096 rbs=8192 rbs=16384 rbs=16384 rbs=16384" {
		t.Fatalf("busy client's reply buffer pass by pass: %s", got)
	}
	a.do("DEBUG", "REPLYBUFFER", "PEAK-RESET-TIME", "RESET")
	if info := a.do("INFO", "stats"); !strings.Contains(info, "reply_buffer_expands:4") {
		t.Fatalf("INFO reply_buffer_expands: %s", info)
	}
}

// TestClientBuffersVsRedis: the buffer fields that no cron pass can change
// between two commands agree with redis-server 7.0.15's: the running
// CLIENT INFO's query buffer (a fresh client's, one after a 20000-byte
// argument, one with a pipelined command behind it) and the reply buffer's
// size, and another client's query buffer after its command.
func TestClientBuffersVsRedis(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t)
	qb := regexp.MustCompile(`qbuf=\d+ qbuf-free=\d+`)
	run := func(a, b *rconn) []string {
		var out []string
		own := func() string {
			info := a.do("CLIENT", "INFO")
			return qb.FindString(info) + " " + regexp.MustCompile(`rbs=\d+`).FindString(info)
		}
		out = append(out, own())
		a.do("SET", "k", strings.Repeat("v", 20000))
		out = append(out, own())
		// CLIENT INFO with a PING behind it in the same write.
		if _, err := a.c.Write(resp.AppendCommandStrings(resp.AppendCommandStrings(nil, "CLIENT", "INFO"), "PING")); err != nil {
			t.Fatal(err)
		}
		out = append(out, qb.FindString(a.read()))
		a.read()
		b.do("CLIENT", "SETNAME", "other")
		list := a.do("CLIENT", "LIST")
		for _, line := range strings.Split(list, `\n`) {
			if strings.Contains(line, "name=other") {
				out = append(out, qb.FindString(line))
			}
		}
		return out
	}
	redis := run(dialRedis(), dialRedis())
	vigil := run(l.dial(t), l.dial(t))
	sameAsRedis(t, "buffers", redis, vigil, []string{
		"qbuf=26 qbuf-free=20448 rbs=16384",
		"qbuf=26 qbuf-free=20448 rbs=16384",
		"qbuf=40 qbuf-free=20434",
		"qbuf=0 qbuf-free=20474",
	})
}
