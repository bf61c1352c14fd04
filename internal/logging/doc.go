// Package logging is the process log of the Vigil binaries: zerolog over
// stdout or the logfile, readable lines on a terminal and JSON lines
// otherwise, Redis's loglevel names, millisecond timestamps, and the
// wording of signals and OS errors in Redis's log lines. Only the commands
// (cmd/...) import it; it imports zerolog, go-isatty and the standard
// library.
package logging
