package daemon

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/vigil-kv/vigil/internal/netshell"
)

var (
	fuzzOnce   sync.Once
	fuzzDaemon *Daemon
)

// fuzzClient returns a client of a shared daemon (monitoring a dead
// master), whose replies go nowhere.
func fuzzClient(t testing.TB) *client {
	fuzzOnce.Do(func() {
		dir, err := os.MkdirTemp("", "vigil-fuzz-*")
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, "sentinel.conf")
		os.WriteFile(path, []byte("port 0\nsentinel monitor mym 127.0.0.1 1 2\nsentinel monitor other 127.0.0.1 2 1\n"), 0o644)
		st, err := LoadConfig(path, nil)
		if err != nil {
			t.Fatal(err)
		}
		d, err := New(Options{Settings: st, Log: zerolog.Nop(), Exit: func(int) {}})
		if err != nil {
			t.Fatal(err)
		}
		if err := d.Start(); err != nil {
			t.Fatal(err)
		}
		go d.Run(context.Background())
		fuzzDaemon = d
	})
	a, b := net.Pipe()
	go func() { // drain
		buf := make([]byte, 4096)
		for {
			if _, err := b.Read(buf); err != nil {
				return
			}
		}
	}()
	c := &client{d: fuzzDaemon, conn: a, id: fuzzDaemon.nextID.Add(1), created: time.Now(), idleAt: time.Now(),
		authed: true, user: "default"}
	c.out = netshell.NewQueue(a, maxPendingOutput, &fuzzDaemon.stats.writes, &fuzzDaemon.stats.netOut)
	c.w.Proto = 2
	go c.out.Run()
	return c
}

// FuzzDispatch runs arbitrary commands (arguments separated by spaces,
// commands by newlines) through the command table: peer input must never
// panic the sentinel.
func FuzzDispatch(f *testing.F) {
	for _, s := range []string{
		"SENTINEL SET mym quorum 1 parallel-syncs 2",
		"SENTINEL MONITOR x 127.0.0.1 6379 2\nSENTINEL REMOVE x",
		"SENTINEL IS-MASTER-DOWN-BY-ADDR 127.0.0.1 1 5 abc",
		"SENTINEL DEBUG ping-period 100 info-period 1",
		"HELLO 3\nSUBSCRIBE a\nPSUBSCRIBE *\nPING\nUNSUBSCRIBE",
		"CLIENT KILL TYPE pubsub SKIPME no\nCLIENT LIST TYPE normal",
		"COMMAND LIST FILTERBY PATTERN s*\nCOMMAND INFO ping x\nCOMMAND DOCS sentinel",
		"SENTINEL CONFIG SET announce-port 5\nSENTINEL CONFIG GET *",
		"ACL CAT admin\nACL GETUSER default\nACL GENPASS 7",
		"SENTINEL RESET *\nSENTINEL INFO-CACHE\nSENTINEL CKQUORUM other",
		"CLIENT REPLY SKIP\nPING\nCLIENT REPLY OFF\nINFO\nCLIENT REPLY ON",
		"PUBLISH __sentinel__:hello 1.2.3.4,5,aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa,9,mym,127.0.0.1,1,3",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, script string) {
		c := fuzzClient(t)
		defer func() {
			c.d.hub.unsubscribeAll(c)
			c.out.Close()
			c.conn.Close()
		}()
		for _, line := range strings.Split(script, "\n") {
			args := strings.Fields(line)
			if len(args) == 0 {
				continue
			}
			// Commands that would end the shared daemon or the process.
			switch strings.ToLower(args[0]) {
			case "shutdown":
				continue
			case "sentinel":
				if len(args) > 1 && (strings.EqualFold(args[1], "simulate-failure") || strings.EqualFold(args[1], "flushconfig")) {
					continue
				}
			}
			c.dispatch(toBytes(args))
			c.flush()
		}
	})
}
