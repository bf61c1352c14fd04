package server

import (
	"sync"
	"testing"
)

// TestServersBuildTableConcurrently starts servers from several goroutines
// at once: the command table is built once per process, so `go test -race`
// finds no race on its initialisation.
func TestServersBuildTableConcurrently(t *testing.T) {
	var wg sync.WaitGroup
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ts := newTestServer(t)
			if got := ts.do(ts.client(), "PING"); got != "+PONG\r\n" {
				t.Errorf("PING = %q", got)
			}
		}()
	}
	wg.Wait()
	if len(allCommands) == 0 {
		t.Fatal("command table is empty")
	}
}
