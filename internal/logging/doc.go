// Package logging is the process log of the Vigil binaries: zerolog over
// stdout or the logfile, written as redis-server writes its log lines
// (log-format redis, the default: "pid:role dd Mon yyyy hh:mm:ss.mmm
// <level> message", which operators' tools and Redis's own tests grep) or
// as JSON lines (log-format json; a readable console line on a terminal),
// Redis's loglevel names, millisecond timestamps, and the wording of
// signals and OS errors in Redis's log lines. Only the commands (cmd/...)
// import it; it imports zerolog, go-isatty and the standard library.
package logging
