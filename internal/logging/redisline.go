package logging

import (
	"bytes"
	"encoding/json"
	"strconv"
	"time"

	"github.com/rs/zerolog"
)

// RedisTimeFormat is serverLogRaw's strftime "%d %b %Y %H:%M:%S." and
// the milliseconds.
const RedisTimeFormat = "02 Jan 2006 15:04:05.000"

// redisLevelChar is serverLogRaw's ".-*#" indexed by LL_DEBUG, LL_VERBOSE,
// LL_NOTICE, LL_WARNING: zerolog's trace, debug, info and warn (Level);
// errors and worse are Redis's warnings.
func redisLevelChar(level string) byte {
	switch level {
	case zerolog.LevelTraceValue:
		return '.'
	case zerolog.LevelDebugValue:
		return '-'
	case zerolog.LevelWarnValue, zerolog.LevelErrorValue, zerolog.LevelFatalValue, zerolog.LevelPanicValue:
		return '#'
	}
	return '*' // info, and events logged without a level
}

// omittedFields are the event fields a Redis line does not append as
// key=value: the ones it has in its own shape (time, level, message), the
// component (the role character says it), sentinel's event type (the
// message starts with it) and the logo flag (the logo is raw text).
var omittedFields = map[string]bool{
	zerolog.TimestampFieldName: true, zerolog.LevelFieldName: true, zerolog.MessageFieldName: true,
	"component": true, "event": true, "logo": true, ChildPidField: true, SignalHandlerField: true,
}

// SignalHandlerField marks an event logged where Redis logs from a signal
// handler (serverLogFromHandler: sigShutdownHandler's lines). Such a line
// is "pid:signal-handler (unixtime) message", with no level character nor
// fields, and it does not go to syslog.
const SignalHandlerField = "signal_handler"

// FromHandler marks e as logged from a signal handler (SignalHandlerField).
func FromHandler(e *zerolog.Event) *zerolog.Event {
	return e.Bool(SignalHandlerField, true)
}

// ChildPidField is the event field of a line a save child logs (its pid):
// serverLogRaw in a fork child writes its own pid and role 'C', so a Redis
// line has them in place of the server's pid and role.
const ChildPidField = "child_pid"

// event is what a Redis line or a syslog message takes from a zerolog
// JSON event.
type event struct {
	ts, level, msg string
	logo, handler  bool
	childPid       int64
	attrs          []byte // " key=value" for each other field
}

// parseEvent reads the zerolog JSON event ev; false if it is not a JSON
// object.
func parseEvent(ev []byte, e *event) bool {
	dec := json.NewDecoder(bytes.NewReader(ev))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		key, _ := t.(string)
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return false
		}
		var s string
		isString := len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &s) == nil
		switch key {
		case zerolog.TimestampFieldName:
			e.ts = s
		case zerolog.LevelFieldName:
			e.level = s
		case zerolog.MessageFieldName:
			e.msg = s
		case "logo":
			e.logo = string(raw) == "true"
		case ChildPidField:
			e.childPid, _ = strconv.ParseInt(string(raw), 10, 64)
		case SignalHandlerField:
			e.handler = string(raw) == "true"
		}
		if omittedFields[key] {
			continue
		}
		e.attrs = append(e.attrs, ' ')
		e.attrs = append(e.attrs, key...)
		e.attrs = append(e.attrs, '=')
		if !isString {
			e.attrs = append(e.attrs, raw...)
		} else if needsQuote(s) {
			e.attrs = strconv.AppendQuote(e.attrs, s)
		} else {
			e.attrs = append(e.attrs, s...)
		}
	}
	return true
}

// AppendRedisLine appends to dst the line redis-server's serverLogRaw
// writes for the zerolog JSON event ev:
//
//	pid:role dd Mon yyyy hh:mm:ss.mmm <level-char> message[ key=value...]
//
// in local time, as Redis's; an event with a child_pid field (ChildPidField)
// has that pid and role 'C', as a fork child's line. The event's other fields follow the message
// as key=value, in the event's order, a value quoted (Go syntax) when it
// is empty or holds a space, a quote, '=' or a control character; an event
// with logo=true is the raw message, as the logo's LL_RAW; one marked
// FromHandler is serverLogFromHandler's line. What is not a
// JSON object is written as it is.
func AppendRedisLine(dst, ev []byte, pid int, role byte) []byte {
	var e event
	if !parseEvent(ev, &e) {
		return append(dst, ev...)
	}
	if e.logo {
		return append(dst, e.msg...)
	}
	when, err := time.Parse(zerolog.TimeFieldFormat, e.ts)
	if err != nil {
		when = time.Now()
	}
	if e.childPid > 0 {
		pid, role = int(e.childPid), 'C'
	}
	dst = strconv.AppendInt(dst, int64(pid), 10)
	if e.handler {
		dst = append(dst, ":signal-handler ("...)
		dst = strconv.AppendInt(dst, when.Unix(), 10)
		dst = append(dst, ") "...)
		dst = append(dst, e.msg...)
		return append(dst, '\n')
	}
	dst = append(dst, ':', role, ' ')
	dst = when.Local().AppendFormat(dst, RedisTimeFormat)
	dst = append(dst, ' ', redisLevelChar(e.level), ' ')
	dst = append(dst, e.msg...)
	dst = append(dst, e.attrs...)
	return append(dst, '\n')
}

func needsQuote(s string) bool {
	if s == "" {
		return true
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; c <= ' ' || c == '"' || c == '=' || c == 0x7f {
			return true
		}
	}
	return false
}
