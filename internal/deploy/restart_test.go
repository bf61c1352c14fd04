package deploy

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestRestartDead: a killed master comes back, through RestartDead, as a
// replica of the master the sentinel promoted; a killed sentinel comes back.
func TestRestartDead(t *testing.T) {
	for _, b := range []string{"redis-server", "redis-sentinel"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s not installed", b)
		}
	}
	d, err := newFree(t, Spec{Kind: KindRedis, Dir: t.TempDir(), Replicas: 1, Sentinels: 1,
		DownAfter: 2 * time.Second, FailoverTimeout: 5 * time.Second, StopTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Stop() })
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := d.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	old := d.Servers[0]
	if err := old.Kill(); err != nil {
		t.Fatal(err)
	}
	<-old.Done()
	testutil.Poll(t, 60*time.Second, "failover to the replica", func() bool {
		m, err := d.CurrentMaster(ctx)
		return err == nil && m == d.Servers[1]
	})
	if err := d.Sentinels[0].Kill(); err != nil {
		t.Fatal(err)
	}
	<-d.Sentinels[0].Done()
	did, err := d.RestartDead(ctx)
	if err != nil || len(did) != 2 {
		t.Fatalf("RestartDead: %v, %v", did, err)
	}
	var last *Status
	ok := false
	deadline := time.Now().Add(60 * time.Second)
	for !ok && time.Now().Before(deadline) {
		last = Collect(ctx, d.CollectOptions())
		for _, s := range last.Servers {
			if (s.Addr == old.PeerAddr() || s.Addr == old.Addr()) && s.Role == "replica" && s.LinkStatus == "up" &&
				last.Healthy && d.Sentinels[0].Running() {
				ok = true
			}
		}
		time.Sleep(100 * time.Millisecond) // poll interval
	}
	if !ok {
		t.Fatalf("old master not back as a replica: %+v (problems %v)", last, d.Health(last))
	}
}

// TestRestartDeadGroups: with two groups under one sentinel, a killed
// master of the second group fails over within its group only and comes
// back, through RestartDead, as a replica of its own group's new master.
func TestRestartDeadGroups(t *testing.T) {
	for _, b := range []string{"redis-server", "redis-sentinel"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s not installed", b)
		}
	}
	d, err := newFree(t, Spec{Kind: KindRedis, Dir: t.TempDir(), Replicas: 1, Sentinels: 1, Groups: 2,
		DownAfter: 2 * time.Second, FailoverTimeout: 5 * time.Second, StopTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Stop() })
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if err := d.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	g1, g2 := d.Groups()[0], d.Groups()[1]
	if g2.Spec.MasterName != "mymaster-2" || len(g2.Servers) != 2 {
		t.Fatalf("second group %q with %d servers", g2.Spec.MasterName, len(g2.Servers))
	}
	old := g2.Servers[0]
	if err := old.Kill(); err != nil {
		t.Fatal(err)
	}
	testutil.Poll(t, 60*time.Second, "failover of mymaster-2 to its replica", func() bool {
		m, err := g2.CurrentMaster(ctx)
		return err == nil && m == g2.Servers[1]
	})
	if m, err := g1.CurrentMaster(ctx); err != nil || m != g1.Servers[0] {
		t.Fatalf("mymaster's master is %v (%v), want %s", m, err, g1.Servers[0].Name)
	}
	did, err := d.RestartDead(ctx)
	if err != nil || len(did) != 1 || did[0] != old.Name+" restarted as a replica of "+g2.Servers[1].PeerAddr() {
		t.Fatalf("RestartDead: %q, %v", did, err)
	}
	testutil.Poll(t, 60*time.Second, "the old master back as a replica of its group's new master", func() bool {
		st := Collect(ctx, g2.CollectOptions())
		for _, s := range st.Servers {
			if s.Addr == old.Addr() && s.Role == "replica" && s.LinkStatus == "up" && s.MasterAddr == g2.Servers[1].Addr() {
				return st.Healthy
			}
		}
		return false
	})
}
