package server

import (
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// TestMonitorOwnCommandAfterReply: a monitor's own command shows its reply
// first, then its monitor line, as Redis 7.0 (call feeds the monitors after
// the command ran, into the same output buffer), while another client's
// commands keep feeding it.
func TestMonitorOwnCommandAfterReply(t *testing.T) {
	l := startLive(t)
	m, c := l.dial(t), l.dial(t)
	if got := m.do("MONITOR"); got != "+OK" {
		t.Fatalf("MONITOR: %s", got)
	}
	own := regexp.MustCompile(`^\+\d+\.\d{6} \[0 unix:.*\] "ECHO" "m\d+"$`)
	other := regexp.MustCompile(`^\+\d+\.\d{6} \[0 unix:.*\] "ECHO" "c\d+"$`)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop) // before the connections close (t.Cleanup)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			c.send("ECHO", "c"+strconv.Itoa(i))
			c.read()
		}
	}()
	for i := 0; i < 200; i++ {
		m.send("ECHO", "m"+strconv.Itoa(i))
		// Lines of the other client's commands may come first; the
		// reply must come before the own command's line.
		for {
			got := m.read()
			if other.MatchString(got) {
				continue
			}
			if want := `"m` + strconv.Itoa(i) + `"`; got != want {
				t.Fatalf("round %d: got %s before the reply %s", i, got, want)
			}
			break
		}
		for {
			got := m.read()
			if other.MatchString(got) {
				continue
			}
			if !own.MatchString(got) || !strings.HasSuffix(got, `"m`+strconv.Itoa(i)+`"`) {
				t.Fatalf("round %d: got %s, want the ECHO's monitor line", i, got)
			}
			break
		}
	}
}

// TestSubscribeReplyBeforeMessages: the confirmation of SUBSCRIBE reaches
// the subscriber before any message published after it, and nothing
// arrives after the confirmation of UNSUBSCRIBE, while another client
// publishes all the time.
func TestSubscribeReplyBeforeMessages(t *testing.T) {
	l := startLive(t)
	sub, pub := l.dial(t), l.dial(t)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	defer wg.Wait()
	defer close(stop) // before the connections close (t.Cleanup)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			pub.do("PUBLISH", "ch", "x")
		}
	}()
	for i := 0; i < 200; i++ {
		if got := sub.do("SUBSCRIBE", "ch"); got != `["subscribe", "ch", (integer) 1]` {
			t.Fatalf("round %d: SUBSCRIBE: got %s first", i, got)
		}
		sub.send("UNSUBSCRIBE", "ch")
		for {
			got := sub.read()
			if got == `["message", "ch", "x"]` {
				continue
			}
			if got != `["unsubscribe", "ch", (integer) 0]` {
				t.Fatalf("round %d: UNSUBSCRIBE: %s", i, got)
			}
			break
		}
	}
}
