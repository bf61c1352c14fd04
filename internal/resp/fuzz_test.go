package resp

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"testing"
	"testing/iotest"
)

// FuzzReader splits random input at a random point and at every byte
// boundary (one byte per Fill), in each Mode, and checks the reader never
// panics, gives the same commands whatever the split, and never holds more
// than the limits allow. In ModeMaster and ModeAOF, whose callers count
// bytes, the split also leaves the outcome (error or not, and ModeAOF's
// error and offset) unchanged, and each command's raw bytes are the
// stream's bytes just before Offset.
func FuzzReader(f *testing.F) {
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"), uint16(3))
	f.Add([]byte("set a \"b\\x41\"\r\nping\n"), uint16(5))
	f.Add([]byte("*1\r\n$-5\r\n"), uint16(1))
	f.Add([]byte("*100000000\r\n"), uint16(0))
	f.Add([]byte("*2\r\n$6\r\nSELECT\r\n$1\r\n0\r\n\n\r\n*0\r\n*1\r\n$4\r\nPING\r\n"), uint16(24))
	f.Add([]byte("#ts:1\r\n*1\r\n$5\r\nMULTI\r\n*+1\r\n$04\r\nEXEC\r\n*1\r\n$3\r\nab"), uint16(9))
	f.Add([]byte("*1\r\n$4294967296\r\n"), uint16(7))
	lim := Limits{MaxBulkLen: 1 << 16, MaxArgs: 1 << 10, MaxInline: 1 << 12}
	aofLim := Limits{MaxBulkLen: 1 << 62, MaxArgs: 1 << 62, MaxInline: 128}
	f.Fuzz(func(t *testing.T, data []byte, split uint16) {
		for _, mode := range []Mode{ModeClient, ModeMaster, ModeAOF} {
			l := lim
			if mode == ModeAOF {
				l = aofLim
			}
			// run parses parts fed one after the other, or data read
			// through Fill from rd when rd is not nil.
			run := func(rd io.Reader, parts ...[]byte) (string, error) {
				r := NewReader(rd, l)
				r.SetMode(mode)
				var out bytes.Buffer
				var fed []byte
				var total int64
				next := func() (bool, error) {
					for {
						args, raw, err := r.NextRaw()
						if err != nil {
							return false, err
						}
						if raw == nil {
							return true, nil
						}
						if int64(len(args)) > l.MaxArgs {
							t.Fatalf("too many args: %d", len(args))
						}
						total += int64(len(raw))
						if mode != ModeClient {
							off := r.Offset()
							if rd == nil && !bytes.Equal(fed[off-int64(len(raw)):off], raw) {
								t.Fatalf("mode %d: raw %q is not the stream's bytes before offset %d", mode, raw, off)
							}
							if mode == ModeMaster && total != off {
								t.Fatalf("raw bytes %d != offset %d", total, off)
							}
						}
						if len(args) == 0 && mode == ModeClient {
							continue
						}
						for _, a := range args {
							if int64(len(a)) > l.MaxBulkLen {
								t.Fatalf("arg too big")
							}
							out.WriteString(string(a))
							out.WriteByte(0)
						}
						out.WriteByte(1)
					}
				}
				if rd != nil {
					for {
						if _, err := next(); err != nil {
							return out.String(), err
						}
						if err := r.Fill(); err != nil {
							fmt.Fprintf(&out, "end %d", r.Buffered())
							return out.String(), nil
						}
					}
				}
				for _, p := range parts {
					fed = append(fed, p...)
					r.Feed(p)
					if _, err := next(); err != nil {
						return out.String(), err
					}
				}
				fmt.Fprintf(&out, "end %d", r.Buffered())
				return out.String(), nil
			}
			s := min(int(split), len(data))
			whole, errWhole := run(nil, data)
			parts, errParts := run(nil, data[:s], data[s:])
			bytewise, errBytewise := run(iotest.OneByteReader(bytes.NewReader(data)), nil)
			if mode == ModeClient {
				if (errWhole == nil) == (errParts == nil) && whole != parts {
					t.Fatalf("split at %d changed the parse", s)
				}
				if (errWhole == nil) == (errBytewise == nil) && whole != bytewise {
					t.Fatalf("reading byte by byte changed the parse")
				}
				continue
			}
			if (errWhole == nil) != (errParts == nil) || (errWhole == nil) != (errBytewise == nil) {
				t.Fatalf("mode %d: errors %v / %v (split at %d) / %v (byte by byte)", mode, errWhole, errParts, s, errBytewise)
			}
			if whole != parts || whole != bytewise {
				t.Fatalf("mode %d: split at %d or byte by byte changed the parse:\n%q\n%q\n%q", mode, s, whole, parts, bytewise)
			}
			if mode == ModeAOF && errWhole != nil && (*errWhole.(*ProtocolError) != *errParts.(*ProtocolError) || *errWhole.(*ProtocolError) != *errBytewise.(*ProtocolError)) {
				t.Fatalf("AOF errors differ: %+v / %+v / %+v", errWhole, errParts, errBytewise)
			}
		}
		_, _ = ReadValue(bufio.NewReader(bytes.NewReader(data)), ReplyLimits{MaxBulk: 1 << 16, MaxElems: 1 << 10, MaxDepth: 8})
	})
}
