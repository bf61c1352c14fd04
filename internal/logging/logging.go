package logging

import (
	"io"
	"os"
	"strings"

	"github.com/mattn/go-isatty"
	"github.com/rs/zerolog"
)

// Output is where the process logs: stdout or the logfile, as a readable
// console line per event on a terminal and JSON lines otherwise.
type Output struct {
	W       io.Writer // the raw destination, for the logo on a console
	Console bool
	Close   func() error
}

// Open opens logfile for appending ("" means stdout) and decides the
// format: console on a terminal, JSON otherwise.
func Open(logfile string, stdout io.Writer) (*Output, error) {
	out := &Output{W: stdout, Close: func() error { return nil }}
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

// Timestamps carry milliseconds, as Redis's log lines do. zerolog's format
// is a package global: set here, imported by the commands only.
func init() { zerolog.TimeFieldFormat = "2006-01-02T15:04:05.000Z07:00" }

// Level maps the loglevel directive onto zerolog. Redis's verbose has
// no zerolog twin: it shares debug.
func Level(level string) zerolog.Level {
	switch strings.ToLower(level) {
	case "debug", "verbose":
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
	var w io.Writer = out.W
	if out.Console {
		w = zerolog.ConsoleWriter{
			Out:        out.W,
			TimeFormat: "02 Jan 2006 15:04:05.000",
			NoColor:    os.Getenv("NO_COLOR") != "",
		}
	}
	return zerolog.New(zerolog.SyncWriter(w)).
		Level(Level(level)).
		With().Timestamp().Str("component", component).Logger()
}
