package server

import "github.com/vigil-kv/vigil/server/keyspace"

// Helpers for command arguments shared by the data-type families. The
// arguments a handler gets alias the connection's read buffer: what is
// stored is copied first (copyBytes). Redis instead stores the argv
// objects themselves, which OBJECT REFCOUNT can see inside EXEC
// (argvStored, argvShared). parseInt and eqFold are in cmd_conn.go.

// copyBytes copies an argument for storing in the keyspace.
func copyBytes(b []byte) []byte { return append(make([]byte, 0, len(b)), b...) }

// argvStored records that e holds the current command's argument object
// itself, as setKey(c->argv[i]) does, when the command runs inside EXEC:
// Redis's OBJECT REFCOUNT then counts the transaction's queued argv too
// until the EXEC ends (multi.c frees the queue afterwards).
func (c *Client) argvStored(e *keyspace.Entry) {
	if c.multi != nil && c.multi.executing {
		c.srv.ks.MarkArgvExec(e)
	}
}

// argvShared reports whether e's value is, in Redis, still shared with the
// argv of the EXEC running now (see argvStored): not once a command
// modified it in place (dbUnshareStringValue made a copy: StringRaw).
func (c *Client) argvShared(e *keyspace.Entry) bool {
	if s, ok := e.Value().(*keyspace.String); ok && s.Kind() == keyspace.StringRaw {
		return false
	}
	return e.ArgvExec() && c.multi != nil && c.multi.executing
}
