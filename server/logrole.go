package server

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

// SetLogFormatter gives the server what CONFIG SET log-format calls with
// the new value (the process log's format, internal/logging). Set before
// Run; nil leaves the directive stored only.
func (s *Server) SetLogFormatter(f func(format string)) { s.logFmt = f }
