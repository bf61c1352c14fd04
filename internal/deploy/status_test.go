package deploy

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

func healthy() *Status {
	return &Status{
		MasterName: "mymaster", MasterAddr: "127.0.0.1:6379",
		Servers: []ServerStatus{
			{Addr: "127.0.0.1:6379", Role: "master", ConnectedReplicas: 2, OnlineReplicas: 2},
			{Addr: "127.0.0.1:6380", Role: "replica", MasterAddr: "127.0.0.1:6379", LinkStatus: "up"},
			{Addr: "127.0.0.1:6381", Role: "replica", MasterAddr: "127.0.0.1:6379", LinkStatus: "up"},
		},
		Sentinels: []SentinelStatus{
			{Addr: "127.0.0.1:26379", MasterAddr: "127.0.0.1:6379", Flags: "master", Quorum: 2, NumReplicas: 2, NumOtherSentinels: 2},
			{Addr: "127.0.0.1:26380", MasterAddr: "127.0.0.1:6379", Flags: "master", Quorum: 2, NumReplicas: 2, NumOtherSentinels: 2},
			{Addr: "127.0.0.1:26381", MasterAddr: "127.0.0.1:6379", Flags: "master", Quorum: 2, NumReplicas: 2, NumOtherSentinels: 2},
		},
	}
}

func TestHealth(t *testing.T) {
	for _, tc := range []struct {
		name   string
		change func(*Status)
		want   []string
	}{
		{"healthy", func(*Status) {}, nil},
		{"replica not replicating (vigil-server today)", func(s *Status) {
			s.Servers[0].ConnectedReplicas, s.Servers[0].OnlineReplicas = 0, 0
			s.Servers[1] = ServerStatus{Addr: "127.0.0.1:6380", Role: "master"}
			s.Servers[2] = ServerStatus{Addr: "127.0.0.1:6381", Role: "replica", MasterAddr: "127.0.0.1:6379"}
		}, []string{
			"master 127.0.0.1:6379 has 0 of 2 replicas connected and online",
			"server 127.0.0.1:6380 reports role master, not a replica of 127.0.0.1:6379: it did not start replicating",
			"replica 127.0.0.1:6381 reports no master_link_status in INFO replication: it does not replicate",
		}},
		{"link down", func(s *Status) { s.Servers[2].LinkStatus = "down"; s.Servers[0].OnlineReplicas = 1 }, []string{
			"master 127.0.0.1:6379 has 1 of 2 replicas connected and online",
			"replica 127.0.0.1:6381: link to master 127.0.0.1:6379 is down",
		}},
		{"server down", func(s *Status) { s.Servers[1] = ServerStatus{Addr: "127.0.0.1:6380", Error: "connection refused"} }, []string{
			"server 127.0.0.1:6380 does not answer INFO: connection refused",
		}},
		{"sentinel views", func(s *Status) {
			s.Sentinels[0].NumOtherSentinels = 1
			s.Sentinels[1].NumReplicas = 0
			s.Sentinels[2].Flags = "s_down,master"
		}, []string{
			"sentinel 127.0.0.1:26379 knows 1 of 2 other sentinels",
			"sentinel 127.0.0.1:26380 knows 0 of 2 replicas",
			"sentinel 127.0.0.1:26381 flags the master s_down,master",
		}},
		{"sentinel missing and disagreeing", func(s *Status) {
			s.Sentinels = s.Sentinels[:2]
			s.Sentinels[1].MasterAddr = "127.0.0.1:6380"
		}, []string{
			"2 of 3 sentinels found",
			"sentinel 127.0.0.1:26380 sees the master at 127.0.0.1:6380, most at 127.0.0.1:6379",
		}},
		{"no master", func(s *Status) { s.MasterAddr = ""; s.Servers = nil; s.Sentinels = nil }, []string{
			`no sentinel knows master "mymaster"`, "0 of 3 sentinels found",
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := healthy()
			tc.change(st)
			if got := st.Health(2, 3); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("Health:\n got %q\nwant %q", got, tc.want)
			}
		})
	}
}

func TestParseInfo(t *testing.T) {
	got := parseInfo("# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\nslave0:ip=1,port=2,state=online\r\n\r\n")
	want := map[string]string{"role": "slave", "master_host": "127.0.0.1", "slave0": "ip=1,port=2,state=online"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseInfo = %v", got)
	}
}

func TestToMapRESP2AndRESP3(t *testing.T) {
	want := map[string]string{"ip": "127.0.0.1", "port": "6379"}
	if got := toMap([]any{"ip", "127.0.0.1", "port", "6379"}); !reflect.DeepEqual(got, want) {
		t.Errorf("flat array: %v", got)
	}
	if got := toMap(map[any]any{"ip": "127.0.0.1", "port": "6379"}); !reflect.DeepEqual(got, want) {
		t.Errorf("map: %v", got)
	}
	if got := toMap("garbage"); len(got) != 0 {
		t.Errorf("garbage: %v", got)
	}
}

func TestDeduper(t *testing.T) {
	t0 := time.Unix(1000, 0)
	d := NewDeduper(3 * time.Second)
	ev := func(at time.Duration, typ, payload string) Event {
		return Event{Time: t0.Add(at), Type: typ, Payload: payload}
	}
	for _, tc := range []struct {
		e    Event
		want bool
	}{
		{ev(0, "+sdown", "master mymaster 127.0.0.1 6379"), true},
		{ev(100*time.Millisecond, "+sdown", "master mymaster 127.0.0.1 6379"), false}, // another sentinel's
		{ev(200*time.Millisecond, "+odown", "master mymaster 127.0.0.1 6379 #quorum 2/2"), true},
		{ev(300*time.Millisecond, "+sdown", "slave 127.0.0.1:6380 127.0.0.1 6380 @ mymaster 127.0.0.1 6379"), true},
		{ev(5*time.Second, "+sdown", "master mymaster 127.0.0.1 6379"), true}, // a later, new +sdown
	} {
		if got := d.Fresh(tc.e); got != tc.want {
			t.Errorf("Fresh(%s %s at %v) = %v", tc.e.Type, tc.e.Payload, tc.e.Time.Sub(t0), got)
		}
	}
}

// shNode is a Node running a shell loop instead of a server.
func shNode(t *testing.T, script string) *Node {
	dir := t.TempDir()
	return &Node{Name: "sh", Dir: dir, ConfPath: filepath.Join(dir, "conf"), OutPath: filepath.Join(dir, "output.log"),
		argv: []string{"/bin/sh", "-c", script, "sh"}, stopTimeout: 5 * time.Second}
}

func procState(pid int) string {
	b, err := os.ReadFile("/proc/" + itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	return strings.Fields(s[i+1:])[0]
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	testutil.Poll(t, 10*time.Second, what, cond)
}

func TestNodeLifecycle(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("needs /proc")
	}
	n := shNode(t, "trap 'exit 0' TERM; while :; do sleep 0.05; done")
	t.Cleanup(func() { _ = n.Kill() })
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	pid := n.Pid()
	if pid == 0 || !n.Running() {
		t.Fatal("not running after Start")
	}
	if err := n.Start(); err == nil || !strings.Contains(err.Error(), "already running") {
		t.Errorf("second Start: %v", err)
	}
	pgid, err := syscall.Getpgid(pid)
	if err != nil || pgid != pid {
		t.Errorf("process group %d (%v), want its own (%d)", pgid, err, pid)
	}
	if err := n.Pause(); err != nil {
		t.Fatal(err)
	}
	// T, or D when the SIGSTOP caught the shell's vfork child before its
	// exec: the shell then waits uninterruptibly for a child that is
	// stopped, frozen just the same until SIGCONT.
	waitFor(t, "state T", func() bool { st := procState(pid); return st == "T" || st == "D" })
	if !n.Paused() {
		t.Error("Paused() false after Pause")
	}
	if err := n.Resume(); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "running again", func() bool { s := procState(pid); return s == "S" || s == "R" })
	if err := n.Restart(); err != nil {
		t.Fatal(err)
	}
	if n.Pid() == 0 || n.Pid() == pid {
		t.Errorf("pid after Restart %d (was %d)", n.Pid(), pid)
	}
	if err := n.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	if n.Running() || n.Pid() != 0 {
		t.Error("still running after Stop")
	}
	if err := n.Stop(); err != nil {
		t.Errorf("Stop when stopped: %v", err)
	}
	if err := n.Kill(); err == nil {
		t.Error("Kill when stopped: no error")
	}
}

func TestNodeKillAndStopEscalation(t *testing.T) {
	n := shNode(t, "trap '' TERM; echo ready; while :; do sleep 0.05; done")
	n.stopTimeout = 200 * time.Millisecond
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = n.Kill() })
	waitFor(t, "the SIGTERM trap", func() bool { b, _ := os.ReadFile(n.OutPath); return strings.Contains(string(b), "ready") })
	if err := n.Stop(); err == nil || !strings.Contains(err.Error(), "did not exit") {
		t.Errorf("Stop of a process ignoring SIGTERM: %v", err)
	}
	if n.Running() {
		t.Fatal("running after Stop")
	}
	if err := n.Start(); err != nil {
		t.Fatal(err)
	}
	if err := n.Kill(); err != nil {
		t.Fatal(err)
	}
	if ws, ok := n.ExitErr().(interface{ Sys() any }); ok {
		if st, ok := ws.Sys().(syscall.WaitStatus); !ok || st.Signal() != syscall.SIGKILL {
			t.Errorf("exit status %v, want killed by SIGKILL", n.ExitErr())
		}
	} else {
		t.Errorf("exit error %v", n.ExitErr())
	}
}
