package resp

import (
	"bytes"
	"errors"
	"io"
	"math"
	"strconv"

	"github.com/vigil-kv/vigil/internal/redisutil"
)

// Limits bound what a Reader accepts from a peer, as Redis's networking.c does.
type Limits struct {
	// MaxBulkLen is proto-max-bulk-len: the largest accepted bulk argument.
	MaxBulkLen int64
	// MaxArgs is the largest accepted multibulk argument count.
	MaxArgs int64
	// MaxInline is PROTO_INLINE_MAX_SIZE: the longest inline request or
	// count line (64 KiB in Redis).
	MaxInline int
}

// DefaultLimits are Redis 7.0's defaults (proto-max-bulk-len 512mb, INT_MAX
// args, 64 KiB inline). Argument counts are never trusted for preallocation.
var DefaultLimits = Limits{MaxBulkLen: 512 << 20, MaxArgs: math.MaxInt32, MaxInline: 64 << 10}

// Limits before authentication (networking.c, authRequired): at most 10
// arguments and bulks of at most 16 KiB.
const (
	unauthMaxArgs = 10
	unauthMaxBulk = 16384
)

// ProtocolError is a malformed request. Its text is Redis's
// ("Protocol error: ..."); the server replies "-ERR " + text and closes.
type ProtocolError struct {
	Msg string
	// Offset is where in the stream (counted from the Reader's first
	// byte) the bad bytes are; set in ModeAOF, whose loader reports it.
	Offset int64
}

func (e *ProtocolError) Error() string { return "Protocol error: " + e.Msg }

func protoErr(msg string) error { return &ProtocolError{Msg: msg} }

// Mode selects the grammar a Reader accepts: each mode is one of Redis's
// readers of the command protocol.
type Mode uint8

const (
	// ModeClient reads a normal client's requests, as networking.c's
	// processInputBuffer: a multibulk when the first byte is '*', else an
	// inline request.
	ModeClient Mode = iota
	// ModeMaster reads the replication stream a replica gets from its
	// master, as processInputBuffer does for a CLIENT_MASTER: multibulk
	// only. An empty inline line (a bare "\n" or "\r\n", the keepalive a
	// master sends while it prepares a payload) is an empty command; any
	// other inline line is the protocol error "Master using the inline
	// protocol. Desync?" (processInlineBuffer). The buffer grows with the
	// bytes actually read, never with a claimed bulk length.
	ModeMaster
	// ModeAOF reads an append-only file as aof.c's
	// loadSingleAppendOnlyFile does: "*<argc>" then argc times
	// "$<len>" and <len> bytes, each header a line ended by "\n" (any
	// "\r" before it ignored) of at most Limits.MaxInline bytes (fgets'
	// buffer); a line starting with '#' where a command starts is an
	// annotation and skipped; argc < 1 is an error; each bulk must end
	// with "\r\n"; numbers are read as strtol reads them (sign and
	// leading zeros allowed). Errors carry their Offset; the caller tells
	// a cut last command (Fill's io.EOF with Buffered() > 0) from a clean
	// end. The buffer grows with the bytes actually read.
	ModeAOF
)

// Messages of ModeAOF's errors (the AOF loader and redis-check-aof print
// them with their offset).
const (
	aofExpectedStar = "expected '*'"
	aofBadArgc      = "invalid argument count"
	aofExpectedDol  = "expected '$'"
	aofBadBulkLen   = "invalid bulk length"
	aofNoCRLF       = "expected CRLF after bulk"
	aofLongLine     = "line too long"
	aofEmptyLine    = "empty line"
	masterInline    = "Master using the inline protocol. Desync?"
)

// IsProtocolError reports whether err is a ProtocolError.
func IsProtocolError(err error) bool {
	var pe *ProtocolError
	return errors.As(err, &pe)
}

const (
	readChunk   = 16 << 10
	maxPrealloc = 1024 // like Redis: never trust a count for preallocation
	bigArg      = 32 << 10
	// An oversized buffer up to maxKeptBuf is kept until bigIdleFills
	// fills in a row did not need it.
	maxKeptBuf   = 1 << 20
	bigIdleFills = 16
	// maxGreedyRead bounds a read sized by what the socket holds.
	maxGreedyRead = 256 << 10
)

// Reader parses requests (multibulk or inline) from a byte stream. It is
// resumable: Next returns (nil, nil) when the buffer holds only part of a
// command, and parsing continues where it stopped after Fill reads more,
// so a command split at any byte boundary costs linear work.
//
// Argument slices returned by Next alias the internal buffer and stay valid
// until the next call to Fill.
type Reader struct {
	rd  io.Reader
	lim Limits
	buf []byte
	w   int // end of buffered data
	r   int // start of the command being parsed

	mode Mode
	base int64 // stream offset of buf[0]

	// state of a partially parsed multibulk command (offsets relative to r)
	inMulti bool
	argc    int   // declared argument count
	pos     int   // parse position relative to r
	bulkLen int64 // length of the bulk being read, -1 while reading its header
	offs    []int // start,end pairs of parsed arguments, relative to r
	args    [][]byte
	inline  bool // last command was inline (for the server's reply rules)
	unauth  bool // the peer must still authenticate: Redis's pre-AUTH limits apply
	bigIdle int  // fills since an oversized buffer was last needed

	// onAnnotation, when set (ModeAOF), sees each annotation line
	// ("#TS:..." without its line end) and its stream offset before it
	// is skipped (redis-check-aof's processAnnotations).
	onAnnotation func(line []byte, offset int64)

	// queued is rd when it can tell how many bytes wait after its last
	// read (a socket with TCP_INQ): Fill then reads them all at once.
	queued queuedReader
}

// queuedReader is an io.Reader that knows how many bytes are still
// queued after its last read (0: none, or it cannot tell).
type queuedReader interface {
	io.Reader
	Queued() int
}

// OnAnnotation sets a function that sees each ModeAOF annotation line
// (without its line end) and the stream offset where it starts.
func (r *Reader) OnAnnotation(f func(line []byte, offset int64)) { r.onAnnotation = f }

// NewReader returns a Reader over rd with the given limits.
func NewReader(rd io.Reader, lim Limits) *Reader {
	if lim.MaxInline <= 0 {
		lim.MaxInline = DefaultLimits.MaxInline
	}
	if lim.MaxArgs <= 0 {
		lim.MaxArgs = DefaultLimits.MaxArgs
	}
	if lim.MaxBulkLen <= 0 {
		lim.MaxBulkLen = DefaultLimits.MaxBulkLen
	}
	// No buffer until the first Fill (or Feed): a connection that never
	// sends holds none.
	r := &Reader{rd: rd, lim: lim, bulkLen: -1}
	r.queued, _ = rd.(queuedReader)
	return r
}

// SetMode selects the grammar (ModeClient unless set); call it before the
// first Next.
func (r *Reader) SetMode(m Mode) { r.mode = m }

// Offset is the stream offset (bytes since the Reader's first byte) just
// after the last command returned or annotation skipped: where the command
// being parsed starts.
func (r *Reader) Offset() int64 { return r.base + int64(r.r) }

// SetLimits changes the limits (CONFIG SET proto-max-bulk-len).
func (r *Reader) SetLimits(lim Limits) { r.lim = lim }

// SetUnauthenticated turns Redis's pre-AUTH limits on or off: while on, a
// multibulk of more than 10 arguments or a bulk over 16 KiB is a protocol
// error ("unauthenticated multibulk length" / "unauthenticated bulk
// length"). Commands are parsed one at a time, so a command pipelined
// after AUTH is parsed with the limits AUTH left.
func (r *Reader) SetUnauthenticated(on bool) { r.unauth = on }

// Buffered returns the number of unparsed bytes held.
func (r *Reader) Buffered() int { return r.w - r.r }

// Pending describes the command being received, the part of the buffer
// Next has not returned (ModeClient): the total length and the count of
// the arguments of a multibulk parsed so far, the length of the bulk
// being read (-1: none, its header not read yet) and the bytes held past
// what was parsed (Redis's query buffer once processInputBuffer trimmed
// it; a bulk being read starts it).
func (r *Reader) Pending() (argvLen int64, argc int, bulkLen, tail int64) {
	if !r.inMulti {
		return 0, 0, -1, int64(r.w - r.r)
	}
	for i := 0; i+1 < len(r.offs); i += 2 {
		argvLen += int64(r.offs[i+1] - r.offs[i])
	}
	return argvLen, len(r.offs) / 2, r.bulkLen, int64(r.w - r.r - r.pos)
}

// BufferCap is the size of the query buffer (CLIENT LIST qbuf).
func (r *Reader) BufferCap() int { return len(r.buf) }

// Inline reports whether the last command returned by Next was inline.
func (r *Reader) Inline() bool { return r.inline }

// Fill reads once from the underlying reader into the buffer, first moving
// the unparsed tail to the front and growing the buffer when a pending bulk
// argument needs more room. It returns the reader's error (io.EOF etc.).
func (r *Reader) Fill() error {
	r.compact()
	need := readChunk
	if r.inMulti && r.bulkLen >= 0 {
		// Room for the rest of this bulk and its CRLF in one go; outside
		// ModeClient (whose bulks proto-max-bulk-len bounds) room for at
		// most as much as is held, so that the buffer stays within a few
		// times the bytes actually read.
		rem := int64(r.w - r.pos)
		if r.bulkLen < math.MaxInt64-2 {
			rem = r.bulkLen + 2 - rem
		} else {
			rem = math.MaxInt64
		}
		if r.mode != ModeClient {
			rem = min(rem, int64(max(r.w, readChunk)))
		}
		if rem > int64(need) {
			need = int(rem)
		}
	}
	if r.queued != nil {
		// Read what the socket holds in one go, as Redis's greedy query
		// buffer does (readQueryFromClient: sdsMakeRoomFor, then read
		// all it has room for): a pipeline of big values then costs one
		// read and one reply write per batch instead of one per
		// readChunk, and the client's window stays open, so the client
		// sends its data itself instead of on the server's
		// acknowledgements (issue 24: SET of 16 KB values at -P 16).
		if q := min(r.queued.Queued(), maxGreedyRead); q > need {
			need = q
		}
	}
	if r.buf == nil && need <= readChunk {
		r.buf = make([]byte, readChunk) // the first fill, or the first after Release
	} else if len(r.buf)-r.w < need {
		nb := make([]byte, r.w+need, r.w+need+need/2)
		nb = nb[:cap(nb)]
		copy(nb, r.buf[:r.w])
		r.buf = nb
		r.bigIdle = 0
	} else if len(r.buf) > 4*readChunk {
		// Shrink an oversized buffer (grown for a big value) back once it
		// is empty: at once above maxKeptBuf, else after bigIdleFills
		// fills that did not need it, so that a stream of big values
		// reuses one buffer instead of growing a new one per command.
		switch {
		case need > readChunk || r.w > readChunk:
			r.bigIdle = 0
		case r.w == 0:
			r.bigIdle++
			if len(r.buf) > maxKeptBuf || r.bigIdle > bigIdleFills {
				r.buf = make([]byte, readChunk)
				r.bigIdle = 0
			}
		}
	}
	n, err := r.rd.Read(r.buf[r.w:])
	r.w += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// Release drops the buffer when it holds nothing (no command or part of
// one), as Redis's clientsCronResizeQueryBuffer frees the query buffer of
// a client idle for more than 2 seconds; the next Fill allocates a new
// one. It reports whether the buffer was dropped. Argument slices from
// Next stay valid (the old buffer is not reused) while a caller holds
// them; the Reader's own references go.
func (r *Reader) Release() bool {
	if r.buf == nil || r.r != r.w || r.inMulti {
		return false
	}
	r.base += int64(r.r)
	r.r, r.w = 0, 0
	r.buf = nil
	r.bigIdle = 0
	// The last commands' argument slices alias it too.
	clear(r.args[:cap(r.args)])
	return true
}

// Feed appends data directly (for tests and replication streams held in
// memory) instead of reading from the underlying reader.
func (r *Reader) Feed(p []byte) {
	r.compact()
	if len(r.buf)-r.w < len(p) {
		nb := make([]byte, r.w+len(p)+readChunk)
		copy(nb, r.buf[:r.w])
		r.buf = nb
	}
	r.w += copy(r.buf[r.w:], p)
}

// compact moves the unparsed tail to the front of the buffer.
func (r *Reader) compact() {
	if r.r > 0 {
		n := copy(r.buf, r.buf[r.r:r.w])
		r.base += int64(r.r)
		r.w = n
		r.r = 0
	}
}

// Next parses the next complete command from the buffer. It returns
// (nil, nil) when more input is needed; a *ProtocolError for malformed input
// (the connection must then be closed). Empty commands (an empty inline
// line, "*0") are skipped.
func (r *Reader) Next() ([][]byte, error) {
	for {
		args, raw, err := r.NextRaw()
		if err != nil || raw == nil {
			return nil, err
		}
		if len(args) > 0 {
			return args, nil
		}
	}
}

// NextRaw is Next for a caller that accounts for the stream's bytes (a
// replica's offsets and its sub-replicas' stream, the AOF's truncation
// point): it returns every command, empty ones included (no args: an
// empty inline line, "*0"), with raw, the command's bytes in the stream
// (a ModeAOF annotation skipped before it is not part of them). raw is nil
// when more input is needed. args and raw alias the buffer until the next
// Fill or Feed; the args slice itself is reused by the next call.
func (r *Reader) NextRaw() (args [][]byte, raw []byte, err error) {
	for r.r < r.w {
		start := r.r
		var done bool
		switch {
		case r.mode == ModeAOF:
			args, done, err = r.parseAOF()
			if err == errAnnotation {
				continue
			}
		case !r.inMulti && r.buf[r.r] != '*':
			args, done, err = r.parseInline()
			if done {
				r.inline = len(args) > 0
			}
		default:
			args, done, err = r.parseMulti()
			if done && len(args) > 0 {
				r.inline = false
			}
		}
		if err != nil || !done {
			return nil, nil, err
		}
		return args, r.buf[start:r.r:r.r], nil
	}
	return nil, nil, nil
}

// errAnnotation: parseAOF skipped a ModeAOF annotation line.
var errAnnotation = errors.New("annotation")

func (r *Reader) parseInline() ([][]byte, bool, error) {
	data := r.buf[r.r:r.w]
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		if len(data) > r.lim.MaxInline {
			return nil, false, protoErr("too big inline request")
		}
		return nil, false, nil
	}
	line := data[:nl]
	if len(line) > 0 && line[len(line)-1] == '\r' {
		line = line[:len(line)-1]
	}
	if r.mode == ModeMaster {
		// processInlineBuffer: a master may send a bare newline to keep
		// the link alive (an empty command), never an inline command.
		if len(line) != 0 {
			return nil, false, protoErr(masterInline)
		}
		r.r += nl + 1
		return nil, true, nil
	}
	r.r += nl + 1
	args, err := splitInline(line, r.args[:0])
	if err != nil {
		return nil, false, protoErr("unbalanced quotes in request")
	}
	r.args = args
	return args, true, nil
}

// parseMulti continues parsing a multibulk command at r.pos.
func (r *Reader) parseMulti() ([][]byte, bool, error) {
	if !r.inMulti {
		// Header "*<count>\r\n".
		data := r.buf[r.r:r.w]
		cr := bytes.IndexByte(data, '\r')
		if cr < 0 || cr+1 >= len(data) {
			if len(data) > r.lim.MaxInline {
				return nil, false, protoErr("too big mbulk count string")
			}
			return nil, false, nil
		}
		if cr > r.lim.MaxInline {
			return nil, false, protoErr("too big mbulk count string")
		}
		n, ok := redisutil.String2ll(data[1:cr])
		if !ok || n > r.lim.MaxArgs {
			return nil, false, protoErr("invalid multibulk length")
		}
		if r.unauth && n > unauthMaxArgs {
			return nil, false, protoErr("unauthenticated multibulk length")
		}
		if n <= 0 {
			r.r += cr + 2
			return nil, true, nil
		}
		r.inMulti = true
		r.argc = int(n)
		r.pos = cr + 2
		r.bulkLen = -1
		r.offs = r.offs[:0]
	}
	for len(r.offs)/2 < r.argc {
		abs := r.r + r.pos
		if r.bulkLen < 0 {
			data := r.buf[abs:r.w]
			cr := bytes.IndexByte(data, '\r')
			if cr < 0 || cr+1 >= len(data) {
				if len(data) > r.lim.MaxInline {
					return nil, false, protoErr("too big bulk count string")
				}
				return nil, false, nil
			}
			if cr > r.lim.MaxInline {
				return nil, false, protoErr("too big bulk count string")
			}
			if data[0] != '$' {
				return nil, false, protoErr("expected '$', got '" + string(data[0]) + "'")
			}
			n, ok := redisutil.String2ll(data[1:cr])
			if !ok || n < 0 || n > r.lim.MaxBulkLen {
				return nil, false, protoErr("invalid bulk length")
			}
			if r.unauth && n > unauthMaxBulk {
				return nil, false, protoErr("unauthenticated bulk length")
			}
			r.bulkLen = n
			r.pos += cr + 2
			abs = r.r + r.pos
		}
		if int64(r.w-abs) < r.bulkLen+2 {
			return nil, false, nil
		}
		r.offs = append(r.offs, r.pos, r.pos+int(r.bulkLen))
		r.pos += int(r.bulkLen) + 2
		r.bulkLen = -1
	}
	return r.endMulti(), true, nil
}

// endMulti returns the arguments of the multibulk command just parsed and
// moves past it.
func (r *Reader) endMulti() [][]byte {
	args := r.args[:0]
	for i := 0; i < len(r.offs); i += 2 {
		args = append(args, r.buf[r.r+r.offs[i]:r.r+r.offs[i+1]:r.r+r.offs[i+1]])
	}
	r.args = args
	r.r += r.pos
	r.inMulti = false
	r.pos = 0
	if cap(r.offs) > 2*maxPrealloc {
		r.offs = nil
	}
	return args
}

// parseAOF continues parsing a ModeAOF command at r.pos (what
// loadSingleAppendOnlyFile reads with fgets and fread).
func (r *Reader) parseAOF() ([][]byte, bool, error) {
	if !r.inMulti {
		line, next, err := r.aofLine(r.r)
		if err != nil || line == nil {
			return nil, false, err
		}
		if line[0] == '#' { // an annotation: skipped as a command
			if r.onAnnotation != nil {
				r.onAnnotation(line, r.base+int64(r.r))
			}
			r.r = next
			return nil, false, errAnnotation
		}
		if line[0] != '*' {
			return nil, false, r.errAt(aofExpectedStar, r.r)
		}
		n, ok := parseStrtol(line[1:])
		if !ok || n < 1 || n > r.lim.MaxArgs {
			return nil, false, r.errAt(aofBadArgc, r.r)
		}
		r.inMulti = true
		r.argc = int(n)
		r.pos = next - r.r
		r.bulkLen = -1
		r.offs = r.offs[:0]
	}
	for len(r.offs)/2 < r.argc {
		abs := r.r + r.pos
		if r.bulkLen < 0 {
			line, next, err := r.aofLine(abs)
			if err != nil || line == nil {
				return nil, false, err
			}
			if line[0] != '$' {
				return nil, false, r.errAt(aofExpectedDol, abs)
			}
			n, ok := parseStrtol(line[1:])
			if !ok || n < 0 || n > r.lim.MaxBulkLen {
				return nil, false, r.errAt(aofBadBulkLen, abs)
			}
			r.bulkLen = n
			r.pos = next - r.r
			abs = next
		}
		if r.bulkLen > int64(r.w-abs)-2 {
			return nil, false, nil
		}
		end := abs + int(r.bulkLen)
		if r.buf[end] != '\r' || r.buf[end+1] != '\n' {
			return nil, false, r.errAt(aofNoCRLF, end)
		}
		r.offs = append(r.offs, r.pos, r.pos+int(r.bulkLen))
		r.pos += int(r.bulkLen) + 2
		r.bulkLen = -1
	}
	return r.endMulti(), true, nil
}

// aofLine returns the ModeAOF header line starting at buf[abs] without its
// "\n" and the "\r"s before it, and the index after it; a nil line when
// more input is needed.
func (r *Reader) aofLine(abs int) (line []byte, next int, err error) {
	data := r.buf[abs:r.w]
	nl := bytes.IndexByte(data, '\n')
	if nl < 0 {
		if len(data) > r.lim.MaxInline {
			return nil, 0, r.errAt(aofLongLine, abs)
		}
		return nil, 0, nil
	}
	if nl > r.lim.MaxInline {
		return nil, 0, r.errAt(aofLongLine, abs)
	}
	line = bytes.TrimRight(data[:nl], "\r")
	if len(line) == 0 {
		return nil, 0, r.errAt(aofEmptyLine, abs+nl)
	}
	return line, abs + nl + 1, nil
}

// errAt is a ProtocolError at buf[abs].
func (r *Reader) errAt(msg string, abs int) error {
	return &ProtocolError{Msg: msg, Offset: r.base + int64(abs)}
}

// parseStrtol reads a header number as the AOF loader does: decimal, an
// optional sign, leading zeros allowed, nothing else.
func parseStrtol(b []byte) (int64, bool) {
	n, err := strconv.ParseInt(string(b), 10, 64)
	return n, err == nil
}

// splitInline splits an inline request like sds.c sdssplitargs, appending to
// dst. A line without quotes, \v or \f (isspace between arguments but not
// the end of one) is split on space, \t, \r and \n, aliasing line; the
// rest goes through redisutil.SplitArgs.
func splitInline(line []byte, dst [][]byte) ([][]byte, error) {
	if bytes.IndexAny(line, "\"'\v\f") < 0 {
		for _, f := range bytes.FieldsFunc(line, isSpace) {
			dst = append(dst, f)
		}
		return dst, nil
	}
	parts, err := redisutil.SplitArgs(string(line))
	if err != nil {
		return nil, err
	}
	for _, p := range parts {
		dst = append(dst, []byte(p))
	}
	return dst, nil
}

// isSpace is what ends a bare argument in sdssplitargs.
func isSpace(c rune) bool { return c == ' ' || c == '\n' || c == '\r' || c == '\t' }

// FormatInt appends the decimal form of n (no fmt on hot paths).
func FormatInt(dst []byte, n int64) []byte { return strconv.AppendInt(dst, n, 10) }
