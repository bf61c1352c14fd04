package daemon

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"net"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

// escape renders raw reply bytes as the golden file shows them (Python's
// bytes repr without the quotes): \r \n \t \\ and \xNN for the rest.
func escape(b []byte) string {
	var s strings.Builder
	for _, c := range b {
		switch {
		case c == '\r':
			s.WriteString(`\r`)
		case c == '\n':
			s.WriteString(`\n`)
		case c == '\t':
			s.WriteString(`\t`)
		case c == '\\':
			s.WriteString(`\\`)
		case c < 0x20 || c >= 0x7f:
			fmt.Fprintf(&s, `\x%02x`, c)
		default:
			s.WriteByte(c)
		}
	}
	return s.String()
}

func unescape(s string) []byte {
	var b []byte
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b = append(b, s[i])
			continue
		}
		i++
		switch s[i] {
		case 'r':
			b = append(b, '\r')
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case 'x':
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b = append(b, byte(v))
			i += 2
		default:
			b = append(b, s[i])
		}
	}
	return b
}

// readFrame reads one complete RESP2/RESP3 reply and returns its raw bytes.
func readFrame(br *bufio.Reader) ([]byte, error) {
	line, err := br.ReadBytes('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 {
		return nil, errors.New("short line")
	}
	out := line
	n, _ := strconv.Atoi(string(line[1 : len(line)-2]))
	switch line[0] {
	case '$', '=', '!':
		if n < 0 {
			return out, nil
		}
		body := make([]byte, n+2)
		if _, err := ioReadFull(br, body); err != nil {
			return nil, err
		}
		return append(out, body...), nil
	case '*', '~', '>', '%':
		if line[0] == '%' {
			n *= 2
		}
		for i := 0; i < n; i++ {
			f, err := readFrame(br)
			if err != nil {
				return nil, err
			}
			out = append(out, f...)
		}
	}
	return out, nil
}

func ioReadFull(br *bufio.Reader, b []byte) (int, error) {
	n := 0
	for n < len(b) {
		m, err := br.Read(b[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

func countFrames(raw []byte) int {
	br := bufio.NewReader(bytes.NewReader(raw))
	n := 0
	for {
		if _, err := readFrame(br); err != nil {
			return n
		}
		n++
	}
}

// TestReplies replays testdata/replies.txt, recorded from redis-sentinel
// 7.0.15, against a daemon monitoring a dead master "mym", on one
// connection, and compares the raw replies.
func TestReplies(t *testing.T) {
	data, err := os.ReadFile("testdata/replies.txt")
	if err != nil {
		t.Fatal(err)
	}
	dead := freePort(t)
	port, _ := startSentinel(t, fmt.Sprintf("sentinel monitor mym 127.0.0.1 %d 2\n", dead))
	p := strconv.Itoa(dead)
	// ACL CAT admin also lists Vigil's SENTINEL TIMELINE (vigilOnly), last.
	// (The file holds the replies with \r\n written out.)
	const deluser = `$11\r\nacl|deluser\r\n`
	replayReplies(t, port, strings.Split(string(data), "\n"), func(s string) string {
		if strings.HasPrefix(s, `*38\r\n$8\r\nsentinel\r\n`) && strings.HasSuffix(s, deluser) {
			s = "*39" + strings.TrimPrefix(s, "*38") + `$17\r\nsentinel|timeline\r\n`
		}
		return strings.ReplaceAll(s, "{PORT}", p)
	})
}

// replayReplies sends each "> command" line of a recorded reply file to the
// sentinel on port and compares the raw reply with the next line (exact,
// Go-escaped, or "~ regexp"). subst, if not nil, rewrites both lines first.
func replayReplies(t *testing.T, port int, lines []string, subst func(string) string) {
	t.Helper()
	replayRepliesWith(t, port, lines, subst, nil)
}

// replayRepliesWith is replayReplies where a "> !name" line (no reply line
// follows) runs actions[name] between two commands.
func replayRepliesWith(t *testing.T, port int, lines []string, subst func(string) string, actions map[string]func()) {
	t.Helper()
	if subst == nil {
		subst = func(s string) string { return s }
	}
	conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "> ") {
			continue
		}
		if name, ok := strings.CutPrefix(l, "> !"); ok {
			act := actions[name]
			if act == nil {
				t.Fatalf("line %d: no action %q", i+1, name)
			}
			act()
			continue
		}
		cmd, want := subst(l[2:]), subst(lines[i+1])
		i++
		frames := 1
		isRE := strings.HasPrefix(want, "~ ")
		if !isRE {
			frames = countFrames(unescape(want))
		}
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Write(resp.AppendCommandStrings(nil, strings.Fields(cmd)...)); err != nil {
			t.Fatal(err)
		}
		var got []byte
		for f := 0; f < frames; f++ {
			b, err := readFrame(br)
			if err != nil {
				t.Fatalf("%s: %v", cmd, err)
			}
			got = append(got, b...)
		}
		g := escape(got)
		if isRE {
			if !regexp.MustCompile(want[2:]).MatchString(g) {
				t.Errorf("%s:\n got %s\nwant ~ %s", cmd, g, want[2:])
			}
			continue
		}
		if g != want {
			t.Errorf("%s:\n got %s\nwant %s", cmd, g, want)
		}
	}
}
