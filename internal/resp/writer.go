package resp

import (
	"math"
	"strconv"
)

// Writer appends replies to B in the connection's protocol (2 or 3). It
// never allocates beyond growing B, so handlers can reply without fmt.
// RESP3-only types degrade the way Redis's networking.c does for RESP2.
type Writer struct {
	B     []byte
	Proto int // 2 or 3
}

// Reset empties the buffer, keeping its capacity.
func (w *Writer) Reset() { w.B = w.B[:0] }

func (w *Writer) line(prefix byte, s string) {
	w.B = append(w.B, prefix)
	w.B = append(w.B, s...)
	w.B = append(w.B, '\r', '\n')
}

func (w *Writer) lenLine(prefix byte, n int) {
	w.B = append(w.B, prefix)
	w.B = strconv.AppendInt(w.B, int64(n), 10)
	w.B = append(w.B, '\r', '\n')
}

// OK appends +OK.
func (w *Writer) OK() { w.B = append(w.B, "+OK\r\n"...) }

// Simple appends a status reply (+s). Newlines in s are replaced by spaces,
// as Redis's addReplyStatusLength callers guarantee.
func (w *Writer) Simple(s string) { w.line('+', sanitize(s)) }

// Error appends an error reply; s must start with its code ("ERR ...",
// "WRONGTYPE ...").
func (w *Writer) Error(s string) { w.line('-', sanitize(s)) }

func sanitize(s string) string {
	for i := 0; i < len(s); i++ {
		if s[i] == '\r' || s[i] == '\n' {
			b := []byte(s)
			for j := range b {
				if b[j] == '\r' || b[j] == '\n' {
					b[j] = ' '
				}
			}
			return string(b)
		}
	}
	return s
}

// Int appends an integer reply.
func (w *Writer) Int(n int64) {
	w.B = append(w.B, ':')
	w.B = strconv.AppendInt(w.B, n, 10)
	w.B = append(w.B, '\r', '\n')
}

// Bulk appends a bulk string.
func (w *Writer) Bulk(b []byte) {
	w.lenLine('$', len(b))
	w.B = append(w.B, b...)
	w.B = append(w.B, '\r', '\n')
}

// BulkString appends a bulk string.
func (w *Writer) BulkString(s string) {
	w.lenLine('$', len(s))
	w.B = append(w.B, s...)
	w.B = append(w.B, '\r', '\n')
}

// BulkInt appends an integer formatted as a bulk string.
func (w *Writer) BulkInt(n int64) {
	var tmp [24]byte
	w.Bulk(strconv.AppendInt(tmp[:0], n, 10))
}

// Null appends the null bulk ($-1 in RESP2, _ in RESP3).
func (w *Writer) Null() {
	if w.Proto >= 3 {
		w.B = append(w.B, "_\r\n"...)
	} else {
		w.B = append(w.B, "$-1\r\n"...)
	}
}

// NullArray appends the null array (*-1 in RESP2, _ in RESP3).
func (w *Writer) NullArray() {
	if w.Proto >= 3 {
		w.B = append(w.B, "_\r\n"...)
	} else {
		w.B = append(w.B, "*-1\r\n"...)
	}
}

// ArrayLen appends an array header.
func (w *Writer) ArrayLen(n int) { w.lenLine('*', n) }

// MapLen appends a map header of n pairs (RESP2: an array of 2n).
func (w *Writer) MapLen(n int) {
	if w.Proto >= 3 {
		w.lenLine('%', n)
	} else {
		w.lenLine('*', 2*n)
	}
}

// SetLen appends a set header (RESP2: an array).
func (w *Writer) SetLen(n int) {
	if w.Proto >= 3 {
		w.lenLine('~', n)
	} else {
		w.lenLine('*', n)
	}
}

// PushLen appends a push header (RESP2: an array), used for pub/sub.
func (w *Writer) PushLen(n int) {
	if w.Proto >= 3 {
		w.lenLine('>', n)
	} else {
		w.lenLine('*', n)
	}
}

// Double appends a double (RESP2: a bulk string), formatted like Redis's
// addReplyDouble (%.17g; inf/-inf).
func (w *Writer) Double(f float64) {
	var tmp [40]byte
	var s []byte
	switch {
	case math.IsInf(f, 1):
		s = append(tmp[:0], "inf"...)
	case math.IsInf(f, -1):
		s = append(tmp[:0], "-inf"...)
	case math.IsNaN(f):
		s = append(tmp[:0], "nan"...)
	default:
		s = strconv.AppendFloat(tmp[:0], f, 'g', 17, 64)
	}
	if w.Proto >= 3 {
		w.B = append(w.B, ',')
		w.B = append(w.B, s...)
		w.B = append(w.B, '\r', '\n')
	} else {
		w.Bulk(s)
	}
}

// Bool appends a boolean (RESP2: integer 1/0).
func (w *Writer) Bool(b bool) {
	if w.Proto >= 3 {
		if b {
			w.B = append(w.B, "#t\r\n"...)
		} else {
			w.B = append(w.B, "#f\r\n"...)
		}
		return
	}
	if b {
		w.B = append(w.B, ":1\r\n"...)
	} else {
		w.B = append(w.B, ":0\r\n"...)
	}
}

// Verbatim appends a verbatim string with a 3-letter format such as "txt"
// (RESP2: a bulk string), as Redis's addReplyVerbatim.
func (w *Writer) Verbatim(format, s string) {
	if w.Proto < 3 {
		w.BulkString(s)
		return
	}
	w.lenLine('=', len(s)+4)
	w.B = append(w.B, format...)
	w.B = append(w.B, ':')
	w.B = append(w.B, s...)
	w.B = append(w.B, '\r', '\n')
}

// BigNumber appends a big number given as decimal digits (RESP2: bulk).
func (w *Writer) BigNumber(s string) {
	if w.Proto < 3 {
		w.BulkString(s)
		return
	}
	w.line('(', s)
}

// Value appends a decoded reply (ReadValue's) in w's protocol: in RESP2 the
// RESP3 types fall back as the typed writers do (maps and sets to flat
// arrays, doubles and big numbers to bulk strings). A verbatim string is
// written with the "txt" format (ReadValue drops the format).
func (w *Writer) Value(v Value) {
	switch v.Kind {
	case KindSimple:
		w.Simple(v.Str)
	case KindError, KindBlobErr:
		w.Error(v.Str)
	case KindInt:
		w.Int(v.Int)
	case KindBulk:
		w.BulkString(v.Str)
	case KindNull:
		w.Null()
	case KindBool:
		w.Bool(v.Int != 0)
	case KindDouble:
		if w.Proto >= 3 {
			w.line(',', v.Str)
		} else {
			w.BulkString(v.Str)
		}
	case KindBigNum:
		w.BigNumber(v.Str)
	case KindVerbatim:
		w.Verbatim("txt", v.Str)
	case KindArray:
		w.ArrayLen(len(v.Elems))
	case KindSet:
		w.SetLen(len(v.Elems))
	case KindMap:
		w.MapLen(len(v.Elems) / 2)
	case KindPush:
		w.PushLen(len(v.Elems))
	default:
		w.BulkString(v.Str)
	}
	for _, e := range v.Elems {
		w.Value(e)
	}
}

// Raw appends already-encoded protocol bytes.
func (w *Writer) Raw(b []byte) { w.B = append(w.B, b...) }

// AppendCommand encodes argv as a multibulk request (used to propagate
// commands and to talk to other instances).
func AppendCommand(dst []byte, argv ...[]byte) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(argv)), 10)
	dst = append(dst, '\r', '\n')
	for _, a := range argv {
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(len(a)), 10)
		dst = append(dst, '\r', '\n')
		dst = append(dst, a...)
		dst = append(dst, '\r', '\n')
	}
	return dst
}

// AppendCommandStrings is AppendCommand for string arguments.
func AppendCommandStrings(dst []byte, argv ...string) []byte {
	dst = append(dst, '*')
	dst = strconv.AppendInt(dst, int64(len(argv)), 10)
	dst = append(dst, '\r', '\n')
	for _, a := range argv {
		dst = append(dst, '$')
		dst = strconv.AppendInt(dst, int64(len(a)), 10)
		dst = append(dst, '\r', '\n')
		dst = append(dst, a...)
		dst = append(dst, '\r', '\n')
	}
	return dst
}
