package deploy

import (
	"context"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

// TestRedisDeployment runs a small deployment of Debian's redis-server and
// redis-sentinel through the whole Node and Deployment API.
func TestRedisDeployment(t *testing.T) {
	for _, b := range []string{"redis-server", "redis-sentinel"} {
		if _, err := exec.LookPath(b); err != nil {
			t.Skipf("%s not installed: apt-get install -y redis-server redis-sentinel redis-tools", b)
		}
	}
	d, err := newFree(t, Spec{Kind: KindRedis, Dir: t.TempDir(),
		Replicas: 1, Sentinels: 1, StopTimeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	var pids []int
	t.Cleanup(func() {
		_ = d.Stop()
		for _, p := range pids {
			_ = syscall.Kill(p, syscall.SIGKILL)
		}
	})
	if err := d.Start(); err != nil {
		t.Fatal(err)
	}
	for _, n := range d.Nodes() {
		pids = append(pids, n.Pid())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := d.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	m, err := d.CurrentMaster(ctx)
	if err != nil || m != d.Servers[0] {
		t.Fatalf("CurrentMaster = %v, %v; want %s", m, err, d.Servers[0].Name)
	}
	st := Collect(ctx, d.CollectOptions())
	if !st.Healthy || st.Servers[0].Pid != d.Servers[0].Pid() || st.Sentinels[0].Pid != d.Sentinels[0].Pid() {
		t.Errorf("status %+v; pids %d %d", st, d.Servers[0].Pid(), d.Sentinels[0].Pid())
	}

	// A paused replica stops answering; resumed, it answers again.
	r := d.Servers[1]
	if err := r.Pause(); err != nil {
		t.Fatal(err)
	}
	short, cancelShort := context.WithTimeout(ctx, 3*time.Second)
	st = NewCollector(CollectOptions{Servers: []string{r.Addr()}, MasterAddr: d.Servers[0].Addr(), Timeout: 200 * time.Millisecond}).Collect(short)
	cancelShort()
	if st.Servers[0].Error == "" {
		t.Errorf("a paused replica answered INFO: %+v", st.Servers[0])
	}
	if err := r.Resume(); err != nil {
		t.Fatal(err)
	}
	if err := d.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}

	old := r.Pid()
	if err := r.Restart(); err != nil {
		t.Fatal(err)
	}
	pids = append(pids, r.Pid())
	if r.Pid() == old || r.Pid() == 0 {
		t.Errorf("pid after Restart %d, was %d", r.Pid(), old)
	}
	if err := d.WaitHealthy(ctx); err != nil {
		t.Fatal(err)
	}
	if err := d.Stop(); err != nil {
		t.Errorf("Stop: %v", err)
	}
	for _, n := range d.Nodes() {
		if n.Running() {
			t.Errorf("%s still running after Stop", n.Name)
		}
	}
	for _, p := range pids {
		if syscall.Kill(p, 0) == nil {
			t.Errorf("pid %d still exists after Stop", p)
		}
	}
}
