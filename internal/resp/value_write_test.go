package resp

import (
	"bufio"
	"strings"
	"testing"
)

// TestWriterValueRoundTrip reads a reply of every kind and writes it back:
// RESP3 gives the same bytes, RESP2 Redis's fallbacks.
func TestWriterValueRoundTrip(t *testing.T) {
	in := "*12\r\n+OK\r\n-ERR x\r\n:-7\r\n$3\r\nabc\r\n_\r\n#t\r\n,1.5\r\n(12345678901234567890\r\n=7\r\ntxt:hey\r\n" +
		"%1\r\n+k\r\n:1\r\n~2\r\n:1\r\n:2\r\n>2\r\n+message\r\n$1\r\nm\r\n"
	v, err := ReadValue(bufio.NewReader(strings.NewReader(in)), DefaultReplyLimits)
	if err != nil {
		t.Fatal(err)
	}
	w := Writer{Proto: 3}
	w.Value(v)
	if string(w.B) != in {
		t.Fatalf("RESP3:\n got %q\nwant %q", w.B, in)
	}
	w = Writer{Proto: 2}
	w.Value(v)
	want2 := "*12\r\n+OK\r\n-ERR x\r\n:-7\r\n$3\r\nabc\r\n$-1\r\n:1\r\n$3\r\n1.5\r\n$20\r\n12345678901234567890\r\n$3\r\nhey\r\n" +
		"*2\r\n+k\r\n:1\r\n*2\r\n:1\r\n:2\r\n*2\r\n+message\r\n$1\r\nm\r\n"
	if string(w.B) != want2 {
		t.Fatalf("RESP2:\n got %q\nwant %q", w.B, want2)
	}
}
