package resp

import (
	"bufio"
	"bytes"
	"testing"
)

// FuzzReader splits random input at a random point and checks the reader
// never panics, gives the same commands whatever the split, and never holds
// more than the limits allow.
func FuzzReader(f *testing.F) {
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"), uint16(3))
	f.Add([]byte("set a \"b\\x41\"\r\nping\n"), uint16(5))
	f.Add([]byte("*1\r\n$-5\r\n"), uint16(1))
	f.Add([]byte("*100000000\r\n"), uint16(0))
	lim := Limits{MaxBulkLen: 1 << 16, MaxArgs: 1 << 10, MaxInline: 1 << 12}
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		run := func(parts ...[]byte) (string, bool) {
			r := NewReader(nil, lim)
			var out bytes.Buffer
			for _, p := range parts {
				r.Feed(p)
				for {
					args, err := r.Next()
					if err != nil {
						return out.String(), true
					}
					if args == nil {
						break
					}
					if int64(len(args)) > lim.MaxArgs {
						t.Fatalf("too many args: %d", len(args))
					}
					for _, a := range args {
						if int64(len(a)) > lim.MaxBulkLen {
							t.Fatalf("arg too big")
						}
						out.WriteString(string(a))
						out.WriteByte(0)
					}
					out.WriteByte(1)
				}
			}
			return out.String(), false
		}
		s := int(split)
		if s > len(data) {
			s = len(data)
		}
		whole, errWhole := run(data)
		parts, errParts := run(data[:s], data[s:])
		if errWhole == errParts && whole != parts {
			t.Fatalf("split at %d changed the parse", s)
		}
		_, _ = ReadValue(bufio.NewReader(bytes.NewReader(data)), ReplyLimits{MaxBulk: 1 << 16, MaxElems: 1 << 10, MaxDepth: 8})
	})
}
