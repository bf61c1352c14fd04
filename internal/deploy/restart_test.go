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
		DownAfter: time.Second, FailoverTimeout: 5 * time.Second, StopTimeout: 10 * time.Second})
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
