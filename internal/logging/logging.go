package logging

import (
	"io"
	"log/syslog"
	"os"
	"strings"
	"sync/atomic"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// The log-format directive's values.
const (
	// FormatRedis is redis-server's line (server.c's serverLogRaw):
	// "pid:role dd Mon yyyy hh:mm:ss.mmm <level> message", on a terminal
	// too, as redis-server writes it.
	FormatRedis = "redis"
	// FormatJSON is one JSON object a line, or zerolog's readable console
	// line on a terminal.
	FormatJSON = "json"
)

// Output is where the process logs: stdout or the logfile, in the format
// the log-format directive chose (SetFormat; Redis's lines until then).
type Output struct {
	W       io.Writer // the raw destination, for the logo on a console
	Console bool      // W is a terminal
	Close   func() error

	pid    int
	json   atomic.Bool                   // log-format json
	role   atomic.Pointer[func() byte]   // serverLogRaw's role char; nil: the component's
	syslog atomic.Pointer[syslog.Writer] // EnableSyslog; nil: off
}

// Open opens logfile for appending ("" means stdout) and notes whether it
// is a terminal.
func Open(logfile string, stdout io.Writer) (*Output, error) {
	out := &Output{W: stdout, Close: func() error { return nil }, pid: os.Getpid()}
	if logfile != "" {
		f, err := os.OpenFile(logfile, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err != nil {
			return nil, err
		}
		out.W, out.Close = f, f.Close
	}
	if f, ok := out.W.(*os.File); ok && (isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())) {
		out.Console = true
	}
	return out, nil
}

// SetFormat switches the format of every logger New built over out
// (log-format at startup and on CONFIG SET). Anything but "json" is Redis's.
func (o *Output) SetFormat(format string) { o.json.Store(strings.EqualFold(format, FormatJSON)) }

// JSON reports whether out logs JSON (or the console form of it).
func (o *Output) JSON() bool { return o.json.Load() }

// SetRole sets what serverLogRaw's role character is read from: 'M' or
// 'S' as the server follows a master or not ('X' is sentinel's, the default
// of component "sentinel"; 'M' is the others' default).
func (o *Output) SetRole(role func() byte) { o.role.Store(&role) }

// Timestamps carry milliseconds, as Redis's log lines do. zerolog's format
// is a package global: set here, imported by the commands only.
func init() { zerolog.TimeFieldFormat = "2006-01-02T15:04:05.000Z07:00" }

// Level maps the loglevel directive onto zerolog: Redis's debug is
// zerolog's trace, verbose its debug (the '.' and '-' of Redis's lines).
func Level(level string) zerolog.Level {
	switch strings.ToLower(level) {
	case "debug":
		return zerolog.TraceLevel
	case "verbose":
		return zerolog.DebugLevel
	case "notice", "":
		return zerolog.InfoLevel
	case "warning":
		return zerolog.WarnLevel
	case "nothing":
		return zerolog.Disabled
	}
	return zerolog.InfoLevel
}

// New builds the process logger, its events tagged with component. Lines Redis logs at LL_WARNING
// ("Redis is starting", "Configuration loaded", "Server initialized") are
// logged at warn level, and LL_NOTICE ones ("Ready to accept connections")
// at info, so `loglevel warning` shows the same lines as Redis does.
func New(out *Output, level, component string) zerolog.Logger {
	w := &formatWriter{out: out, defRole: 'M'}
	if component == "sentinel" {
		w.defRole = 'X'
	}
	if out.Console {
		w.console = zerolog.ConsoleWriter{
			Out:        out.W,
			TimeFormat: "02 Jan 2006 15:04:05.000",
			NoColor:    os.Getenv("NO_COLOR") != "",
		}
	}
	return zerolog.New(zerolog.SyncWriter(w)).
		Level(Level(level)).
		With().Timestamp().Str("component", component).Logger()
}

// formatWriter turns zerolog's JSON events into the output's format.
type formatWriter struct {
	out     *Output
	console io.Writer // zerolog's console form, on a terminal; nil otherwise
	defRole byte
	buf     []byte // guarded by zerolog.SyncWriter
}

func (w *formatWriter) Write(p []byte) (int, error) {
	if sl := w.out.syslog.Load(); sl != nil {
		toSyslog(sl, p)
	}
	if w.out.json.Load() {
		if w.console != nil {
			return w.console.Write(p)
		}
		return w.out.W.Write(p)
	}
	role := w.defRole
	if f := w.out.role.Load(); f != nil {
		role = (*f)()
	}
	w.buf = AppendRedisLine(w.buf[:0], p, w.out.pid, role)
	if _, err := w.out.W.Write(w.buf); err != nil {
		return 0, err
	}
	return len(p), nil
}
