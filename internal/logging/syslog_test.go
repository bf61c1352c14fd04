package logging

import (
	"bytes"
	"net"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestSyslog: with syslog on, each message goes to the system log too, at
// the priority serverLogRaw's syslogLevelMap gives its level, under the
// facility and ident (with the pid) asked for; the log itself is unchanged.
func TestSyslog(t *testing.T) {
	path := filepath.Join(t.TempDir(), "log")
	l, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: path, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	var buf bytes.Buffer
	out, _ := Open("", &buf)
	log := New(out, "verbose", "server")
	if err := out.EnableSyslog("unixgram", path, "vigil-test", "local3"); err != nil {
		t.Fatal(err)
	}
	if err := out.EnableSyslog("unixgram", path, "x", "local9"); err == nil {
		t.Error("facility local9 accepted")
	}
	log.Warn().Msg("Server initialized")
	log.Info().Str("addr", "a b").Msg("Ready")
	log.Debug().Msg("verbose line")
	log.Trace().Msg("debug line") // below loglevel verbose: not sent
	// <facility*8+severity>: local3 is 19; warning 4, notice 5, info 6.
	for _, want := range []string{"<156>", "<157>", "<158>"} {
		_ = l.SetReadDeadline(time.Now().Add(5 * time.Second))
		b := make([]byte, 2048)
		n, err := l.Read(b)
		if err != nil {
			t.Fatalf("read: %v", err)
		}
		got := string(b[:n])
		tag := "vigil-test[" + strconv.Itoa(out.pid) + "]: "
		if !strings.HasPrefix(got, want) || !strings.Contains(got, tag) {
			t.Errorf("syslog got %q, want %s...%s", got, want, tag)
		}
		msg := map[string]string{"<156>": "Server initialized", "<157>": `Ready addr="a b"`, "<158>": "verbose line"}[want]
		if !strings.HasSuffix(strings.TrimSuffix(got, "\n"), tag+msg) {
			t.Errorf("syslog got %q, want the message %q", got, msg)
		}
	}
	if n := strings.Count(buf.String(), "\n"); n != 3 {
		t.Errorf("the log has %d lines, want 3:\n%s", n, buf.String())
	}
}
