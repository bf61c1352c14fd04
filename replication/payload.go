package replication

import (
	"bytes"
	"errors"
	"io"
	"strconv"
	"strings"
)

// HeaderKind says what a line read before the RDB payload is.
type HeaderKind int

const (
	// HeaderKeepAlive: an empty line, the master's "\n" while it prepares
	// the snapshot.
	HeaderKeepAlive HeaderKind = iota
	// HeaderSize: "$<len>": exactly len RDB bytes follow, no CRLF after.
	HeaderSize
	// HeaderEOF: "$EOF:<40 bytes>": the RDB follows, then the same 40 bytes.
	HeaderEOF
)

// PayloadHeader is a parsed payload line.
type PayloadHeader struct {
	Kind    HeaderKind
	Size    int64
	EOFMark string
}

// ParsePayloadHeader parses one line (CRLF stripped) read by a replica
// waiting for the RDB, as readSyncBulkPayload does. A line starting with
// '-' is the master aborting; anything not starting with '$' is a protocol
// error. "$EOF:" needs at least 40 bytes after it and uses the first 40, as
// Redis. Where Redis would read a bad length as 0 with strtol, this refuses
// it.
func ParsePayloadHeader(line string) (PayloadHeader, error) {
	switch {
	case line == "":
		return PayloadHeader{Kind: HeaderKeepAlive}, nil
	case line[0] == '-':
		return PayloadHeader{}, errors.New("MASTER aborted replication with an error: " + line[1:])
	case line[0] != '$':
		return PayloadHeader{}, errors.New("Bad protocol from MASTER, the first byte is not '$' (we received '" +
			line + "'), are you sure the host and port are right?")
	}
	if strings.HasPrefix(line[1:], "EOF:") && len(line)-5 >= IDLen {
		return PayloadHeader{Kind: HeaderEOF, EOFMark: line[5 : 5+IDLen]}, nil
	}
	n, err := strconv.ParseInt(line[1:], 10, 64)
	if err != nil || n < 0 {
		return PayloadHeader{}, errors.New("Bad protocol from MASTER, invalid bulk length '" + line + "'")
	}
	return PayloadHeader{Kind: HeaderSize, Size: n}, nil
}

// NewPayloadReader returns a reader of the RDB payload announced by h, read
// from r (positioned right after the header line). It returns io.EOF
// exactly at the payload's end and io.ErrUnexpectedEOF if r ends first. It
// never reads past a $<len> payload; for an EOF-marked one it reads only
// what r returns, and the master sends nothing after the mark until the
// replica's first ACK.
func NewPayloadReader(r io.Reader, h PayloadHeader) io.Reader {
	if h.Kind == HeaderEOF {
		return NewEOFMarkReader(r, h.EOFMark)
	}
	return &sizedReader{r: r, left: h.Size}
}

type sizedReader struct {
	r    io.Reader
	left int64
}

func (s *sizedReader) Read(p []byte) (int, error) {
	if s.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > s.left {
		p = p[:s.left]
	}
	n, err := s.r.Read(p)
	s.left -= int64(n)
	if err == io.EOF {
		if s.left > 0 {
			return n, io.ErrUnexpectedEOF
		}
		err = nil
	}
	return n, err
}

// EOFMarkReader yields a diskless payload ($EOF:<mark>) without its trailing
// mark. Like readSyncBulkPayload, which compares the last 40 bytes read so
// far with the mark, it holds back only the newest 40 bytes: the payload
// ends when, after a read from the source, the bytes read so far end with
// the mark.
type EOFMarkReader struct {
	r    io.Reader
	mark []byte
	hold []byte // the newest bytes read, not yet delivered (at most len(mark))
	buf  []byte
	done bool
	err  error
}

// NewEOFMarkReader wraps r, whose data ends with mark.
func NewEOFMarkReader(r io.Reader, mark string) *EOFMarkReader {
	return &EOFMarkReader{r: r, mark: []byte(mark), hold: make([]byte, 0, len(mark))}
}

// Read implements io.Reader.
func (e *EOFMarkReader) Read(p []byte) (int, error) {
	if e.done {
		return 0, io.EOF
	}
	if e.err != nil {
		return 0, e.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	m := len(e.mark)
	for empty := 0; ; empty++ {
		if empty == 100 {
			return 0, io.ErrNoProgress
		}
		// buf = hold + what the source returns now. The bytes delivered are
		// all but the newest m, and there are never more of them than the
		// source returned, so they fit in p.
		need := len(e.hold) + len(p)
		if cap(e.buf) < need {
			e.buf = make([]byte, need)
		}
		buf := e.buf[:need]
		copy(buf, e.hold)
		n, err := e.r.Read(buf[len(e.hold):])
		buf = buf[:len(e.hold)+n]
		if len(buf) >= m && bytes.Equal(buf[len(buf)-m:], e.mark) {
			e.done = true
			k := copy(p, buf[:len(buf)-m])
			e.hold = e.hold[:0]
			if k == 0 {
				return 0, io.EOF
			}
			return k, nil
		}
		k := 0
		if len(buf) > m {
			k = copy(p, buf[:len(buf)-m])
		}
		e.hold = append(e.hold[:0], buf[k:]...)
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			e.err = err
			if k > 0 {
				return k, nil
			}
			return 0, err
		}
		if k > 0 {
			return k, nil
		}
	}
}
