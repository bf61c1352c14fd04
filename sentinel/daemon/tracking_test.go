package daemon

import (
	"bufio"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

// TestTrackingReplies replays testdata/tracking_replies.txt, recorded from
// redis-sentinel 7.0.15: CLIENT TRACKING's options and errors, CACHING,
// GETREDIR, TRACKINGINFO and CLIENT INFO's flags and redir=, in RESP2 and
// RESP3, with a REDIRECT client that goes away (nothing is pushed).
func TestTrackingReplies(t *testing.T) {
	data, err := os.ReadFile("testdata/tracking_replies.txt")
	if err != nil {
		t.Fatal(err)
	}
	port, d := startSentinel(t, "sentinel monitor mym 127.0.0.1 1 2\n")
	other, obr := dialSentinel(t, port)
	defer other.Close()
	otherID := strings.TrimSuffix(strings.TrimPrefix(string(roundTrip(t, other, obr, "CLIENT", "ID")), ":"), "\r\n")
	id, _ := strconv.ParseInt(otherID, 10, 64)
	subst := func(s string) string { return strings.ReplaceAll(s, "{OTHER}", otherID) }
	replayRepliesWith(t, port, strings.Split(string(data), "\n"), subst, map[string]func(){
		"CLOSEOTHER": func() {
			other.Close()
			deadline := time.Now().Add(10 * time.Second)
			for {
				d.clientsMu.Lock()
				gone := d.clients[id] == nil
				d.clientsMu.Unlock()
				if gone {
					return
				}
				if time.Now().After(deadline) {
					t.Fatal("the closed client is still listed")
				}
				time.Sleep(5 * time.Millisecond)
			}
		},
	})
}

// TestTrackingClientsInfo: INFO's tracking_clients counts the clients with
// tracking on, and a tracking client's end uncounts it (redis-sentinel
// 7.0.15 reports tracking_clients:1 while one client tracks).
func TestTrackingClientsInfo(t *testing.T) {
	port, d := startSentinel(t, "sentinel monitor mym 127.0.0.1 1 2\n")
	c, br := dialSentinel(t, port)
	defer c.Close()
	info := func() string { return string(roundTrip(t, c, br, "INFO", "clients")) }
	if !strings.Contains(info(), "tracking_clients:0\r\n") {
		t.Fatalf("before: %q", info())
	}
	roundTrip(t, c, br, "CLIENT", "TRACKING", "on", "bcast")
	roundTrip(t, c, br, "CLIENT", "TRACKING", "on", "bcast", "prefix", "a")
	if got := info(); !strings.Contains(got, "tracking_clients:1\r\n") {
		t.Fatalf("on: %q", got)
	}
	roundTrip(t, c, br, "CLIENT", "TRACKING", "off")
	if got := info(); !strings.Contains(got, "tracking_clients:0\r\n") {
		t.Fatalf("off: %q", got)
	}
	c2, br2 := dialSentinel(t, port)
	roundTrip(t, c2, br2, "CLIENT", "TRACKING", "on")
	if got := info(); !strings.Contains(got, "tracking_clients:1\r\n") {
		t.Fatalf("second client on: %q", got)
	}
	c2.Close()
	deadline := time.Now().Add(10 * time.Second)
	for d.trackingClients.Load() != 0 {
		if time.Now().After(deadline) {
			t.Fatal("a closed tracking client is still counted")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func dialSentinel(t *testing.T, port int) (net.Conn, *bufio.Reader) {
	t.Helper()
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	return c, bufio.NewReader(c)
}

func roundTrip(t *testing.T, c net.Conn, br *bufio.Reader, args ...string) []byte {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(resp.AppendCommandStrings(nil, args...)); err != nil {
		t.Fatal(err)
	}
	b, err := readFrame(br)
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return b
}
