package resp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// Kind is the type of a reply read by ReadValue.
type Kind byte

// Reply kinds, named by their RESP prefix.
const (
	KindSimple   Kind = '+'
	KindError    Kind = '-'
	KindInt      Kind = ':'
	KindBulk     Kind = '$'
	KindArray    Kind = '*'
	KindNull     Kind = '_'
	KindMap      Kind = '%'
	KindSet      Kind = '~'
	KindPush     Kind = '>'
	KindDouble   Kind = ','
	KindBool     Kind = '#'
	KindVerbatim Kind = '='
	KindBigNum   Kind = '('
	KindBlobErr  Kind = '!'
)

// Value is one decoded reply. Str holds simple, error, bulk, double,
// verbatim and big-number text; Int integers and booleans (0/1); Elems the
// elements of aggregates (a map is flattened to key, value, ...).
// A RESP2 null bulk or null array decodes as KindNull.
type Value struct {
	Kind  Kind
	Str   string
	Int   int64
	Elems []Value
}

// IsError reports whether v is an error reply.
func (v Value) IsError() bool { return v.Kind == KindError || v.Kind == KindBlobErr }

// String renders v for logs and tests (not the wire form).
func (v Value) String() string {
	switch v.Kind {
	case KindNull:
		return "(nil)"
	case KindInt, KindBool:
		return strconv.FormatInt(v.Int, 10)
	case KindArray, KindMap, KindSet, KindPush:
		parts := make([]string, len(v.Elems))
		for i, e := range v.Elems {
			parts[i] = e.String()
		}
		return "[" + strings.Join(parts, " ") + "]"
	default:
		return v.Str
	}
}

// ReplyLimits bound what ReadValue accepts from a peer.
type ReplyLimits struct {
	MaxBulk  int64 // largest bulk string
	MaxElems int64 // largest aggregate
	MaxDepth int   // nesting
}

// DefaultReplyLimits suit replies from Redis-like peers.
var DefaultReplyLimits = ReplyLimits{MaxBulk: 512 << 20, MaxElems: 1 << 24, MaxDepth: 32}

// ErrBadReply wraps malformed replies.
var ErrBadReply = errors.New("resp: malformed reply")

// ReadValue reads one reply from br (RESP2 or RESP3), enforcing limits, so a
// hostile peer can neither panic nor exhaust memory. Attributes (|) are
// read and dropped.
func ReadValue(br *bufio.Reader, lim ReplyLimits) (Value, error) {
	return readValue(br, lim, 0)
}

func readLine(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadSlice('\n')
	if err == bufio.ErrBufferFull {
		return nil, fmt.Errorf("%w: line too long", ErrBadReply)
	}
	if err != nil {
		if err == io.EOF && len(line) > 0 {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if len(line) < 2 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("%w: line not terminated by CRLF", ErrBadReply)
	}
	return line[:len(line)-2], nil
}

func readValue(br *bufio.Reader, lim ReplyLimits, depth int) (Value, error) {
	if depth > lim.MaxDepth {
		return Value{}, fmt.Errorf("%w: nesting too deep", ErrBadReply)
	}
	line, err := readLine(br)
	if err != nil {
		return Value{}, err
	}
	if len(line) == 0 {
		return Value{}, fmt.Errorf("%w: empty line", ErrBadReply)
	}
	k := Kind(line[0])
	body := line[1:]
	switch k {
	case KindSimple, KindError, KindDouble, KindBigNum:
		return Value{Kind: k, Str: string(body)}, nil
	case KindInt:
		n, ok := redisutil.String2ll(body)
		if !ok {
			return Value{}, fmt.Errorf("%w: bad integer %q", ErrBadReply, body)
		}
		return Value{Kind: k, Int: n}, nil
	case KindNull:
		return Value{Kind: KindNull}, nil
	case KindBool:
		if len(body) != 1 || (body[0] != 't' && body[0] != 'f') {
			return Value{}, fmt.Errorf("%w: bad boolean", ErrBadReply)
		}
		v := Value{Kind: k}
		if body[0] == 't' {
			v.Int = 1
		}
		return v, nil
	case KindBulk, KindVerbatim, KindBlobErr:
		n, ok := redisutil.String2ll(body)
		if !ok || n < -1 || n > lim.MaxBulk {
			return Value{}, fmt.Errorf("%w: bad bulk length %q", ErrBadReply, body)
		}
		if n == -1 {
			return Value{Kind: KindNull}, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(br, buf); err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return Value{}, err
		}
		if buf[n] != '\r' || buf[n+1] != '\n' {
			return Value{}, fmt.Errorf("%w: bulk not terminated by CRLF", ErrBadReply)
		}
		s := string(buf[:n])
		if k == KindVerbatim && len(s) >= 4 && s[3] == ':' {
			s = s[4:]
		}
		return Value{Kind: k, Str: s}, nil
	case KindArray, KindSet, KindPush, KindMap, '|':
		n, ok := redisutil.String2ll(body)
		if !ok || n < -1 || n > lim.MaxElems {
			return Value{}, fmt.Errorf("%w: bad aggregate length %q", ErrBadReply, body)
		}
		if n == -1 {
			return Value{Kind: KindNull}, nil
		}
		count := n
		if k == KindMap || k == '|' {
			count = 2 * n
		}
		pre := count
		if pre > 1024 {
			pre = 1024
		}
		elems := make([]Value, 0, pre)
		for i := int64(0); i < count; i++ {
			e, err := readValue(br, lim, depth+1)
			if err != nil {
				return Value{}, err
			}
			elems = append(elems, e)
		}
		if k == '|' { // attribute: skip, the real reply follows
			return readValue(br, lim, depth)
		}
		return Value{Kind: k, Elems: elems}, nil
	}
	return Value{}, fmt.Errorf("%w: unknown type byte %q", ErrBadReply, line[0])
}
