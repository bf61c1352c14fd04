package client

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// groupSentinel is a fake sentinel that knows several master names.
func groupSentinel(t *testing.T, mu *sync.Mutex, masters map[string]*fakeNode) *fakeNode {
	return newFake(t, func(args []string) string {
		mu.Lock()
		defer mu.Unlock()
		if strings.ToUpper(args[0]) != "SENTINEL" || len(args) < 2 {
			return "-ERR unknown command\r\n"
		}
		switch strings.ToLower(args[1]) {
		case "get-master-addr-by-name":
			m := masters[args[2]]
			if m == nil {
				return "*-1\r\n"
			}
			h, p := m.hostPort()
			return arr(bulk(h), bulk(p))
		case "sentinels", "replicas", "slaves":
			return "*0\r\n"
		}
		return "-ERR unknown subcommand\r\n"
	})
}

func TestNewRingOptions(t *testing.T) {
	if _, err := NewRing(RingOptions{Options: Options{SentinelAddrs: []string{"127.0.0.1:1"}}}); err == nil {
		t.Error("no master names accepted")
	}
	if _, err := NewRing(RingOptions{MasterNames: []string{"a"}}); err == nil {
		t.Error("no sentinels accepted")
	}
	if _, err := NewRing(RingOptions{MasterNames: []string{"a", "a"}, Options: Options{SentinelAddrs: []string{"127.0.0.1:1"}}}); err == nil {
		t.Error("a master name twice accepted")
	}
}

func TestRingShardsFollowTheirGroup(t *testing.T) {
	var mu sync.Mutex
	a, b := dataNode(t, "master"), dataNode(t, "master")
	masters := map[string]*fakeNode{"ga": a, "gb": b}
	s := groupSentinel(t, &mu, masters)
	r, err := NewRing(RingOptions{MasterNames: []string{"ga", "gb"},
		Options: Options{SentinelAddrs: []string{s.addr()}, MasterWait: 5 * time.Second}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx := context.Background()
	const n = 200
	for i := 0; i < n; i++ {
		if err := r.Set(ctx, "k"+strconv.Itoa(i), "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// Each key is on exactly one group's master, and both groups have keys.
	onA := map[string]bool{}
	for _, c := range a.commands() {
		if strings.ToUpper(c[0]) == "SET" {
			onA[c[1]] = true
		}
	}
	onB := 0
	for _, c := range b.commands() {
		if strings.ToUpper(c[0]) == "SET" {
			if onA[c[1]] {
				t.Fatalf("key %s written to both groups", c[1])
			}
			onB++
		}
	}
	if len(onA) == 0 || onB == 0 || len(onA)+onB != n {
		t.Fatalf("keys per group: %d and %d of %d", len(onA), onB, n)
	}
	if ma, err := r.Shard("ga").MasterAddr(ctx); err != nil || ma != a.addr() {
		t.Fatalf("group ga master %q %v, want %s", ma, err, a.addr())
	}

	// Fail group ga over to c: the keys of ga go to c, gb is untouched.
	c := dataNode(t, "master")
	mu.Lock()
	masters["ga"] = c
	mu.Unlock()
	a.close()
	bBefore := onB
	for i := 0; i < n; i++ {
		if err := r.Set(ctx, "k"+strconv.Itoa(i), "w", 0).Err(); err != nil {
			t.Fatalf("write after the failover of ga: %v", err)
		}
	}
	onC := map[string]bool{}
	for _, cmd := range c.commands() {
		if strings.ToUpper(cmd[0]) == "SET" {
			onC[cmd[1]] = true
		}
	}
	if len(onC) != len(onA) {
		t.Fatalf("after the failover the new master of ga got %d keys, ga had %d", len(onC), len(onA))
	}
	for k := range onA {
		if !onC[k] {
			t.Fatalf("key %s of ga did not go to ga's new master", k)
		}
	}
	onB = 0
	for _, cmd := range b.commands() {
		if strings.ToUpper(cmd[0]) == "SET" {
			onB++
		}
	}
	if onB != 2*bBefore {
		t.Fatalf("group gb got %d writes, want %d", onB, 2*bBefore)
	}
}
