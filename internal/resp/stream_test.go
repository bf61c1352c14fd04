package resp

import "testing"

func TestCommandStreamSelect(t *testing.T) {
	var s CommandStream
	var b []byte
	b = s.Append(b, 0, [][]byte{[]byte("set"), []byte("a"), []byte("1")})
	b = s.Append(b, 0, [][]byte{[]byte("DEL"), []byte("a")})
	b = s.Append(b, 12, [][]byte{[]byte("incr"), []byte("n")})
	s.Reset()
	b = s.Append(b, 12, [][]byte{[]byte("incr"), []byte("n")})
	want := "*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n*3\r\n$3\r\nset\r\n$1\r\na\r\n$1\r\n1\r\n" +
		"*2\r\n$3\r\nDEL\r\n$1\r\na\r\n" +
		"*2\r\n$6\r\nSELECT\r\n$2\r\n12\r\n*2\r\n$4\r\nincr\r\n$1\r\nn\r\n" +
		"*2\r\n$6\r\nSELECT\r\n$2\r\n12\r\n*2\r\n$4\r\nincr\r\n$1\r\nn\r\n"
	if string(b) != want {
		t.Fatalf("got %q\nwant %q", b, want)
	}
}
