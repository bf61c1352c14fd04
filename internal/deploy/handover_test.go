package deploy

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// fakeSentinel answers SENTINEL FAILOVER with +OK (counting them) and
// SENTINEL MASTER with a master at old, not failing over: every hand-over it
// starts looks aborted at once.
func fakeSentinel(t *testing.T, old string, failovers *atomic.Int32) string {
	t.Helper()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	host, port, _ := net.SplitHostPort(old)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func(c net.Conn) {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					argv, err := readArgv(br)
					if err != nil || len(argv) == 0 {
						return
					}
					cmd := strings.ToUpper(string(argv[0]))
					if len(argv) > 1 {
						cmd += " " + strings.ToUpper(string(argv[1]))
					}
					switch cmd {
					case "SENTINEL FAILOVER":
						failovers.Add(1)
						fmt.Fprint(c, "+OK\r\n")
					case "SENTINEL MASTER":
						fields := []string{"name", "mymaster", "ip", host, "port", port, "flags", "master"}
						fmt.Fprintf(c, "*%d\r\n", len(fields))
						for _, f := range fields {
							fmt.Fprintf(c, "$%d\r\n%s\r\n", len(f), f)
						}
					default:
						fmt.Fprint(c, "-ERR unknown command\r\n")
					}
				}
			}(c)
		}
	}()
	return ln.Addr().String()
}

// TestHandOverViaRetriesAborted: an aborted hand-over (the master is
// unchanged) is asked again, handOverAttempts times in all; one that takes
// on a later attempt returns the new master.
func TestHandOverViaRetriesAborted(t *testing.T) {
	const old = "127.0.0.1:7000"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	var n atomic.Int32
	s := fakeSentinel(t, old, &n)
	never := func(context.Context) (string, error) { return old, nil }
	if _, err := HandOverVia(ctx, []string{s}, "mymaster", old, never); !errors.Is(err, ErrHandoverAborted) {
		t.Fatalf("err %v, want ErrHandoverAborted", err)
	}
	if got := n.Load(); got != handOverAttempts {
		t.Fatalf("%d SENTINEL FAILOVER, want %d", got, handOverAttempts)
	}

	var m atomic.Int32
	s = fakeSentinel(t, old, &m)
	second := func(context.Context) (string, error) {
		if m.Load() >= 2 {
			return "127.0.0.1:7001", nil
		}
		return old, nil
	}
	addr, err := HandOverVia(ctx, []string{s}, "mymaster", old, second)
	if err != nil || addr != "127.0.0.1:7001" {
		t.Fatalf("second attempt: %q %v", addr, err)
	}
	if got := m.Load(); got != 2 {
		t.Fatalf("%d SENTINEL FAILOVER, want 2", got)
	}
}

// readArgv reads one RESP multibulk request.
func readArgv(br *bufio.Reader) ([][]byte, error) {
	line, err := br.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "*") {
		return nil, errors.New("not a multibulk")
	}
	n, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
	argv := make([][]byte, 0, n)
	for i := 0; i < n; i++ {
		if line, err = br.ReadString('\n'); err != nil {
			return nil, err
		}
		l, _ := strconv.Atoi(strings.TrimSpace(line[1:]))
		b := make([]byte, l+2)
		if _, err := io.ReadFull(br, b); err != nil {
			return nil, err
		}
		argv = append(argv, b[:l])
	}
	return argv, nil
}
