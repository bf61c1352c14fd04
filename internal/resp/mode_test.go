package resp

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

type rawCmd struct {
	args string // space-joined
	raw  string
}

// readRaw reads all of in through Fill (one byte at a time when bytewise)
// in mode, returning the commands with their raw bytes, the error, and
// how many bytes were left unparsed at the end.
func readRaw(in string, mode Mode, lim Limits, bytewise bool) ([]rawCmd, error, int) {
	var rd io.Reader = strings.NewReader(in)
	if bytewise {
		rd = iotest.OneByteReader(rd)
	}
	r := NewReader(rd, lim)
	r.SetMode(mode)
	var out []rawCmd
	for {
		for {
			args, raw, err := r.NextRaw()
			if err != nil {
				return out, err, r.Buffered()
			}
			if raw == nil {
				break
			}
			var parts []string
			for _, a := range args {
				parts = append(parts, string(a))
			}
			out = append(out, rawCmd{strings.Join(parts, " "), string(raw)})
		}
		if err := r.Fill(); err != nil {
			return out, nil, r.Buffered()
		}
	}
}

// ModeMaster splits the master's stream into commands with their exact
// bytes (the offsets a replica ACKs and the stream it proxies to its own
// replicas), empty ones included, whatever the read sizes.
func TestModeMaster(t *testing.T) {
	stream := "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n\n*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n\r\n*0\r\n*-1\r\n*1\r\n$4\r\nPING\r\n"
	want := []rawCmd{
		{"SELECT 0", "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n"}, {"", "\n"},
		{"SET k ", "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$0\r\n\r\n"}, {"", "\r\n"}, {"", "*0\r\n"}, {"", "*-1\r\n"},
		{"PING", "*1\r\n$4\r\nPING\r\n"},
	}
	for _, bytewise := range []bool{false, true} {
		got, err, left := readRaw(stream, ModeMaster, DefaultLimits, bytewise)
		if err != nil || left != 0 {
			t.Fatalf("bytewise %v: %v, %d bytes left", bytewise, err, left)
		}
		if len(got) != len(want) {
			t.Fatalf("bytewise %v: %q", bytewise, got)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("bytewise %v: command %d %q, want %q", bytewise, i, got[i], want[i])
			}
		}
	}
}

// A hostile or broken master gets a protocol error (or, cut short, waits
// for more), never a panic or an allocation of what a length claims.
func TestModeMasterHostile(t *testing.T) {
	for _, c := range []struct{ in, err string }{
		{"SET k v\r\n", "Protocol error: Master using the inline protocol. Desync?"},
		{" \r\n", "Protocol error: Master using the inline protocol. Desync?"},
		{"\r\r\n", "Protocol error: Master using the inline protocol. Desync?"},
		{"*999999999999\r\n", "Protocol error: invalid multibulk length"},
		{"*1\r\n$-1\r\n", "Protocol error: invalid bulk length"},
		{"*1\r\n$99999999999\r\n", "Protocol error: invalid bulk length"},
		{"*1\r\n+OK\r\n", "Protocol error: expected '$', got '+'"},
		{"*x\r\n", "Protocol error: invalid multibulk length"},
		{"*\r\n", "Protocol error: invalid multibulk length"},
		{"*1\r\n$5\r\nab", ""},
		{"*2\r\n$3\r\nGET\r\n$1\r\n", ""},
		{"*1048576\r\n$1\r\n", ""},
		{"*1\r\n$536870912\r\nab", ""},
	} {
		got, err, left := readRaw(c.in, ModeMaster, DefaultLimits, false)
		if c.err == "" {
			if err != nil || len(got) != 0 || left != len(c.in) {
				t.Errorf("%q: %q, %v, %d left: want to wait for more", c.in, got, err, left)
			}
			continue
		}
		if err == nil || err.Error() != c.err {
			t.Errorf("%q: %v, want %s", c.in, err, c.err)
		}
	}
	// A claimed 512 MB bulk with 3 bytes behind it does not grow the
	// buffer to 512 MB.
	r := NewReader(strings.NewReader("*1\r\n$536870912\r\nabc"), DefaultLimits)
	r.SetMode(ModeMaster)
	for r.Fill() == nil {
		if _, _, err := r.NextRaw(); err != nil {
			t.Fatal(err)
		}
	}
	if r.BufferCap() > 1<<20 {
		t.Fatalf("buffer grew to %d", r.BufferCap())
	}
	// Nor when the bytes come one at a time: the buffer stays within a
	// few times what it holds.
	for _, mode := range []Mode{ModeMaster, ModeAOF} {
		in := "*1\r\n$536870912\r\n" + strings.Repeat("x", 200<<10)
		r := NewReader(iotest.OneByteReader(strings.NewReader(in)), DefaultLimits)
		r.SetMode(mode)
		for r.Fill() == nil {
			if _, _, err := r.NextRaw(); err != nil {
				t.Fatal(err)
			}
			if r.BufferCap() > 3*r.Buffered()+2*readChunk {
				t.Fatalf("mode %d: a %d-byte buffer for %d bytes", mode, r.BufferCap(), r.Buffered())
			}
		}
	}
}

var aofLimits = Limits{MaxBulkLen: 1 << 62, MaxArgs: 1 << 62, MaxInline: 128}

// ModeAOF reads what loadSingleAppendOnlyFile reads, with the offsets the
// loader reports.
func TestModeAOF(t *testing.T) {
	in := "#ts:1\n*1\r\n$5\r\nMULTI\r\n*+1\n$04\r\r\nEXEC\r\n#x\r\n*2\r\n$3\r\nGET\r\n$0\r\n\r\n"
	want := []rawCmd{{"MULTI", "*1\r\n$5\r\nMULTI\r\n"}, {"EXEC", "*+1\n$04\r\r\nEXEC\r\n"}, {"GET ", "*2\r\n$3\r\nGET\r\n$0\r\n\r\n"}}
	for _, bytewise := range []bool{false, true} {
		got, err, left := readRaw(in, ModeAOF, aofLimits, bytewise)
		if err != nil || left != 0 || len(got) != len(want) {
			t.Fatalf("bytewise %v: %q %v %d", bytewise, got, err, left)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("bytewise %v: command %d %q, want %q", bytewise, i, got[i], want[i])
			}
		}
	}
	long := strings.Repeat("1", 129)
	for _, c := range []struct {
		in, msg string
		off     int64
		left    int // bytes left unparsed when there is no error: a cut command
	}{
		{"*1\r\n$1\r\na\r\nx\r\n", "expected '*'", 11, 0},
		{"*0\r\n", "invalid argument count", 0, 0},
		{"*-1\r\n", "invalid argument count", 0, 0},
		{"*1\r\n$1\r\na\r\n*\r\n", "invalid argument count", 11, 0},
		{"*2\r\n$1\r\na\r\n:1\r\n", "expected '$'", 11, 0},
		{"*1\r\n$-1\r\n", "invalid bulk length", 4, 0},
		{"*1\r\n$1x\r\n", "invalid bulk length", 4, 0},
		{"*1\r\n$1\r\nab\r\n", "expected CRLF after bulk", 9, 0},
		{"*1\r\n$1\r\na\n\r", "expected CRLF after bulk", 9, 0},
		{"\r\n", "empty line", 1, 0},
		{"*1\r\n\r\r\n", "empty line", 6, 0},
		{"*" + long + "\n", "line too long", 0, 0},
		{"*1\r\n$" + long, "line too long", 4, 0},
		{"#" + long, "line too long", 0, 0},
		{"#" + long[:127] + "\n", "", 0, 0}, // 128 bytes: a line
		{"#" + long[:128] + "\n", "line too long", 0, 0},
		{"*1\r\n$4294967296\r\nab", "", 0, 19}, // cut, without allocating 4 GB
		{"*1\r\n$1\r\na\r", "", 0, 10},
		{"#ann", "", 0, 4},
		{"*1\r\n$1\r\na\r\n*2", "", 0, 2},
	} {
		got, err, left := readRaw(c.in, ModeAOF, aofLimits, false)
		if c.msg == "" {
			if err != nil || left != c.left {
				t.Errorf("%q: %q, %v, %d left, want %d", c.in, got, err, left, c.left)
			}
			continue
		}
		pe, ok := err.(*ProtocolError)
		if !ok || pe.Msg != c.msg || pe.Offset != c.off {
			t.Errorf("%q: %#v, want %s at %d", c.in, err, c.msg, c.off)
		}
	}
}

// Offset counts from the Reader's first byte across buffer compactions.
func TestOffsetAcrossFills(t *testing.T) {
	cmd := AppendCommand(nil, []byte("SET"), []byte("k"), bytes.Repeat([]byte("v"), 40<<10))
	in := bytes.Repeat(cmd, 5)
	r := NewReader(iotest.HalfReader(bytes.NewReader(in)), DefaultLimits)
	r.SetMode(ModeMaster)
	n := 0
	for {
		_, raw, err := r.NextRaw()
		if err != nil {
			t.Fatal(err)
		}
		if raw != nil {
			n++
			if !bytes.Equal(raw, cmd) || r.Offset() != int64(n*len(cmd)) {
				t.Fatalf("command %d: %d raw bytes, offset %d", n, len(raw), r.Offset())
			}
			continue
		}
		if r.Fill() != nil {
			break
		}
	}
	if n != 5 {
		t.Fatalf("%d commands", n)
	}
}
