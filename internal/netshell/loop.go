package netshell

import "github.com/vigil-kv/vigil/internal/resp"

// The per-connection loop both binaries serve through (docs/architecture.md,
// "The server's shell"): read what the socket has, run every complete
// command of the query buffer as one batch, write the batch's replies once.

// LoopConn is a connection served by Loop: the hooks each binary fills in.
type LoopConn interface {
	// BeforeRead arms the read deadline (the timeout directive).
	BeforeRead()
	// Fill reads once from the socket into the query buffer.
	Fill() error
	// RunBatch runs the commands the query buffer holds and writes their
	// replies; false closes the connection.
	RunBatch() bool
	// ReadFailed is told why a read failed; true reads again (a deadline
	// that fired early), false closes the connection.
	ReadFailed(err error) bool
}

// RawLoopConn is a LoopConn that can read its socket itself (the server's
// raw-read fast path): RawLoop runs reads and batches inside the socket's
// RawConn.Read until the connection must close (closeConn) or a read
// fails (err, handed to ReadFailed). UseRaw reports whether the fast path
// is on for this connection.
type RawLoopConn interface {
	LoopConn
	UseRaw() bool
	RawLoop() (closeConn bool, err error)
}

// Loop serves c until it closes: BeforeRead, Fill and RunBatch in turn, or
// the raw path when c has it, with ReadFailed deciding after a failed read.
func Loop(c LoopConn) {
	raw, _ := c.(RawLoopConn)
	if raw != nil && !raw.UseRaw() {
		raw = nil
	}
	for {
		var err error
		if raw != nil {
			var closeConn bool
			if closeConn, err = raw.RawLoop(); closeConn {
				return
			}
		} else {
			c.BeforeRead()
			if err = c.Fill(); err == nil {
				if !c.RunBatch() {
					return
				}
				continue
			}
		}
		if !c.ReadFailed(err) {
			return
		}
	}
}

// Step is what a batch does after one command.
type Step int

const (
	Continue Step = iota // run the next command
	Pause                // stop the batch here; the rest stays buffered for the next one
	Close                // stop and close the connection after the replies
)

// Batch runs the complete commands buffered in rd through run until it
// is empty or run says otherwise; the argv is valid until the next read.
// It returns the last step (Continue when the buffer was drained) and the
// reader's protocol error, after which the connection closes (the caller
// replies "ERR " + the error).
func Batch(rd *resp.Reader, run func(argv [][]byte) Step) (Step, error) {
	for {
		argv, err := rd.Next()
		if err != nil {
			return Close, err
		}
		if argv == nil {
			return Continue, nil
		}
		if st := run(argv); st != Continue {
			return st, nil
		}
	}
}
