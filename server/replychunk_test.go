package server

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

// TestBigRepliesWrittenInChunks: a pipeline whose replies are big goes out
// in writes of about replyChunk (Redis's NET_MAX_WRITES_PER_EVENT) while
// its batch runs, not in one write once every command ran, and every
// reply arrives whole and in order.
func TestBigRepliesWrittenInChunks(t *testing.T) {
	l := startLive(t)
	admin := l.dial(t)
	const n, size = 16, 16 << 10
	for i := range n {
		admin.do("SET", "k"+strconv.Itoa(i), strings.Repeat(string(rune('a'+i)), size))
	}
	admin.do("CONFIG", "RESETSTAT") // its own reply is the one write counted
	c := l.dial(t)
	var req []byte
	for i := range n {
		req = resp.AppendCommandStrings(req, "GET", "k"+strconv.Itoa(i))
	}
	if _, err := c.c.Write(req); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		if got, want := c.read(), strconv.Quote(strings.Repeat(string(rune('a'+i)), size)); got != want {
			t.Fatalf("reply %d: %.20s... (%d bytes), want %.20s...", i, got, len(got), want)
		}
	}
	writes, _ := strconv.Atoi(liveInfoField(t, admin, "stats", "total_writes_processed"))
	// n replies of size bytes: at least their bytes over Redis's 64 KB
	// writes.
	if want := n * size / (64 << 10); writes-1 < want {
		t.Fatalf("%d replies of %d bytes in %d writes, want at least %d", n, size, writes-1, want)
	}
}

// TestPipelineOverObufLimitGetsNothingVsRedis: obuf-limits.tcl's "No
// response for multi commands in pipeline if client output buffer limit is
// enforced": a pipeline whose replies pass the client's limit closes it
// before any reply went out, also now that replies go out every replyChunk
// for a client without limits.
func TestPipelineOverObufLimitGetsNothingVsRedis(t *testing.T) {
	l, dialRedis := startLiveBesideRedis(t)
	scenario := func(dial func() *rconn) []string {
		admin := dial()
		admin.do("CONFIG", "SET", "client-output-buffer-limit", "normal 100000 0 0")
		admin.do("SET", "bigkey", strings.Repeat("x", 10000))
		c := dial()
		var req []byte
		for i := range 15 {
			is := strconv.Itoa(i)
			req = resp.AppendCommandStrings(req, "SET", is, is)
			req = resp.AppendCommandStrings(req, "GET", is)
			req = resp.AppendCommandStrings(req, "DEL", is)
			req = resp.AppendCommandStrings(req, "GET", "bigkey")
		}
		if _, err := c.c.Write(req); err != nil {
			t.Fatal(err)
		}
		c.c.SetReadDeadline(time.Now().Add(10 * time.Second))
		got, err := io.ReadAll(c.c)
		out := []string{fmt.Sprintf("reply bytes before the close: %d (%v)", len(got), err)}
		admin.do("CONFIG", "SET", "client-output-buffer-limit", "normal 0 0 0")
		return append(out, "PING "+admin.do("PING"))
	}
	redis := scenario(dialRedis)
	vigil := scenario(func() *rconn { return l.dial(t) })
	sameAsRedis(t, "pipeline over the output limit", redis, vigil, []string{
		"reply bytes before the close: 0 (<nil>)", "PING +PONG",
	})
}
