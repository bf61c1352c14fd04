package daemon

import (
	"bytes"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/configs"
	"github.com/vigil-kv/vigil/internal/logging"
	"github.com/vigil-kv/vigil/sentinel"
)

// TestNotifyLogLevels: sentinelEvent logs an event when its level is at
// least the loglevel (warning: +sdown, +odown, +switch-master...; notice:
// +slave, +sentinel...; verbose: +role-change; debug: +script-child), and
// publishes every non-debug one whatever the loglevel. Checked with redis-sentinel 7.0.15
// at loglevel warning: the same failover shows the same events.
func TestNotifyLogLevels(t *testing.T) {
	events := []struct {
		level sentinel.Level
		typ   string
	}{
		{sentinel.LevelWarning, "+sdown"},
		{sentinel.LevelNotice, "+slave"},
		{sentinel.LevelVerbose, "+role-change"},
		{sentinel.LevelDebug, "+script-child"},
	}
	tests := []struct {
		loglevel string
		want     []string
	}{
		{"warning", []string{"+sdown"}},
		{"notice", []string{"+sdown", "+slave"}},
		{"verbose", []string{"+sdown", "+slave", "+role-change"}},
		{"debug", []string{"+sdown", "+slave", "+role-change", "+script-child"}},
		{"nothing", nil},
	}
	for _, tt := range tests {
		t.Run(tt.loglevel, func(t *testing.T) {
			var buf bytes.Buffer
			st := &Settings{Server: &configs.Config{LogLevel: tt.loglevel}}
			d := &Daemon{log: zerolog.New(&buf).Level(logging.Level(tt.loglevel)), hub: newHub(), st: st}
			for _, e := range events {
				d.notify(e.level, e.typ, "master m 127.0.0.1 6379")
			}
			var got []string
			for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				for _, e := range events {
					if strings.Contains(l, `"`+e.typ+` master`) {
						got = append(got, e.typ)
					}
				}
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("loglevel %s logged %v, want %v", tt.loglevel, got, tt.want)
			}
		})
	}
}

// TestLogAction: a sentinel.Log action is a serverLog line (for instance
// "Next failover delay: ..."): logged at its level with no event field,
// never published.
func TestLogAction(t *testing.T) {
	var buf bytes.Buffer
	st := &Settings{Server: &configs.Config{LogLevel: "notice"}}
	d := &Daemon{log: zerolog.New(&buf).Level(logging.Level("notice")), hub: newHub(), st: st}
	d.exec(sentinel.Log{Level: sentinel.LevelWarning, Message: "Executing user requested FAILOVER of 'm'"})
	d.exec(sentinel.Log{Level: sentinel.LevelVerbose, Message: "below the loglevel"})
	got := strings.TrimSpace(buf.String())
	if !strings.Contains(got, `"level":"warn"`) || !strings.Contains(got, `"message":"Executing user requested FAILOVER of 'm'"`) ||
		strings.Contains(got, `"event"`) || strings.Contains(got, "below") || strings.Count(got, "\n") != 0 {
		t.Errorf("logged %q", got)
	}
}
