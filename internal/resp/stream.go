package resp

import "strconv"

// CommandStream encodes a propagated command stream the way Redis's
// feedAppendOnlyFile and replicationFeedSlaves do: every command as a RESP
// multibulk, preceded by `SELECT <db>` whenever its database differs from
// the previous command's (aof_selected_db / slaveseldb). Each consumer of
// the write path (the AOF, the replication backlog, a test recorder) keeps
// its own CommandStream, because each forgets its selected database at its
// own moments (an AOF rewrite, a new replica): Reset.
type CommandStream struct {
	db    int
	valid bool
}

// Reset forgets the selected database: the next command is preceded by
// SELECT whatever its database.
func (s *CommandStream) Reset() { s.valid = false }

// Selected returns the database the stream selected last; ok is false
// when the next command is preceded by SELECT whatever its database.
func (s *CommandStream) Selected() (db int, ok bool) { return s.db, s.valid }

// Assume records that the reader of the stream already has db selected
// (a consumer that starts mid-stream).
func (s *CommandStream) Assume(db int) { s.db, s.valid = db, true }

// Append appends argv, run in database db, to dst.
func (s *CommandStream) Append(dst []byte, db int, argv [][]byte) []byte {
	if !s.valid || s.db != db {
		var num [20]byte
		dst = AppendCommand(dst, selectCmd, strconv.AppendInt(num[:0], int64(db), 10))
		s.db, s.valid = db, true
	}
	return AppendCommand(dst, argv...)
}

var selectCmd = []byte("SELECT")
