package logging

import (
	"fmt"
	"log/syslog"
	"strings"

	"github.com/rs/zerolog"
)

// syslogFacilities are syslog-facility's values (config.c's
// syslog_facility_enum).
var syslogFacilities = map[string]syslog.Priority{
	"user": syslog.LOG_USER, "local0": syslog.LOG_LOCAL0, "local1": syslog.LOG_LOCAL1,
	"local2": syslog.LOG_LOCAL2, "local3": syslog.LOG_LOCAL3, "local4": syslog.LOG_LOCAL4,
	"local5": syslog.LOG_LOCAL5, "local6": syslog.LOG_LOCAL6, "local7": syslog.LOG_LOCAL7,
}

// EnableSyslog sends every message to the system log too, as
// serverLogRaw does with syslog-enabled yes (openlog(syslog-ident,
// LOG_PID, syslog-facility)): the message and its key=value fields, at
// LOG_DEBUG, LOG_INFO, LOG_NOTICE or LOG_WARNING as the line's level is
// Redis's debug, verbose, notice or warning, whatever log-format is.
// network and addr are log/syslog.Dial's ("" and "": the local syslog).
func (o *Output) EnableSyslog(network, addr, ident, facility string) error {
	f, ok := syslogFacilities[strings.ToLower(facility)]
	if !ok {
		return fmt.Errorf("unknown syslog facility %q", facility)
	}
	w, err := syslog.Dial(network, addr, f|syslog.LOG_NOTICE, ident)
	if err != nil {
		return err
	}
	o.syslog.Store(w)
	return nil
}

// Syslog applies syslog-enabled, syslog-ident and syslog-facility.
func (o *Output) Syslog(enabled bool, ident, facility string) error {
	if !enabled {
		return nil
	}
	return o.EnableSyslog("", "", ident, facility)
}

// toSyslog sends the JSON event ev to w.
func toSyslog(w *syslog.Writer, ev []byte) {
	var e event
	if !parseEvent(ev, &e) || e.handler {
		return // serverLogFromHandler writes the log file only
	}
	msg := e.msg + string(e.attrs)
	if e.logo {
		msg = e.msg
	}
	switch e.level {
	case zerolog.LevelTraceValue:
		_ = w.Debug(msg)
	case zerolog.LevelDebugValue:
		_ = w.Info(msg)
	case zerolog.LevelWarnValue, zerolog.LevelErrorValue, zerolog.LevelFatalValue, zerolog.LevelPanicValue:
		_ = w.Warning(msg)
	default:
		_ = w.Notice(msg)
	}
}
