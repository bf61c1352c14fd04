package client

import (
	"context"
	"errors"
	"net"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/internal/testutil"
)

func newTestClient(t *testing.T, opt Options) *Client {
	t.Helper()
	if opt.MasterName == "" {
		opt.MasterName = "mym"
	}
	c, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// eventually polls cond until it holds or the deadline (a bound on waiting,
// not a timing assertion) passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Poll(t, 20*time.Second, what, cond)
}

// A sentinel that accepts connections but never answers must not delay
// discovery: all sentinels are asked at once and the first good answer wins.
// SentinelTimeout is an hour, so a client that asked the silent sentinel
// first and waited would hang until the test binary's timeout.
func TestDiscoveryDoesNotWaitForASilentSentinel(t *testing.T) {
	master := dataNode(t, "master")
	silent := silentNode(t)
	good := sentinelNode(t, &sentinelState{master: master})
	c := newTestClient(t, Options{
		SentinelAddrs:   []string{silent.addr(), good.addr()},
		SentinelTimeout: time.Hour,
	})
	start := time.Now()
	addr, err := c.MasterAddr(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("discovered %s in %v with a silent sentinel first in the list", addr, time.Since(start))
	if addr != master.addr() {
		t.Fatalf("master = %s, want %s", addr, master.addr())
	}
	if got := c.Sentinels()[0]; got != good.addr() {
		t.Fatalf("the sentinel that answered should move to the front, got %v", c.Sentinels())
	}
	if err := c.Set(context.Background(), "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if v, err := c.Get(context.Background(), "k").Result(); err != nil || v != "v" {
		t.Fatalf("GET = %q, %v", v, err)
	}
}

// A sentinel that names a replica as the master is not believed: ROLE on the
// address says slave.
func TestDiscoveryRejectsAReplicaByRole(t *testing.T) {
	replica := dataNode(t, "slave")
	stale := sentinelNode(t, &sentinelState{master: replica})
	c := newTestClient(t, Options{SentinelAddrs: []string{stale.addr()}, MaxRetries: -1,
		DialTimeout: 100 * time.Millisecond, MasterWait: 100 * time.Millisecond})
	_, err := c.MasterAddr(context.Background())
	var re *RoleError
	if !errors.As(err, &re) || re.Got != "slave" || re.Addr != replica.addr() {
		t.Fatalf("err = %v, want a RoleError naming %s as slave", err, replica.addr())
	}
	var de *DiscoveryError
	if !errors.As(err, &de) {
		t.Fatalf("err = %T %v, want a DiscoveryError", err, err)
	}
	if err := c.Set(context.Background(), "k", "v", 0).Err(); err == nil {
		t.Fatal("SET succeeded with only a replica known")
	}
	if n := replica.count("SET"); n != 0 {
		t.Fatalf("the replica received %d SETs", n)
	}

	// With a second sentinel that knows the real master, the stale answer
	// is skipped.
	master := dataNode(t, "master")
	good := sentinelNode(t, &sentinelState{master: master})
	c2 := newTestClient(t, Options{SentinelAddrs: []string{stale.addr(), good.addr()}})
	addr, err := c2.MasterAddr(context.Background())
	if err != nil || addr != master.addr() {
		t.Fatalf("MasterAddr = %s, %v; want %s", addr, err, master.addr())
	}
}

func TestDiscoveryUnknownMaster(t *testing.T) {
	s := sentinelNode(t, &sentinelState{})
	c := newTestClient(t, Options{SentinelAddrs: []string{s.addr()}})
	_, err := c.MasterAddr(context.Background())
	var de *DiscoveryError
	if !errors.As(err, &de) || len(de.Errs) != 1 {
		t.Fatalf("err = %v, want a DiscoveryError with one cause", err)
	}
}

// SENTINEL SENTINELS adds sentinels the application was not configured with.
func TestSentinelListIsRefreshed(t *testing.T) {
	master := dataNode(t, "master")
	other := sentinelNode(t, &sentinelState{master: master})
	first := sentinelNode(t, &sentinelState{master: master, others: []string{other.addr()}})
	c := newTestClient(t, Options{SentinelAddrs: []string{first.addr()}})
	if _, err := c.MasterAddr(context.Background()); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the second sentinel to be learned", func() bool {
		return slices.Contains(c.Sentinels(), other.addr())
	})
	// It is subscribed to as well.
	eventually(t, "a +switch-master subscription on the learned sentinel", func() bool {
		return other.count("SUBSCRIBE") > 0
	})
}

// +switch-master switches at once: pooled connections to the old master
// are closed and the next write goes to the new one, without any error
// from the old master.
func TestSwitchMasterMessage(t *testing.T) {
	m1 := dataNode(t, "master")
	m2 := dataNode(t, "master")
	st := &sentinelState{master: m1}
	s := sentinelNode(t, st)
	changes := make(chan [3]string, 4)
	c := newTestClient(t, Options{
		SentinelAddrs:  []string{s.addr()},
		OnMasterChange: func(o, n, src string) { changes <- [3]string{o, n, src} },
	})
	ctx := context.Background()
	if err := c.Set(ctx, "a", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the +switch-master subscription", func() bool { return s.count("SUBSCRIBE") > 0 })
	h1, p1 := m1.hostPort()
	h2, p2 := m2.hostPort()
	st.mu.Lock()
	st.master = m2
	st.mu.Unlock()
	s.publish("+switch-master", "other 1.2.3.4 1 5.6.7.8 2") // another master: ignored
	s.publish("+switch-master", "mym "+h1+" "+p1+" "+h2+" "+p2)
	got := <-changes
	if got != [3]string{m1.addr(), m2.addr(), "+switch-master"} {
		t.Fatalf("OnMasterChange got %v", got)
	}
	before := m1.count("SET")
	if err := c.Set(ctx, "b", "2", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if m1.count("SET") != before {
		t.Fatal("a write went to the old master after +switch-master")
	}
	if m2.count("SET") != 1 {
		t.Fatalf("new master got %d SETs, want 1", m2.count("SET"))
	}
}

// A -READONLY reply makes the client rediscover; a write is not retried
// unless RetryWrites, a read is.
func TestReadOnlyTriggersRediscovery(t *testing.T) {
	demoted := dataNode(t, "master") // says master, then refuses writes
	st := &sentinelState{master: demoted}
	s := sentinelNode(t, st)
	c := newTestClient(t, Options{SentinelAddrs: []string{s.addr()}, MinRetryBackoff: time.Millisecond})
	ctx := context.Background()
	if err := c.Set(ctx, "k0", "v", 0).Err(); err != nil { // a pooled connection
		t.Fatal(err)
	}
	asks := s.count("SENTINEL get-master-addr-by-name mym")

	// The node is demoted behind the client's back and the sentinel now
	// names a new master.
	demoted.setHandle(replicaHandler)
	m2 := dataNode(t, "master")
	st.mu.Lock()
	st.master = m2
	st.mu.Unlock()

	err := c.Set(ctx, "k", "v", 0).Err()
	if err == nil || !redis.HasErrorPrefix(err, "READONLY") {
		t.Fatalf("SET without RetryWrites: err = %v, want the READONLY error", err)
	}
	eventually(t, "rediscovery after -READONLY", func() bool {
		_, _ = c.Get(ctx, "k").Result() // reads are retried
		return s.count("SENTINEL get-master-addr-by-name mym") > asks
	})
	if a, _ := c.MasterAddr(ctx); a != m2.addr() {
		t.Fatalf("master = %s, want %s", a, m2.addr())
	}

	// With RetryWrites, a write that meets -READONLY lands on the new master.
	cw := newTestClient(t, Options{SentinelAddrs: []string{s.addr()}, RetryWrites: true, MinRetryBackoff: time.Millisecond})
	if err := cw.Set(ctx, "k0", "v", 0).Err(); err != nil { // a pooled connection to m2
		t.Fatal(err)
	}
	m3 := dataNode(t, "master")
	m2.setHandle(replicaHandler)
	st.mu.Lock()
	st.master = m3
	st.mu.Unlock()
	if err := cw.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("SET with RetryWrites: %v", err)
	}
	if m3.count("SET") != 1 {
		t.Fatalf("new master got %d SETs, want 1", m3.count("SET"))
	}
}

// replicaHandler wraps a data node's handler so ROLE says slave and writes
// get -READONLY.
func replicaHandler(h func([]string) string) func([]string) string {
	return func(args []string) string {
		switch args[0] {
		case "ROLE", "role":
			return arr(bulk("slave"), bulk("127.0.0.1"), ":1\r\n", bulk("connected"), ":0\r\n")
		case "SET", "set":
			return "-READONLY You can't write against a read only replica.\r\n"
		}
		return h(args)
	}
}

func TestReadFromReplica(t *testing.T) {
	master := dataNode(t, "master")
	rep := dataNode(t, "slave")
	down := dataNode(t, "slave")
	lagging := dataNode(t, "slave")
	hp := func(f *fakeNode, flags, link string) map[string]string {
		h, p := f.hostPort()
		return map[string]string{"ip": h, "port": p, "flags": flags, "master-link-status": link}
	}
	st := &sentinelState{master: master, replicas: []map[string]string{
		hp(rep, "slave", "ok"), hp(down, "s_down,slave", "ok"), hp(lagging, "slave", "err"),
		hp(master, "slave", "ok"), // a stale entry: ROLE says master, rejected
	}}
	s := sentinelNode(t, st)
	c := newTestClient(t, Options{SentinelAddrs: []string{s.addr()}, ReadFrom: Replica})
	ctx := context.Background()
	nodes, err := c.ReadNodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 1 || nodes[rep.addr()] == 0 {
		t.Fatalf("read nodes = %v, want only %s", nodes, rep.addr())
	}
	if err := c.Get(ctx, "k").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET: %v", err)
	}
	if rep.count("GET") != 1 || master.count("GET") != 0 {
		t.Fatalf("GET went to replica %d times, master %d times", rep.count("GET"), master.count("GET"))
	}
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if master.count("SET") != 1 {
		t.Fatal("SET did not go to the master")
	}

	cn := newTestClient(t, Options{SentinelAddrs: []string{s.addr()}, ReadFrom: Nearest})
	nodes, err = cn.ReadNodes(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 || nodes[rep.addr()] == 0 || nodes[master.addr()] == 0 {
		t.Fatalf("Nearest read nodes = %v, want the replica and the master", nodes)
	}
}

func TestUsableReplicas(t *testing.T) {
	got := usableReplicas([]map[string]string{
		{"ip": "10.0.0.1", "port": "1", "flags": "slave"},
		{"ip": "10.0.0.2", "port": "2", "flags": "slave,disconnected"},
		{"ip": "10.0.0.3", "port": "3", "flags": "o_down,slave"},
		{"ip": "", "port": "4", "flags": "slave"},
		{"ip": "10.0.0.5", "port": "5", "flags": "slave", "master-link-status": "err"},
		{"ip": "::1", "port": "6", "flags": "slave", "master-link-status": "ok"},
	})
	want := []string{"10.0.0.1:1", "[::1]:6"}
	if !slices.Equal(got, want) {
		t.Fatalf("usableReplicas = %v, want %v", got, want)
	}
}

func TestReadOnlyCommand(t *testing.T) {
	for _, tc := range []struct {
		args []interface{}
		want bool
	}{
		{[]interface{}{"get", "k"}, true},
		{[]interface{}{"MGET", "a", "b"}, true},
		{[]interface{}{"set", "k", "v"}, false},
		{[]interface{}{"incr", "k"}, false},
		{[]interface{}{"eval", "return 1", 0}, false},
		{[]interface{}{"xread", "streams", "s", "0"}, true},
		{[]interface{}{"xread", "BLOCK", "0", "streams", "s", "0"}, false},
		{nil, false},
	} {
		if got := ReadOnlyCommand(tc.args); got != tc.want {
			t.Errorf("ReadOnlyCommand(%v) = %v, want %v", tc.args, got, tc.want)
		}
	}
}

func TestNeedsRediscovery(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{redis.Nil, false},
		{context.Canceled, false},
		{&net.OpError{Op: "dial", Err: errors.New("refused")}, true},
		{&RoleError{Want: "master", Got: "slave"}, true},
		{errors.New("plain"), false},
	} {
		if got := NeedsRediscovery(tc.err); got != tc.want {
			t.Errorf("NeedsRediscovery(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

// After a switch, a connection to the old master refuses to write: not a
// byte goes out, and the error is one that triggers rediscovery.
func TestWriteGuardAfterSwitch(t *testing.T) {
	c := newTestClient(t, Options{SentinelAddrs: []string{"127.0.0.1:1"}})
	c.setMaster("10.0.0.1:6379", "test")
	a, b := net.Pipe()
	defer b.Close()
	tc := c.track(a, "10.0.0.1:6379", true)
	go func() { buf := make([]byte, 64); _, _ = b.Read(buf) }()
	if _, err := tc.Write([]byte("x")); err != nil {
		t.Fatalf("write to the current master: %v", err)
	}
	c.setMaster("10.0.0.2:6379", "test")
	if !tc.closed.Load() {
		t.Fatal("the old master's connection should be closed on the switch")
	}
	stale := c.track(&nopConn{}, "10.0.0.1:6379", true) // dialed just before the switch
	n, err := stale.Write([]byte("SET k v"))
	if n != 0 || !errors.Is(err, ErrStaleMaster) || !NeedsRediscovery(err) {
		t.Fatalf("Write = %d, %v; want 0, ErrStaleMaster", n, err)
	}
}

// nopConn is a net.Conn that accepts writes.
type nopConn struct{ net.Conn }

func (*nopConn) Write(b []byte) (int, error) { return len(b), nil }
func (*nopConn) Close() error                { return nil }

// A discovery that started before a +switch-master must not undo it: the
// sentinels it asked still named the old master, and the old master (a
// paused one resuming) still answers ROLE "master". Found by vigil drill
// (pause-master): every client went back to the demoted master.
func TestDiscoveryDoesNotUndoASwitch(t *testing.T) {
	m1 := dataNode(t, "master")
	m2 := dataNode(t, "master")
	st := &sentinelState{master: m1}
	s := sentinelNode(t, st)
	changes := make(chan [3]string, 4)
	c := newTestClient(t, Options{
		SentinelAddrs:  []string{s.addr()},
		OnMasterChange: func(o, n, src string) { changes <- [3]string{o, n, src} },
	})
	ctx := context.Background()
	if err := c.Set(ctx, "a", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the +switch-master subscription", func() bool { return s.count("SUBSCRIBE") > 0 })
	// The old master's ROLE answers only once the switch has been heard.
	entered, release := make(chan struct{}, 1), make(chan struct{})
	m1.setHandle(func(next func([]string) string) func([]string) string {
		return func(args []string) string {
			if strings.EqualFold(args[0], "ROLE") {
				select {
				case entered <- struct{}{}:
				default:
				}
				<-release
			}
			return next(args)
		}
	})
	done := make(chan string, 1)
	go func() {
		addr, _ := c.rediscover(ctx, c.discoverGen.Load())
		done <- addr
	}()
	recv(t, "the ROLE probe of the old master", entered)
	h1, p1 := m1.hostPort()
	h2, p2 := m2.hostPort()
	s.publish("+switch-master", "mym "+h1+" "+p1+" "+h2+" "+p2)
	if got := recv(t, "OnMasterChange", changes); got != [3]string{m1.addr(), m2.addr(), "+switch-master"} {
		t.Fatalf("OnMasterChange got %v", got)
	}
	close(release)
	if addr := recv(t, "rediscover", done); addr != m2.addr() {
		t.Fatalf("rediscover returned %s, want the switched-to %s", addr, m2.addr())
	}
	if a := c.masterAddr(); a != m2.addr() {
		t.Fatalf("master is %s after a stale discovery, want %s", a, m2.addr())
	}
	select {
	case ch := <-changes:
		t.Fatalf("a stale discovery switched the master back: %v", ch)
	default:
	}
}

// recv waits for a value on ch, failing the test after a generous bound
// (a bound on waiting, not a timing assertion).
func recv[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}
