package resp

import (
	"bytes"
	"slices"
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

// TestPeekArgs: each command's third argument beside its key, nil for a
// command without one and for a script call, and no more than either
// slice holds.
func TestPeekArgs(t *testing.T) {
	in := "*4\r\n$4\r\nHSET\r\n$1\r\nh\r\n$2\r\nf1\r\n$1\r\nv\r\n" +
		"*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n" +
		"*3\r\n$4\r\nSADD\r\n$1\r\ns\r\n$1\r\nm\r\n" +
		"*4\r\n$4\r\nEVAL\r\n$1\r\nx\r\n$1\r\n1\r\n$1\r\nk\r\n" +
		"*3\r\n$5\r\nFCALL\r\n$1\r\nf\r\n$1\r\n0\r\n"
	r := NewReader(nil, DefaultLimits)
	r.Feed([]byte(in))
	keys, subs := r.PeekArgs(make([][]byte, 0, 32), make([][]byte, 0, 32))
	render := func(xs [][]byte) []string {
		var out []string
		for _, x := range xs {
			if x == nil {
				out = append(out, "<nil>")
			} else {
				out = append(out, string(x))
			}
		}
		return out
	}
	if got, want := render(keys), []string{"h", "n", "s", "k", "f"}; !slices.Equal(got, want) {
		t.Fatalf("keys %q, want %q", got, want)
	}
	if got, want := render(subs), []string{"f1", "<nil>", "m", "<nil>", "<nil>"}; !slices.Equal(got, want) {
		t.Fatalf("subs %q, want %q", got, want)
	}
	keys, subs = r.PeekArgs(make([][]byte, 0, 32), make([][]byte, 0, 2))
	if len(keys) != 2 || len(subs) != 2 {
		t.Fatalf("with room for 2 subs: %d keys, %d subs", len(keys), len(subs))
	}
	if keys, subs = r.PeekArgs(make([][]byte, 0, 3), nil); len(keys) != 3 || subs != nil {
		t.Fatalf("without subs: %d keys, subs %q", len(keys), subs)
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
		keys2, subs := r.PeekArgs(make([][]byte, 0, 32), make([][]byte, 0, 32))
		if r.Buffered() != len(data) || len(keys2) != len(keys) || len(subs) != len(keys) {
			t.Fatalf("PeekArgs: %d keys, %d subs, PeekKeys %d", len(keys2), len(subs), len(keys))
		}
		want := make([]string, len(keys))
		wantSub := make([]*string, len(keys))
		for i, k := range keys {
			want[i] = string(k) // the buffer is reused by parsing
			if string(keys2[i]) != want[i] {
				t.Fatalf("key %d: PeekArgs %q, PeekKeys %q", i, keys2[i], k)
			}
			if subs[i] != nil {
				s := string(subs[i])
				wantSub[i] = &s
			}
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
			switch script := len(args) >= 3 && scriptCall(args[0]); {
			case len(args) < 3 || script:
				if wantSub[i] != nil {
					t.Fatalf("command %d: third argument %q peeked, parsed %q", i, *wantSub[i], args)
				}
			case wantSub[i] == nil || *wantSub[i] != string(args[2]):
				t.Fatalf("command %d: third argument not peeked, parsed %q", i, args)
			}
		}
	})
}
