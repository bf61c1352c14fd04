package server

import (
	"fmt"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/internal/logging"
)

// LogRole is the role character of redis-server's log lines (serverLogRaw):
// 'S' while the server follows a master (server.masterhost is set: the
// replicaof directive, REPLICAOF host port), 'M' otherwise. Safe from any
// goroutine, with or without the execution lock.
func (s *Server) LogRole() byte {
	if s.logSlave.Load() {
		return 'S'
	}
	return 'M'
}

// childLog is the logger of what a save child says (BGSAVE's
// redis-rdb-bgsave, a diskless sync's redis-rdb-to-slaves, the AOF
// rewrite's redis-aof-rewrite): serverLogRaw in a fork child writes the
// child's pid and role 'C' (`pid:C` with log-format redis; the child_pid
// field in JSON). Safe from any goroutine.
func (s *Server) childLog(pid int) zerolog.Logger {
	return s.log.With().Int(logging.ChildPidField, pid).Logger()
}

// forkCowLine is the line a fork child logs as it ends
// (sendChildCowInfo): its copy-on-write memory in MB. Vigil's child
// writes from the server's copy-on-write snapshot, whose copies (cow
// bytes, as INFO's rdb_last_cow_size) are the figure: current and peak
// alike, and the average, as a copy is never given back before the end.
func forkCowLine(what string, cow uint64) string {
	mb := cow >> 20
	return fmt.Sprintf("Fork CoW for %s: current %d MB, peak %d MB, average %d MB", what, mb, mb, mb)
}

// SetLogFormatter gives the server what CONFIG SET log-format calls with
// the new value (the process log's format, internal/logging). Set before
// Run; nil leaves the directive stored only.
func (s *Server) SetLogFormatter(f func(format string)) { s.logFmt = f }
