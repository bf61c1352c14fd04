package resp

import (
	"bytes"
	"testing"
)

func TestPeekKeys(t *testing.T) {
	cases := []struct {
		in   string
		want []string
	}{
		{"*2\r\n$4\r\nINCR\r\n$3\r\nk:1\r\n*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\nb\r\n", []string{"k:1", "a"}},
		// stops at a one-argument command, an inline one, an incomplete one
		{"*2\r\n$3\r\nGET\r\n$1\r\nx\r\n*1\r\n$4\r\nPING\r\n*2\r\n$3\r\nGET\r\n$1\r\ny\r\n", []string{"x"}},
		{"*2\r\n$3\r\nGET\r\n$1\r\nx\r\nGET y\r\n", []string{"x"}},
		{"*2\r\n$3\r\nGET\r\n$1\r\nx\r\n*2\r\n$3\r\nGET\r\n$5\r\nyy", []string{"x"}},
		{"*2\r\n$3\r\nGET\r\n$1\r\n", nil},
		{"*2\r\n$3\r\nGET\r\n$-1\r\n", nil},
		{"GET x\r\n", nil},
		{"", nil},
		// an empty key is a key
		{"*2\r\n$3\r\nGET\r\n$0\r\n\r\n", []string{""}},
		// a script's first key; with no keys, the second argument
		{"*4\r\n$7\r\nevalsha\r\n$3\r\nabc\r\n$1\r\n1\r\n$1\r\nk\r\n*3\r\n$5\r\nFCALL\r\n$1\r\nf\r\n$1\r\n0\r\n*4\r\n$4\r\nEVAL\r\n$1\r\ns\r\n$1\r\n0\r\n$1\r\na\r\n", []string{"k", "f", "s"}},
	}
	for _, c := range cases {
		r := NewReader(nil, DefaultLimits)
		r.Feed([]byte(c.in))
		got := r.PeekKeys(make([][]byte, 0, 32))
		if len(got) != len(c.want) {
			t.Fatalf("%q: got %q, want %q", c.in, got, c.want)
		}
		for i := range got {
			if string(got[i]) != c.want[i] {
				t.Fatalf("%q: got %q, want %q", c.in, got, c.want)
			}
		}
	}
	// at most cap(dst) keys, and nothing consumed
	var in bytes.Buffer
	for i := 0; i < 40; i++ {
		in.WriteString("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n")
	}
	r := NewReader(nil, DefaultLimits)
	r.Feed(in.Bytes())
	if got := r.PeekKeys(make([][]byte, 0, 32)); len(got) != 32 {
		t.Fatalf("got %d keys, want 32", len(got))
	}
	if r.Buffered() != in.Len() {
		t.Fatalf("PeekKeys consumed input")
	}
	// not in the middle of a command, nor in the other modes
	r = NewReader(nil, DefaultLimits)
	r.Feed([]byte("*2\r\n$3\r\nGET\r\n$1"))
	if args, err := r.Next(); args != nil || err != nil {
		t.Fatalf("Next = %q, %v", args, err)
	}
	r.Feed([]byte("\r\nx\r\n*2\r\n$3\r\nGET\r\n$1\r\ny\r\n"))
	if got := r.PeekKeys(make([][]byte, 0, 32)); len(got) != 0 {
		t.Fatalf("mid-command: got %q", got)
	}
	r = NewReader(nil, DefaultLimits)
	r.SetMode(ModeMaster)
	r.Feed([]byte("*2\r\n$3\r\nGET\r\n$1\r\nx\r\n"))
	if got := r.PeekKeys(make([][]byte, 0, 32)); len(got) != 0 {
		t.Fatalf("ModeMaster: got %q", got)
	}
}

// FuzzPeekKeys checks that every key PeekKeys reports is the second
// argument (a script call's fourth) of the command the parser then returns
// in that place, and that
// it never panics or consumes input.
func FuzzPeekKeys(f *testing.F) {
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n*3\r\n$3\r\nSET\r\n$1\r\na\r\n$1\r\nb\r\n"))
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$01\r\nk\r\n"))
	f.Add([]byte("*4\r\n$7\r\nEVALsha\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\nk\r\n"))
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$9999999999999999999\r\nk\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r := NewReader(nil, Limits{MaxBulkLen: 1 << 16, MaxArgs: 1 << 10, MaxInline: 1 << 12})
		r.Feed(data)
		keys := r.PeekKeys(make([][]byte, 0, 32))
		if r.Buffered() != len(data) {
			t.Fatalf("PeekKeys consumed input")
		}
		want := make([]string, len(keys))
		for i, k := range keys {
			want[i] = string(k) // the buffer is reused by parsing
		}
		for i := range want {
			args, err := r.Next()
			if err != nil {
				return // the parser refuses what PeekKeys read further
			}
			if args == nil {
				t.Fatalf("key %d %q: the parser needs more input", i, want[i])
			}
			first := 1
			if len(args) >= 4 && scriptCall(args[0]) && string(args[2]) != "0" {
				first = 3
			}
			if len(args) < 2 || string(args[first]) != want[i] {
				t.Fatalf("key %d: peeked %q, parsed %q", i, want[i], args)
			}
		}
	})
}
