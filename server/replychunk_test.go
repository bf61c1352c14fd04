package server

import (
	"strconv"
	"strings"
	"testing"

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
