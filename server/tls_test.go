package server

import (
	"context"
	"crypto/tls"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// tlsPair is vigil-server and redis-server 7.0.15 with the same TLS
// directives on a TLS port each (and a plain port for the test's own
// commands).
type tlsPair struct {
	f     testutil.TLSFiles
	ports map[string]int // TLS ports by server name
	plain map[string]*redis.Client
}

func startTLSPair(t *testing.T, extra ...string) *tlsPair {
	t.Helper()
	testutil.NeedRedis(t)
	f := testutil.TLSCerts(t)
	p := &tlsPair{f: f, ports: map[string]int{}, plain: map[string]*redis.Client{}}
	rport := testutil.FreePort(t)
	r := testutil.StartRedis(t, testutil.RedisOptions{TCP: true, Args: append(f.ServerArgs(rport), extra...)})
	p.ports["redis"] = rport
	p.plain["redis"] = redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(r.Port)})
	vport := testutil.FreePort(t)
	_, addr := startLiveTCP(t, append(f.ServerArgs(vport), extra...)...)
	p.ports["vigil"] = vport
	p.plain["vigil"] = redis.NewClient(&redis.Options{Addr: addr})
	for _, c := range p.plain {
		t.Cleanup(func() { c.Close() })
	}
	return p
}

func (p *tlsPair) client(t *testing.T, name string, cfg *tls.Config) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(p.ports[name]), TLSConfig: cfg, MaxRetries: -1, DialTimeout: 2 * time.Second})
	t.Cleanup(func() { c.Close() })
	return c
}

// TestTLSClientsVsRedis: clients on the TLS port of vigil-server and of
// redis-server 7.0.15 with the same configuration: commands, big values,
// pipelines and pub/sub work over TLS; a client without a certificate or
// with one another CA signed is refused under tls-auth-clients yes and
// served under optional (CONFIG SET, for the next connections); a plain
// client on the TLS port gets nothing. Vigil stored the tls-* directives
// and listened on no TLS port.
func TestTLSClientsVsRedis(t *testing.T) {
	p := startTLSPair(t)
	ctx := context.Background()
	big := strings.Repeat("x", 300<<10) // larger than a TLS record and than a reply write
	for _, name := range []string{"redis", "vigil"} {
		c := p.client(t, name, p.f.ClientConfig(true))
		if err := c.Set(ctx, "k", big, 0).Err(); err != nil {
			t.Fatalf("%s: SET over TLS: %v", name, err)
		}
		if v, err := c.Get(ctx, "k").Result(); err != nil || v != big {
			t.Fatalf("%s: GET over TLS: %d bytes, %v", name, len(v), err)
		}
		pipe := c.Pipeline()
		for i := range 200 {
			pipe.Incr(ctx, "n")
			pipe.Get(ctx, "k")
			_ = i
		}
		cmds, err := pipe.Exec(ctx)
		if err != nil || len(cmds) != 400 || cmds[398].(*redis.IntCmd).Val() != 200 {
			t.Fatalf("%s: pipeline over TLS: %v", name, err)
		}
		sub := c.Subscribe(ctx, "ch")
		if _, err := sub.Receive(ctx); err != nil {
			t.Fatalf("%s: SUBSCRIBE over TLS: %v", name, err)
		}
		if err := p.plain[name].Publish(ctx, "ch", "hello").Err(); err != nil {
			t.Fatal(err)
		}
		msg, err := sub.ReceiveMessage(ctx)
		if err != nil || msg.Payload != "hello" {
			t.Fatalf("%s: message over TLS: %v %v", name, msg, err)
		}
		sub.Close()

		for _, bad := range []*tls.Config{p.f.ClientConfig(false), p.f.OtherClientConfig()} {
			if err := p.client(t, name, bad).Ping(ctx).Err(); err == nil {
				t.Errorf("%s: tls-auth-clients yes served a client without a certificate of the CA", name)
			}
		}
		if err := p.plain[name].ConfigSet(ctx, "tls-auth-clients", "optional").Err(); err != nil {
			t.Fatal(err)
		}
		if err := p.client(t, name, p.f.ClientConfig(false)).Ping(ctx).Err(); err != nil {
			t.Errorf("%s: tls-auth-clients optional refused a client without a certificate: %v", name, err)
		}
		if err := p.client(t, name, p.f.OtherClientConfig()).Ping(ctx).Err(); err == nil {
			t.Errorf("%s: tls-auth-clients optional served a certificate of another CA", name)
		}
		plainOnTLS := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(p.ports[name]), MaxRetries: -1, ReadTimeout: 2 * time.Second})
		if err := plainOnTLS.Ping(ctx).Err(); err == nil {
			t.Errorf("%s: a plain client was served on the TLS port", name)
		}
		plainOnTLS.Close()
	}
}

// TestTLSConfigSetVsRedis: CONFIG SET of the tls-* directives as
// redis-server applies them: a certificate that does not load, or an
// invalid tls-protocols, fails with Redis's apply error and leaves the
// value and the context as they were; tls-port moves the TLS listener;
// tls-port 0 closes it.
func TestTLSConfigSetVsRedis(t *testing.T) {
	p := startTLSPair(t)
	ctx := context.Background()
	for _, name := range []string{"redis", "vigil"} {
		pc := p.plain[name]
		for _, kv := range [][2]string{{"tls-cert-file", p.f.Dir + "/missing.crt"}, {"tls-protocols", "TLSv9"}, {"tls-key-file", p.f.ClientKey}} {
			before := pc.ConfigGet(ctx, kv[0]).Val()[kv[0]]
			err := pc.ConfigSet(ctx, kv[0], kv[1]).Err()
			want := "ERR CONFIG SET failed (possibly related to argument '" + kv[0] + "') - Unable to update TLS configuration. Check server logs."
			if err == nil || err.Error() != want {
				t.Errorf("%s: CONFIG SET %s %s: %v, want %s", name, kv[0], kv[1], err, want)
			}
			if after := pc.ConfigGet(ctx, kv[0]).Val()[kv[0]]; after != before {
				t.Errorf("%s: %s after the failed set: %q, want %q", name, kv[0], after, before)
			}
		}
		if err := p.client(t, name, p.f.ClientConfig(true)).Ping(ctx).Err(); err != nil {
			t.Errorf("%s: TLS after the failed sets: %v", name, err)
		}
		// A new certificate (signed by the same CA) applies to new
		// connections.
		if err := pc.ConfigSet(ctx, "tls-cert-file", p.f.ClientCert).Err(); err == nil {
			t.Errorf("%s: a certificate with the old key was applied", name)
		}
		if err := pc.Do(ctx, "CONFIG", "SET", "tls-cert-file", p.f.ClientCert, "tls-key-file", p.f.ClientKey).Err(); err != nil {
			t.Errorf("%s: CONFIG SET of a new pair: %v", name, err)
		}
		cfg := p.f.ClientConfig(true)
		var seen string
		cfg.VerifyConnection = func(cs tls.ConnectionState) error { seen = cs.PeerCertificates[0].Subject.CommonName; return nil }
		if err := p.client(t, name, cfg).Ping(ctx).Err(); err != nil || seen != "Client" {
			t.Errorf("%s: after the new pair: %v, server certificate %q", name, err, seen)
		}
		// bind moves the TLS listeners too (changeBindAddr); an address
		// the host lacks fails and the old ones stay.
		if err := pc.ConfigSet(ctx, "bind", "192.0.2.1").Err(); err == nil || !strings.HasSuffix(err.Error(), "Failed to bind to specified addresses.") {
			t.Errorf("%s: CONFIG SET bind to a foreign address: %v", name, err)
		}
		if err := p.client(t, name, p.f.ClientConfig(true)).Ping(ctx).Err(); err != nil {
			t.Errorf("%s: TLS after the failed bind: %v", name, err)
		}
		moved := testutil.FreePort(t)
		if err := pc.ConfigSet(ctx, "tls-port", strconv.Itoa(moved)).Err(); err != nil {
			t.Fatalf("%s: CONFIG SET tls-port: %v", name, err)
		}
		old := p.ports[name]
		p.ports[name] = moved
		if err := p.client(t, name, p.f.ClientConfig(true)).Ping(ctx).Err(); err != nil {
			t.Errorf("%s: not served on the new TLS port: %v", name, err)
		}
		p.ports[name] = old
		if err := p.client(t, name, p.f.ClientConfig(true)).Ping(ctx).Err(); err == nil {
			t.Errorf("%s: still served on the old TLS port", name)
		}
		if err := pc.ConfigSet(ctx, "tls-port", "0").Err(); err != nil {
			t.Fatalf("%s: CONFIG SET tls-port 0: %v", name, err)
		}
		p.ports[name] = moved
		if err := p.client(t, name, p.f.ClientConfig(true)).Ping(ctx).Err(); err == nil {
			t.Errorf("%s: served after tls-port 0", name)
		}
	}
}

// TestTLSRedisCli: Debian's redis-cli (OpenSSL) talks to vigil-server's
// TLS port (Go's crypto/tls), with a client certificate.
func TestTLSRedisCli(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Skip("redis-cli not found: apt-get install -y redis-tools")
	}
	f := testutil.TLSCerts(t)
	port := testutil.FreePort(t)
	startLiveTCP(t, f.ServerArgs(port)...)
	run := func(args ...string) string {
		a := append([]string{"-p", strconv.Itoa(port), "--tls", "--cacert", f.CACert, "--cert", f.ClientCert, "--key", f.ClientKey}, args...)
		out, err := exec.Command(cli, a...).CombinedOutput()
		if err != nil {
			t.Fatalf("redis-cli %v: %v: %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	if got := run("SET", "a", "b"); got != "OK" {
		t.Errorf("SET: %q", got)
	}
	if got := run("GET", "a"); got != "b" {
		t.Errorf("GET: %q", got)
	}
	if got := run("--no-auth-warning", "CONFIG", "GET", "tls-port"); got != "tls-port\n"+strconv.Itoa(port) {
		t.Errorf("CONFIG GET tls-port: %q", got)
	}
}

// waitTicking polls cond until it holds or 20 s pass, advancing the live
// servers' fake clocks so that their crons run.
func waitTicking(t *testing.T, what string, cond func() bool, clocks ...*liveServer) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		for _, l := range clocks {
			l.clk.Advance(100 * time.Millisecond)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTLSReplicationVsRedis: replication over TLS (tls-replication yes on
// the replica, the master's TLS port) between vigil-server and
// redis-server 7.0.15 both ways, and between two vigil-servers: a full
// sync (from disk and diskless) carrying a value bigger than a TLS record, the stream after it, a
// partial resync after the link drops, and the replica announcing its TLS
// port (REPLCONF listening-port, as Redis with tls-replication and
// tls-port). Vigil dialed its master in plain TCP whatever
// tls-replication said.
func TestTLSReplicationVsRedis(t *testing.T) {
	testutil.NeedRedis(t)
	ctx := context.Background()
	f := testutil.TLSCerts(t)
	big := strings.Repeat("v", 1<<20)
	fill := func(c *redis.Client, tag string) {
		t.Helper()
		pipe := c.Pipeline()
		for i := range 1000 {
			pipe.Set(ctx, tag+":"+strconv.Itoa(i), i, 0)
		}
		pipe.Set(ctx, tag+":big", big, 0)
		if _, err := pipe.Exec(ctx); err != nil {
			t.Fatal(err)
		}
	}
	synced := func(c *redis.Client, tag string, n int) func() bool {
		return func() bool {
			v, err := c.Get(ctx, tag+":"+strconv.Itoa(n-1)).Result()
			b, _ := c.StrLen(ctx, tag+":big").Result()
			return err == nil && v == strconv.Itoa(n-1) && b == int64(len(big))
		}
	}

	// A vigil-server master, a redis-server replica.
	mport := testutil.FreePort(t)
	// The vigil master syncs from disk (its RDB file sent over TLS), the
	// redis-server master diskless.
	m, maddr := startLiveTCP(t, append(f.ServerArgs(mport), "--repl-diskless-sync", "no")...)
	mc := redis.NewClient(&redis.Options{Addr: maddr})
	t.Cleanup(func() { mc.Close() })
	fill(mc, "a")
	rport := testutil.FreePort(t)
	r := testutil.StartRedis(t, testutil.RedisOptions{TCP: true, Args: append(f.ServerArgs(rport),
		"--tls-replication", "yes", "--replicaof", "127.0.0.1", strconv.Itoa(mport))})
	rc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(r.Port)})
	t.Cleanup(func() { rc.Close() })
	waitTicking(t, "redis-server's full sync from vigil-server over TLS", synced(rc, "a", 1000), m)
	mc.Set(ctx, "a:after", "streamed", 0)
	waitTicking(t, "the stream to redis-server", func() bool { return rc.Get(ctx, "a:after").Val() == "streamed" }, m)
	if info := mc.Info(ctx, "replication").Val(); !strings.Contains(info, "port="+strconv.Itoa(rport)+",") {
		t.Errorf("the redis-server replica's announced port is not its TLS port %d:\n%s", rport, info)
	}

	// A vigil-server replica of a redis-server master.
	rmport := testutil.FreePort(t)
	rm := testutil.StartRedis(t, testutil.RedisOptions{TCP: true, Args: append(f.ServerArgs(rmport), "--repl-diskless-sync-delay", "0")})
	rmc := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(rm.Port)})
	t.Cleanup(func() { rmc.Close() })
	fill(rmc, "b")
	vport := testutil.FreePort(t)
	v, vaddr := startLiveTCP(t, append(f.ServerArgs(vport), "--tls-replication", "yes")...)
	vc := redis.NewClient(&redis.Options{Addr: vaddr})
	t.Cleanup(func() { vc.Close() })
	if err := vc.ReplicaOf(ctx, "127.0.0.1", strconv.Itoa(rmport)).Err(); err != nil {
		t.Fatal(err)
	}
	waitTicking(t, "vigil-server's full sync from redis-server over TLS", synced(vc, "b", 1000), v)
	rmc.Set(ctx, "b:after", "streamed", 0)
	waitTicking(t, "the stream to vigil-server", func() bool { return vc.Get(ctx, "b:after").Val() == "streamed" }, v)
	if info := rmc.Info(ctx, "replication").Val(); !strings.Contains(info, "port="+strconv.Itoa(vport)+",") {
		t.Errorf("the vigil-server replica's announced port is not its TLS port %d:\n%s", vport, info)
	}

	// Two vigil-servers: the replica moves to the vigil master, then its
	// link drops and it resyncs partially.
	if err := vc.ReplicaOf(ctx, "127.0.0.1", strconv.Itoa(mport)).Err(); err != nil {
		t.Fatal(err)
	}
	waitTicking(t, "vigil-server's sync from vigil-server over TLS", synced(vc, "a", 1000), v, m)
	mc.Set(ctx, "a:before-drop", "1", 0)
	waitTicking(t, "the stream between vigil-servers", func() bool { return vc.Get(ctx, "a:before-drop").Val() == "1" }, v, m)
	partial := func() int {
		s := mc.Info(ctx, "stats").Val()
		i := strings.Index(s, "sync_partial_ok:")
		n, _ := strconv.Atoi(strings.TrimSpace(s[i+len("sync_partial_ok:") : i+len("sync_partial_ok:")+strings.IndexByte(s[i+len("sync_partial_ok:"):], '\r')]))
		return n
	}
	before := partial()
	if err := vc.Do(ctx, "CLIENT", "KILL", "TYPE", "master").Err(); err != nil {
		t.Fatal(err)
	}
	mc.Set(ctx, "a:after-drop", "2", 0)
	waitTicking(t, "the stream after the drop", func() bool { return vc.Get(ctx, "a:after-drop").Val() == "2" }, v, m)
	if after := partial(); after != before+1 {
		t.Errorf("sync_partial_ok %d -> %d: the link came back without a partial resync", before, after)
	}
}

// TestTLSSubscriberNeverReadsVsRedis: a TLS subscriber that never reads
// is closed at its output buffer limit, as on redis-server, while the
// publisher and other clients are served; a TLS client pipelining big
// replies it never reads (its write blocked in the TLS connection) does
// not hold the server either, and CLIENT KILL ends it.
func TestTLSSubscriberNeverReadsVsRedis(t *testing.T) {
	p := startTLSPair(t, "--client-output-buffer-limit", "pubsub 1mb 0 0")
	ctx := context.Background()
	msg := strings.Repeat("m", 64<<10)
	for _, name := range []string{"redis", "vigil"} {
		conn, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(p.ports[name]), p.f.ClientConfig(true))
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Write([]byte("*3\r\n$6\r\nCLIENT\r\n$7\r\nSETNAME\r\n$5\r\nstuck\r\n*2\r\n$9\r\nSUBSCRIBE\r\n$2\r\nch\r\n")); err != nil {
			t.Fatal(err)
		}
		pc := p.plain[name]
		waitTicking(t, name+": the subscriber", func() bool { return pc.PubSubNumSub(ctx, "ch").Val()["ch"] == 1 })
		for i := 0; i < 2000 && pc.PubSubNumSub(ctx, "ch").Val()["ch"] == 1; i++ {
			if err := pc.Publish(ctx, "ch", msg).Err(); err != nil {
				t.Fatalf("%s: PUBLISH: %v", name, err)
			}
		}
		waitTicking(t, name+": the subscriber closed at its limit", func() bool {
			return !strings.Contains(pc.ClientList(ctx).Val(), "name=stuck")
		})
		if err := pc.Set(ctx, "after", "1", 0).Err(); err != nil {
			t.Errorf("%s: served after: %v", name, err)
		}

		// A normal client pipelining GETs of 1 MB and reading none of
		// the replies (no output limit for normal clients): its socket
		// fills, and everybody else is still served.
		if err := pc.Set(ctx, "big", strings.Repeat("b", 1<<20), 0).Err(); err != nil {
			t.Fatal(err)
		}
		greedy, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(p.ports[name]), p.f.ClientConfig(true))
		if err != nil {
			t.Fatal(err)
		}
		defer greedy.Close()
		var req []byte
		for range 64 {
			req = append(req, "*2\r\n$3\r\nGET\r\n$3\r\nbig\r\n"...)
		}
		if _, err := greedy.Write(req); err != nil {
			t.Fatal(err)
		}
		for i := range 20 {
			if err := pc.Incr(ctx, "served").Err(); err != nil {
				t.Fatalf("%s: command %d while a TLS client does not read: %v", name, i, err)
			}
		}
		// CLIENT KILL ends it, its write blocked or not.
		waitTicking(t, name+": the greedy client listed", func() bool { return strings.Count(pc.ClientList(ctx).Val(), "\n") == 2 })
		if err := pc.ClientKillByFilter(ctx, "TYPE", "normal", "SKIPME", "yes").Err(); err != nil {
			t.Fatal(err)
		}
		waitTicking(t, name+": the greedy client gone", func() bool { return strings.Count(pc.ClientList(ctx).Val(), "\n") == 1 })
	}
}

// TestTLSCloseAfterReplyVsRedis: a TLS client whose replies go through the
// output queue (it subscribed once) gets the reply of the command that
// closes it (QUIT; ACL LOAD in acl.tcl's "ACL load and save" under
// --tls) before the close, as from redis-server. Vigil closed the
// connection while the reply waited in the queue.
func TestTLSCloseAfterReplyVsRedis(t *testing.T) {
	p := startTLSPair(t)
	for _, name := range []string{"redis", "vigil"} {
		for i := range 20 {
			conn, err := tls.Dial("tcp", "127.0.0.1:"+strconv.Itoa(p.ports[name]), p.f.ClientConfig(true))
			if err != nil {
				t.Fatal(err)
			}
			var got []byte
			buf := make([]byte, 4096)
			for _, cmd := range []string{"*2\r\n$9\r\nSUBSCRIBE\r\n$2\r\nch\r\n", "*2\r\n$11\r\nUNSUBSCRIBE\r\n$2\r\nch\r\n", "*1\r\n$4\r\nQUIT\r\n"} {
				if _, err := conn.Write([]byte(cmd)); err != nil {
					t.Fatal(err)
				}
				conn.SetReadDeadline(time.Now().Add(5 * time.Second))
				n, _ := conn.Read(buf)
				got = append(got, buf[:n]...)
			}
			conn.Close()
			if !strings.HasSuffix(string(got), ":0\r\n+OK\r\n") {
				t.Fatalf("%s, round %d: %q, want QUIT's +OK after UNSUBSCRIBE's reply", name, i, got)
			}
		}
	}
}

// TestTLSUnauthenticatedOutputLimitVsRedis: an unauthenticated TLS client
// that sends commands without reading their NOAUTH errors is closed at
// the unauthenticated output limit, as by redis-server (auth.tcl's "For
// unauthenticated clients output buffer is limited" under --tls). Vigil's
// write of its replies waited for the peer and the limit never applied.
func TestTLSUnauthenticatedOutputLimitVsRedis(t *testing.T) {
	p := startTLSPair(t)
	ctx := context.Background()
	for _, name := range []string{"redis", "vigil"} {
		admin := p.plain[name].Conn()
		if err := admin.ConfigSet(ctx, "requirepass", "pw").Err(); err != nil {
			t.Fatal(err)
		}
		// A small receive buffer, so that the server's socket fills
		// sooner; ten commands per write, spaced, so that each batch's
		// replies stay under the limit and only their sum passes it (as
		// the suite's client, one command at a time).
		d := &net.Dialer{Control: func(_, _ string, rc syscall.RawConn) error {
			return rc.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
		}}
		conn, err := tls.DialWithDialer(d, "tcp", "127.0.0.1:"+strconv.Itoa(p.ports[name]), p.f.ClientConfig(true))
		if err != nil {
			t.Fatal(err)
		}
		req := []byte(strings.Repeat("*3\r\n$3\r\nSET\r\n$1\r\nx\r\n$1\r\n5\r\n", 10)) // 10 NOAUTH errors: 460 bytes
		conn.SetWriteDeadline(time.Now().Add(60 * time.Second))
		var werr error
		for i := 0; i < 100000 && werr == nil; i++ { // up to a million commands
			_, werr = conn.Write(req)
			time.Sleep(100 * time.Microsecond)
		}
		conn.Close()
		if werr == nil {
			t.Errorf("%s: a million commands were taken from a client that reads no reply", name)
		} else if ne, ok := werr.(interface{ Timeout() bool }); ok && ne.Timeout() {
			t.Errorf("%s: the client was not closed (its writes blocked): %v", name, werr)

		}
		if err := admin.ConfigSet(ctx, "requirepass", "").Err(); err != nil {
			t.Fatal(err)
		}
		admin.Close()
	}
}
