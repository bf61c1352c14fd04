package replication

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

const testMark = "0123456789abcdef0123456789abcdef01234567"

func TestParsePayloadHeader(t *testing.T) {
	for _, c := range []struct {
		line string
		want PayloadHeader
		err  string
	}{
		{"", PayloadHeader{Kind: HeaderKeepAlive}, ""},
		{"$0", PayloadHeader{Kind: HeaderSize, Size: 0}, ""},
		{"$175", PayloadHeader{Kind: HeaderSize, Size: 175}, ""},
		{"$EOF:" + testMark, PayloadHeader{Kind: HeaderEOF, EOFMark: testMark}, ""},
		{"$EOF:" + testMark + "zz", PayloadHeader{Kind: HeaderEOF, EOFMark: testMark}, ""}, // first 40 used
		{"$EOF:" + testMark[:39], PayloadHeader{}, "invalid bulk length"},
		{"$-1", PayloadHeader{}, "invalid bulk length"},
		{"$abc", PayloadHeader{}, "invalid bulk length"},
		{"$", PayloadHeader{}, "invalid bulk length"},
		{"-ERR oops", PayloadHeader{}, "MASTER aborted replication with an error: ERR oops"},
		{"+OK", PayloadHeader{}, "Bad protocol from MASTER, the first byte is not '$' (we received '+OK'), are you sure the host and port are right?"},
	} {
		got, err := ParsePayloadHeader(c.line)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: err %v, want %q", c.line, err, c.err)
			}
			continue
		}
		if err != nil || got != c.want {
			t.Errorf("%q: %+v %v", c.line, got, err)
		}
	}
}

// chunks is a reader returning the given pieces one per Read.
type chunks struct{ parts [][]byte }

func (c *chunks) Read(p []byte) (int, error) {
	for len(c.parts) > 0 && len(c.parts[0]) == 0 {
		c.parts = c.parts[1:]
	}
	if len(c.parts) == 0 {
		return 0, io.EOF
	}
	n := copy(p, c.parts[0])
	c.parts[0] = c.parts[0][n:]
	return n, nil
}

// TestEOFMarkSplitEverywhere cuts payload+mark into two source reads at
// every position (so the mark is split across reads at every boundary), and
// also into three reads around the mark, with callers reading through
// buffers of several sizes. (A payload that itself ends with the mark at a
// read boundary would end early, in Redis too: the mark is random.)
func TestEOFMarkSplitEverywhere(t *testing.T) {
	for _, payload := range []string{"", "x", "REDIS0010 some rdb bytes", strings.Repeat("ab", 70), testMark[:20], testMark[5:] + "x"} {
		wire := payload + testMark
		for i := 0; i <= len(wire); i++ {
			for j := i; j <= len(wire); j += 7 {
				for _, bufSize := range []int{1, 3, 40, 41, 512} {
					src := &chunks{parts: [][]byte{[]byte(wire[:i]), []byte(wire[i:j]), []byte(wire[j:])}}
					r := NewEOFMarkReader(src, testMark)
					got, err := readAllWith(r, bufSize)
					if err != nil || string(got) != payload {
						t.Fatalf("payload %q split %d/%d buf %d: got %q, %v", payload, i, j, bufSize, got, err)
					}
				}
			}
		}
	}
}

func readAllWith(r io.Reader, size int) ([]byte, error) {
	var out []byte
	buf := make([]byte, size)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

func TestEOFMarkByteAtATime(t *testing.T) {
	payload := bytes.Repeat([]byte("0123456789"), 1000)
	r := NewEOFMarkReader(iotest.OneByteReader(bytes.NewReader(append(append([]byte{}, payload...), testMark...))), testMark)
	got, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(got, payload) {
		t.Fatalf("%d bytes, %v", len(got), err)
	}
	if err := iotest.TestReader(NewEOFMarkReader(strings.NewReader("hello"+testMark), testMark), []byte("hello")); err != nil {
		t.Fatal(err)
	}
	// The reader holds back at most the mark's length.
	er := NewEOFMarkReader(iotest.OneByteReader(bytes.NewReader(append(append([]byte{}, payload...), testMark...))), testMark)
	buf := make([]byte, 1)
	for i := 0; i < 100; i++ {
		if _, err := er.Read(buf); err != nil {
			t.Fatal(err)
		}
		if len(er.hold) > len(testMark) {
			t.Fatalf("holding %d bytes", len(er.hold))
		}
	}
}

func TestEOFMarkTruncated(t *testing.T) {
	for _, wire := range []string{"", "abc", "payload" + testMark[:39], testMark[1:]} {
		_, err := io.ReadAll(NewEOFMarkReader(strings.NewReader(wire), testMark))
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Errorf("%q: %v", wire, err)
		}
	}
	// A source error is passed on.
	boom := errors.New("boom")
	_, err := io.ReadAll(NewEOFMarkReader(iotest.ErrReader(boom), testMark))
	if !errors.Is(err, boom) {
		t.Fatal(err)
	}
	// A source that never makes progress does not hang the reader.
	_, err = NewEOFMarkReader(zeroReader{}, testMark).Read(make([]byte, 10))
	if !errors.Is(err, io.ErrNoProgress) {
		t.Fatal(err)
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { return 0, nil }

func TestSizedPayload(t *testing.T) {
	// Exactly len bytes: the stream that follows is left in the source.
	src := strings.NewReader("RDBDATA*1\r\n$4\r\nPING\r\n")
	r := NewPayloadReader(src, PayloadHeader{Kind: HeaderSize, Size: 7})
	got, err := io.ReadAll(iotest.OneByteReader(r))
	if err != nil || string(got) != "RDBDATA" {
		t.Fatalf("%q %v", got, err)
	}
	rest, _ := io.ReadAll(src)
	if string(rest) != "*1\r\n$4\r\nPING\r\n" {
		t.Fatalf("read past the payload: %q", rest)
	}
	// Short source.
	_, err = io.ReadAll(NewPayloadReader(strings.NewReader("RDB"), PayloadHeader{Kind: HeaderSize, Size: 7}))
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatal(err)
	}
	// Empty payload.
	got, err = io.ReadAll(NewPayloadReader(strings.NewReader("x"), PayloadHeader{Kind: HeaderSize}))
	if err != nil || len(got) != 0 {
		t.Fatal(got, err)
	}
	// EOF header dispatches to the mark reader.
	got, err = io.ReadAll(NewPayloadReader(strings.NewReader("abc"+testMark), PayloadHeader{Kind: HeaderEOF, EOFMark: testMark}))
	if err != nil || string(got) != "abc" {
		t.Fatal(got, err)
	}
}
