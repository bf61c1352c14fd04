package resp

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"slices"
	"strings"
	"testing"
)

func collect(t *testing.T, r *Reader) ([][]string, error) {
	t.Helper()
	var out [][]string
	for {
		args, err := r.Next()
		if err != nil {
			return out, err
		}
		if args == nil {
			return out, nil
		}
		cmd := make([]string, len(args))
		for i, a := range args {
			cmd[i] = string(a)
		}
		out = append(out, cmd)
	}
}

func parseAll(t *testing.T, input string, lim Limits) ([][]string, error) {
	r := NewReader(strings.NewReader(input), lim)
	var out [][]string
	for {
		got, err := collect(t, r)
		out = append(out, got...)
		if err != nil {
			return out, err
		}
		if ferr := r.Fill(); ferr != nil {
			if ferr == io.EOF {
				return out, nil
			}
			return out, ferr
		}
	}
}

func TestReaderTable(t *testing.T) {
	cases := []struct {
		name, in string
		want     [][]string
		err      string
	}{
		{"multibulk", "*2\r\n$3\r\nGET\r\n$1\r\nk\r\n", [][]string{{"GET", "k"}}, ""},
		{"pipeline", "*1\r\n$4\r\nPING\r\n*2\r\n$4\r\nECHO\r\n$0\r\n\r\n", [][]string{{"PING"}, {"ECHO", ""}}, ""},
		{"inline", "set a 1\r\nget a\n", [][]string{{"set", "a", "1"}, {"get", "a"}}, ""},
		{"inline quotes", "set \"a b\" 'c d'\r\n", [][]string{{"set", "a b", "c d"}}, ""},
		{"inline hex", "echo \"\\x41\\n\"\r\n", [][]string{{"echo", "A\n"}}, ""},
		{"empty inline skipped", "\r\n\r\nping\r\n", [][]string{{"ping"}}, ""},
		// \v and \f are skipped between arguments but do not end one
		// (checked against redis-server 7.0).
		{"inline vt ff", "rpush k a\vb \vc\f d\r\n", [][]string{{"rpush", "k", "a\vb", "c\f", "d"}}, ""},
		{"inline tab", "rpush\tk\t a\r\n", [][]string{{"rpush", "k", "a"}}, ""},
		{"zero multibulk skipped", "*0\r\n*-1\r\n*1\r\n$4\r\nPING\r\n", [][]string{{"PING"}}, ""},
		{"binary bulk", "*1\r\n$4\r\na\r\nb\r\n", [][]string{{"a\r\nb"}}, ""},
		{"unbalanced", "set \"a\r\n", nil, "Protocol error: unbalanced quotes in request"},
		{"bad mbulk len", "*x\r\n", nil, "Protocol error: invalid multibulk length"},
		{"too many args", "*2147483648\r\n", nil, "Protocol error: invalid multibulk length"},
		{"expected dollar", "*1\r\n:1\r\n", nil, "Protocol error: expected '$', got ':'"},
		{"negative bulk", "*1\r\n$-1\r\n", nil, "Protocol error: invalid bulk length"},
		{"huge bulk", "*1\r\n$536870913\r\n", nil, "Protocol error: invalid bulk length"},
		{"non int bulk", "*1\r\n$1a\r\n", nil, "Protocol error: invalid bulk length"},
		{"plus sign", "*+1\r\n", nil, "Protocol error: invalid multibulk length"},
		// string2ll refuses "-0" (checked against redis-server 7.0).
		{"minus zero count", "*-0\r\n", nil, "Protocol error: invalid multibulk length"},
		{"minus zero bulk", "*1\r\n$-0\r\n", nil, "Protocol error: invalid bulk length"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := parseAll(t, c.in, DefaultLimits)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("err = %v, want %q", err, c.err)
				}
				if !IsProtocolError(err) {
					t.Fatalf("not a ProtocolError: %T", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("unexpected error %v", err)
			}
			if !equal(got, c.want) {
				t.Fatalf("got %q want %q", got, c.want)
			}
		})
	}
}

// TestReaderUnauthenticated: before AUTH, Redis 7.0 refuses more than 10
// arguments and bulks over 16 KiB; the absolute limits are checked first.
func TestReaderUnauthenticated(t *testing.T) {
	cases := []struct {
		name, in string
		err      string
	}{
		{"11 args", "*11\r\n", "Protocol error: unauthenticated multibulk length"},
		{"10 args", "*10\r\n", ""},
		{"big bulk", "*1\r\n$16385\r\n", "Protocol error: unauthenticated bulk length"},
		{"16 KiB bulk", "*1\r\n$16384\r\n", ""},
		{"absolute first", "*2147483648\r\n", "Protocol error: invalid multibulk length"},
		{"absolute bulk first", "*1\r\n$536870913\r\n", "Protocol error: invalid bulk length"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := NewReader(strings.NewReader(c.in), DefaultLimits)
			r.SetUnauthenticated(true)
			if err := r.Fill(); err != nil {
				t.Fatal(err)
			}
			_, err := r.Next()
			if (err == nil) != (c.err == "") || (err != nil && err.Error() != c.err) {
				t.Fatalf("err = %v, want %q", err, c.err)
			}
		})
	}
	// Turned off between commands (AUTH succeeded), the next command may be big.
	in := "*2\r\n$4\r\nAUTH\r\n$2\r\npw\r\n*1\r\n$20000\r\n" + strings.Repeat("x", 20000) + "\r\n"
	r := NewReader(strings.NewReader(in), DefaultLimits)
	r.SetUnauthenticated(true)
	var got [][]byte
	for len(got) == 0 || len(got[0]) != 20000 {
		args, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if args == nil {
			if err := r.Fill(); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if string(args[0]) == "AUTH" {
			r.SetUnauthenticated(false)
		}
		got = args
	}
}

func equal(a, b [][]string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if strings.Join(a[i], "\x00") != strings.Join(b[i], "\x00") || len(a[i]) != len(b[i]) {
			return false
		}
	}
	return true
}

func TestTooBigInline(t *testing.T) {
	in := strings.Repeat("a", 70<<10)
	_, err := parseAll(t, in, DefaultLimits)
	if err == nil || err.Error() != "Protocol error: too big inline request" {
		t.Fatalf("err = %v", err)
	}
	_, err = parseAll(t, "*"+strings.Repeat("1", 70<<10), DefaultLimits)
	if err == nil || err.Error() != "Protocol error: too big mbulk count string" {
		t.Fatalf("err = %v", err)
	}
	_, err = parseAll(t, "*1\r\n$"+strings.Repeat("1", 70<<10), DefaultLimits)
	if err == nil || err.Error() != "Protocol error: too big bulk count string" {
		t.Fatalf("err = %v", err)
	}
}

// TestSplitEveryBoundary feeds a pipeline one split at a time and checks the
// parse is identical whatever the split.
func TestSplitEveryBoundary(t *testing.T) {
	in := "*3\r\n$3\r\nSET\r\n$3\r\nkey\r\n$10\r\n0123456789\r\nPING\r\n*1\r\n$4\r\nQUIT\r\n"
	want, err := parseAll(t, in, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i <= len(in); i++ {
		r := NewReader(nil, DefaultLimits)
		r.Feed([]byte(in[:i]))
		got, err := collect(t, r)
		if err != nil {
			t.Fatal(err)
		}
		r.Feed([]byte(in[i:]))
		more, err := collect(t, r)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, more...)
		if !equal(got, want) {
			t.Fatalf("split %d: got %q want %q", i, got, want)
		}
	}
}

// byteReader returns one byte per Read, to exercise resumption through Fill.
type byteReader struct{ s []byte }

func (b *byteReader) Read(p []byte) (int, error) {
	if len(b.s) == 0 {
		return 0, io.EOF
	}
	p[0] = b.s[0]
	b.s = b.s[1:]
	return 1, nil
}

func TestLargeBulkByteAtATime(t *testing.T) {
	val := bytes.Repeat([]byte("x"), 100<<10)
	in := AppendCommand(nil, []byte("SET"), []byte("k"), val)
	r := NewReader(&byteReader{s: in}, DefaultLimits)
	for {
		args, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if args != nil {
			if len(args) != 3 || !bytes.Equal(args[2], val) {
				t.Fatalf("bad parse")
			}
			return
		}
		if err := r.Fill(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestWriter(t *testing.T) {
	w := &Writer{Proto: 2}
	w.Null()
	w.MapLen(1)
	w.Double(1.5)
	w.Bool(true)
	w.Verbatim("txt", "hi")
	w.Error("ERR a\r\nb")
	if got := string(w.B); got != "$-1\r\n*2\r\n$3\r\n1.5\r\n:1\r\n$2\r\nhi\r\n-ERR a  b\r\n" {
		t.Fatalf("resp2: %q", got)
	}
	w = &Writer{Proto: 3}
	w.Null()
	w.MapLen(1)
	w.Double(0.1)
	w.Bool(false)
	w.Verbatim("txt", "hi")
	w.BigNumber("123")
	w.PushLen(3)
	if got := string(w.B); got != "_\r\n%1\r\n,0.10000000000000001\r\n#f\r\n=6\r\ntxt:hi\r\n(123\r\n>3\r\n" {
		t.Fatalf("resp3: %q", got)
	}
}

func TestReadValue(t *testing.T) {
	in := "*3\r\n:1\r\n$1\r\n*\r\n:0\r\n%1\r\n+a\r\n_\r\n$-1\r\n=7\r\ntxt:abc\r\n|1\r\n+k\r\n+v\r\n#t\r\n"
	br := bufio.NewReader(strings.NewReader(in))
	want := []string{"[1 * 0]", "[a (nil)]", "(nil)", "abc", "1"}
	for _, w := range want {
		v, err := ReadValue(br, DefaultReplyLimits)
		if err != nil {
			t.Fatal(err)
		}
		if v.String() != w {
			t.Fatalf("got %s want %s", v, w)
		}
	}
	for _, bad := range []string{"*99999999999\r\n", "$5\r\nab\r\n", ":x\r\n", "?\r\n", "+ok\n", strings.Repeat("*1\r\n", 100)} {
		if _, err := ReadValue(bufio.NewReader(strings.NewReader(bad)), DefaultReplyLimits); err == nil {
			t.Fatalf("%q: want error", bad)
		}
	}
}

// chunkReader returns its data at most n bytes per Read, as a socket does.
type chunkReader struct {
	data []byte
	n    int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.data) == 0 {
		return 0, io.EOF
	}
	k := min(len(p), c.n, len(c.data))
	copy(p, c.data[:k])
	c.data = c.data[k:]
	return k, nil
}

// eachCommand parses r's stream to its end, filling as needed, and calls
// fn with each command (its arguments alias the buffer until the next
// Fill).
func eachCommand(t *testing.T, r *Reader, fn func(args [][]byte)) {
	t.Helper()
	for {
		args, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if args != nil {
			fn(args)
			continue
		}
		if err := r.Fill(); err == io.EOF {
			return
		} else if err != nil {
			t.Fatal(err)
		}
	}
}

// TestBigValueBufferReuse: a stream of big values reuses the buffer grown
// for the first one; small commands afterwards shrink it back.
func TestBigValueBufferReuse(t *testing.T) {
	val := strings.Repeat("v", 100<<10)
	var in []byte
	for range 5 {
		in = append(in, "*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$102400\r\n"+val+"\r\n"...)
	}
	var pings []byte
	for range bigIdleFills + 10 {
		pings = append(pings, "*1\r\n$4\r\nPING\r\n"...)
	}
	src := &chunkReader{data: in, n: 64 << 10}
	r := NewReader(src, DefaultLimits)
	var caps []int
	small := 0
	eachCommand(t, r, func(args [][]byte) {
		switch string(args[0]) {
		case "SET":
			if len(args[2]) != len(val) {
				t.Fatalf("value of %d bytes", len(args[2]))
			}
			caps = append(caps, r.BufferCap())
			if len(caps) == 5 {
				// Then one command per fill, as from a client awaiting
				// each reply.
				src.data = append(src.data, pings...)
				src.n = len("*1\r\n$4\r\nPING\r\n")
			}
		case "PING":
			small++
		}
	})
	if len(caps) != 5 || small != bigIdleFills+10 {
		t.Fatalf("%d SETs, %d PINGs", len(caps), small)
	}
	for _, c := range caps[1:] {
		if c != caps[0] {
			t.Fatalf("buffer regrown between big values: capacities %v", caps)
		}
	}
	if got := r.BufferCap(); got != readChunk {
		t.Fatalf("buffer of %d bytes after %d small fills, want %d", got, small, readChunk)
	}
}

// queuedSource is a socket that says how many bytes are still queued after
// each read (TCP_INQ), and records the room each read was given.
type queuedSource struct {
	data  []byte
	rooms []int
}

func (q *queuedSource) Read(p []byte) (int, error) {
	if len(q.data) == 0 {
		return 0, io.EOF
	}
	q.rooms = append(q.rooms, len(p))
	n := copy(p, q.data)
	q.data = q.data[n:]
	return n, nil
}

func (q *queuedSource) Queued() int { return len(q.data) }

// TestFillReadsWhatIsQueued: from a source that tells how much is queued,
// a pipeline of big values is read in one go after the first read (as
// Redis's greedy query buffer reads all it has room for), not a
// readChunk at a time; a read never asks for more than maxGreedyRead
// beyond what the command being read needs, and the commands parse as from
// any reader.
func TestFillReadsWhatIsQueued(t *testing.T) {
	val := strings.Repeat("v", 16<<10)
	var in []byte
	for i := range 16 {
		in = append(in, fmt.Sprintf("*3\r\n$3\r\nSET\r\n$4\r\nk:%02d\r\n$%d\r\n%s\r\n", i, len(val), val)...)
	}
	for _, total := range []int{16, 64} { // 262 KB: one read after the first; 1 MB: capped
		data := bytes.Repeat(in, total/16)
		src := &queuedSource{data: data}
		r := NewReader(src, DefaultLimits)
		sets := 0
		eachCommand(t, r, func(args [][]byte) {
			if string(args[0]) != "SET" || string(args[1]) != fmt.Sprintf("k:%02d", sets%16) || string(args[2]) != val {
				t.Fatalf("command %d: %q %q (%d bytes)", sets, args[0], args[1], len(args[2]))
			}
			sets++
		})
		if sets != total {
			t.Fatalf("%d SETs parsed, want %d", sets, total)
		}
		if want := 1 + (len(data)-readChunk+maxGreedyRead-1)/maxGreedyRead; len(src.rooms) > want {
			t.Fatalf("%d bytes in %d reads (rooms %v), want at most %d", len(data), len(src.rooms), src.rooms, want)
		}
		for _, room := range src.rooms {
			if room > maxGreedyRead+maxGreedyRead/2+len(in) {
				t.Fatalf("a read of %d bytes (rooms %v)", room, src.rooms)
			}
		}
	}
}

// TestReleaseDropsOnlyAnEmptyBuffer: a new Reader holds no buffer; Release
// drops one that holds nothing (an idle client's, as Redis's
// clientsCronResizeQueryBuffer), keeps one with a command or part of one
// buffered, and parsing goes on after it with a fresh buffer.
func TestReleaseDropsOnlyAnEmptyBuffer(t *testing.T) {
	src := &chunkReader{n: 7}
	r := NewReader(src, DefaultLimits)
	if r.BufferCap() != 0 {
		t.Fatalf("new reader holds %d bytes", r.BufferCap())
	}
	if r.Release() {
		t.Fatal("Release of no buffer reported a drop")
	}
	src.data = []byte("*2\r\n$4\r\nECHO\r\n$5\r\nhello\r\n*1\r\n$4\r\nPING\r\n")
	var got []string
	next := func() {
		t.Helper()
		for {
			args, err := r.Next()
			if err != nil {
				t.Fatal(err)
			}
			if args != nil {
				got = append(got, string(bytes.Join(args, []byte(" "))))
				return
			}
			// Between fills: dropped exactly when it holds nothing.
			buffered, held := r.Buffered(), r.BufferCap() > 0
			if dropped := r.Release(); dropped != (held && buffered == 0) {
				t.Fatalf("Release with %d bytes buffered: %v", buffered, dropped)
			}
			if err := r.Fill(); err != nil {
				t.Fatal(err)
			}
		}
	}
	next()
	off := r.Offset()
	next()
	if r.Buffered() != 0 || !r.Release() || r.BufferCap() != 0 {
		t.Fatalf("after the last command: buffered %d, cap %d", r.Buffered(), r.BufferCap())
	}
	if r.Offset() != off+int64(len("*1\r\n$4\r\nPING\r\n")) {
		t.Fatalf("offset %d after release, want %d", r.Offset(), off+14)
	}
	src.data, src.n = append(src.data, "*1\r\n$4\r\nPING\r\n"...), 100
	next()
	if r.BufferCap() != readChunk {
		t.Fatalf("buffer after release %d bytes, want %d", r.BufferCap(), readChunk)
	}
	if want := []string{"ECHO hello", "PING", "PING"}; !slices.Equal(got, want) {
		t.Fatalf("parsed %q, want %q", got, want)
	}
}
