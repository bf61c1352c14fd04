package deploy

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestRenderConfigReplacesAndAppends(t *testing.T) {
	tmpl := "# comment port 1\nport 6379\nbind 127.0.0.1 -::1\nsave 3600 1\nsave 60 10000\nslaveof 10.0.0.1 6379\n" +
		"sentinel monitor mymaster 127.0.0.1 6379 2\nsentinel down-after-milliseconds mymaster 5000\n"
	got := renderConfig(tmpl, []string{
		"port 7000", "save 10 1", "replicaof 127.0.0.1 7001",
		"sentinel down-after-milliseconds mymaster 1000", "sentinel down-after-milliseconds other 9",
		"appendonly yes",
	})
	want := "# comment port 1\nport 7000\nbind 127.0.0.1 -::1\nsave 10 1\nreplicaof 127.0.0.1 7001\n" +
		"sentinel monitor mymaster 127.0.0.1 6379 2\nsentinel down-after-milliseconds mymaster 1000\n" +
		"\n# Set by vigil up (internal/deploy).\nsentinel down-after-milliseconds other 9\nappendonly yes\n"
	if got != want {
		t.Errorf("renderConfig:\n%s\nwant:\n%s", got, want)
	}
}

// lines returns the config's directive lines (no comments or blanks).
func lines(text string) map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(text, "\n") {
		if k := directiveKey(l); k != "" {
			out[k] = l
		}
	}
	return out
}

func TestNodeConfigs(t *testing.T) {
	dir := t.TempDir()
	d, err := newFree(t, Spec{Dir: dir, VigilExe: "/bin/true",
		DownAfter: 1500 * time.Millisecond, ServerDirectives: []string{"appendonly yes"}, SentinelDirectives: []string{"sentinel deny-scripts-reconfig yes"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(d.Servers) != 3 || len(d.Sentinels) != 3 {
		t.Fatalf("%d servers, %d sentinels; want 3 and 3", len(d.Servers), len(d.Sentinels))
	}
	m, r := d.Servers[0], d.Servers[2]
	read := func(n *Node) map[string]string {
		b, err := os.ReadFile(n.ConfPath)
		if err != nil {
			t.Fatal(err)
		}
		return lines(string(b))
	}
	for _, n := range d.Nodes() {
		if n.Dir != filepath.Join(dir, n.Name) || filepath.Dir(n.ConfPath) != n.Dir || filepath.Dir(n.LogPath) != n.Dir || filepath.Dir(n.PidPath) != n.Dir {
			t.Errorf("%s: files outside its directory: %+v", n.Name, n)
		}
		c := read(n)
		for k, want := range map[string]string{
			"port": "port " + itoa(n.Port), "bind": "bind 127.0.0.1", "dir": "dir " + n.Dir,
			"logfile": "logfile " + n.LogPath, "pidfile": "pidfile " + n.PidPath,
		} {
			if c[k] != want {
				t.Errorf("%s: %q, want %q", n.Name, c[k], want)
			}
		}
	}
	mc, rc := read(m), read(r)
	if _, ok := mc["replicaof"]; ok {
		t.Errorf("master config has %q", mc["replicaof"])
	}
	if rc["replicaof"] != "replicaof 127.0.0.1 "+itoa(m.Port) {
		t.Errorf("replica: %q", rc["replicaof"])
	}
	if mc["appendonly"] != "appendonly yes" || rc["appendonly"] != "appendonly yes" {
		t.Errorf("server directive not applied: %q %q", mc["appendonly"], rc["appendonly"])
	}
	// down-after 1.5 s: repl-timeout 2 (the minimum), pings every second,
	// on both data nodes.
	for _, c := range []map[string]string{mc, rc} {
		if c["repl-timeout"] != "repl-timeout 2" || c["repl-ping-replica-period"] != "repl-ping-replica-period 1" {
			t.Errorf("repl-timeout not matched to down-after: %q %q", c["repl-timeout"], c["repl-ping-replica-period"])
		}
	}
	if rc["replica-priority"] != "replica-priority 100" {
		t.Errorf("template line lost: %q", rc["replica-priority"])
	}
	sc := read(d.Sentinels[1])
	for k, want := range map[string]string{
		"sentinel monitor mymaster":                 "sentinel monitor mymaster 127.0.0.1 " + itoa(m.Port) + " 2",
		"sentinel down-after-milliseconds mymaster": "sentinel down-after-milliseconds mymaster 1500",
		"sentinel failover-timeout mymaster":        "sentinel failover-timeout mymaster 60000",
		"sentinel deny-scripts-reconfig":            "sentinel deny-scripts-reconfig yes",
	} {
		if sc[k] != want {
			t.Errorf("sentinel: %q, want %q", sc[k], want)
		}
	}
	if got := d.Servers[0].argv; len(got) != 2 || got[0] != "/bin/true" || got[1] != "server" {
		t.Errorf("server argv %q", got)
	}
	if got := d.Sentinels[0].argv; len(got) != 2 || got[1] != "sentinel" {
		t.Errorf("sentinel argv %q", got)
	}
}

func TestOtherMasterNameRenamesTemplateLines(t *testing.T) {
	d, err := newFree(t, Spec{Dir: t.TempDir(), VigilExe: "/bin/true",
		MasterName: "cache", Sentinels: 1, Replicas: -1})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(d.Sentinels[0].ConfPath)
	c := lines(string(b))
	if c["sentinel down-after-milliseconds cache"] != "sentinel down-after-milliseconds cache 5000" || strings.Contains(strings.Join(mapValues(c), "\n"), "mymaster") {
		t.Errorf("sentinel config:\n%s", b)
	}
	if c["sentinel monitor cache"] != "sentinel monitor cache 127.0.0.1 "+itoa(d.Servers[0].Port)+" 1" {
		t.Errorf("monitor line %q (quorum of 1 sentinel is 1)", c["sentinel monitor cache"])
	}
	if len(d.Servers) != 1 {
		t.Errorf("%d servers, want 1", len(d.Servers))
	}
}

func TestPortBusy(t *testing.T) {
	for _, tc := range []struct {
		name     string
		sentinel bool
		flag     string
	}{{"server", false, "--base-port"}, {"sentinel", true, "--sentinel-base-port"}} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			busy := ln.Addr().(*net.TCPAddr).Port
			var pb *PortBusyError
			// The other ports are free when chosen but may be taken before New
			// checks them: retry until the busy port is the one reported.
			for attempt := 0; attempt < 20; attempt++ {
				spec := Spec{Dir: t.TempDir(), VigilExe: "/bin/true", BasePort: freePort(t), SentinelBasePort: freePort(t) + 10}
				if tc.sentinel {
					spec.SentinelBasePort = busy
				} else {
					spec.BasePort = busy
				}
				_, err = New(spec)
				if !errors.As(err, &pb) {
					t.Fatalf("New: %v, want a PortBusyError", err)
				}
				if pb.Port == busy {
					break
				}
			}
			if pb.Port != busy || pb.Flag != tc.flag {
				t.Errorf("port %d flag %s, want %d %s", pb.Port, pb.Flag, busy, tc.flag)
			}
			if msg := err.Error(); !strings.Contains(msg, "port "+itoa(busy)) || !strings.Contains(msg, tc.flag) || !strings.Contains(msg, "in use") {
				t.Errorf("message %q does not name the port and the flag", msg)
			}
		})
	}
}

func TestSpecValidation(t *testing.T) {
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Kind: "docker"}, `unknown server kind "docker"`},
		{Spec{BasePort: 65535}, "the servers need ports 65535-65537"},
		{Spec{BasePort: 26378}, "overlap sentinel ports"},
		{Spec{Quorum: 4}, "quorum 4: want 1 to 3"},
		{Spec{MasterName: "my master"}, "want one word"},
	} {
		err := tc.spec.withDefaults().validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.spec, err, tc.want)
		}
	}
	if err := (Spec{}).withDefaults().validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
}

func TestRedisKindNamesThePackage(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	_, err := newFree(t, Spec{Kind: KindRedis, Dir: t.TempDir()})
	if err == nil || !strings.Contains(err.Error(), "apt-get install -y redis-server") {
		t.Errorf("New without redis-server: %v", err)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// newFree calls New with spec on free ports. A port found free can be taken
// by another process (other test packages run alongside) before New checks
// it, so a PortBusyError is retried on new ports.
func newFree(t *testing.T, spec Spec) (*Deployment, error) {
	t.Helper()
	for attempt := 0; ; attempt++ {
		spec.BasePort, spec.SentinelBasePort = freePort(t), freePort(t)+10
		d, err := New(spec)
		var pb *PortBusyError
		// Two free ports drawn apart can still give overlapping ranges.
		overlap := err != nil && strings.Contains(err.Error(), "overlap sentinel ports")
		if (errors.As(err, &pb) || overlap) && attempt < 20 {
			continue
		}
		return d, err
	}
}

// freePort returns a port free to listen on, with room for the ports
// after it, from 10000-19999: below the kernel's ephemeral range and the
// ranges .ci/run gives its side lanes (20000-31999). The other test
// packages' client connections take their source ports from the ephemeral
// range, and one in TIME_WAIT (a client socket, without SO_REUSEADDR) keeps
// a listener off its port: a port bind(0) had just handed out was found
// busy again in all 20 of newFree's tries beside the server package's
// connection churn. With an ephemeral range reaching below 20000 it
// falls back to the kernel's choice.
func freePort(t *testing.T) int {
	t.Helper()
	lo := 32768
	if b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range"); err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			if n, err := strconv.Atoi(f[0]); err == nil {
				lo = n
			}
		}
	}
	for range 1000 {
		p := 10000 + rand.IntN(9900)
		if lo < 20000 { // the kernel's choice, with room for the ports after it
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			p = ln.Addr().(*net.TCPAddr).Port
			ln.Close()
			if p >= 60000 {
				continue
			}
		}
		if ln, err := net.Listen("tcp", "127.0.0.1:"+strconv.Itoa(p)); err == nil {
			ln.Close()
			return p
		}
	}
	t.Fatal("no free port")
	return 0
}

func mapValues(m map[string]string) []string {
	var out []string
	for _, v := range m {
		out = append(out, v)
	}
	return out
}

func TestReplTimeoutFollowsDownAfter(t *testing.T) {
	read := func(spec Spec) map[string]string {
		t.Helper()
		d, err := newFree(t, spec)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(d.Servers[1].ConfPath)
		if err != nil {
			t.Fatal(err)
		}
		return lines(string(b))
	}
	// The template's down-after (5000 ms) when the spec gives none.
	c := read(Spec{Dir: t.TempDir(), VigilExe: "/bin/true"})
	if c["repl-timeout"] != "repl-timeout 5" || c["repl-ping-replica-period"] != "repl-ping-replica-period 1" {
		t.Errorf("template down-after: %q %q", c["repl-timeout"], c["repl-ping-replica-period"])
	}
	// The spec's, in whole seconds.
	c = read(Spec{Dir: t.TempDir(), VigilExe: "/bin/true", DownAfter: 7900 * time.Millisecond})
	if c["repl-timeout"] != "repl-timeout 7" {
		t.Errorf("down-after 7.9 s: %q", c["repl-timeout"])
	}
	// A server directive overrides it.
	c = read(Spec{Dir: t.TempDir(), VigilExe: "/bin/true", DownAfter: 2 * time.Second, ServerDirectives: []string{"repl-timeout 30"}})
	if c["repl-timeout"] != "repl-timeout 30" {
		t.Errorf("override: %q", c["repl-timeout"])
	}
}
