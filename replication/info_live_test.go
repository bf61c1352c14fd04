package replication

import (
	"bufio"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestInfoAgainstLiveRedis (interop) renders the replication section for
// the states a fresh redis-server is in (a master; then a replica of an
// address nobody listens on) and compares with the live server's INFO
// replication byte for byte. Only the random replid is taken from the live
// reply. It uses a unix socket, no TCP port.
func TestInfoAgainstLiveRedis(t *testing.T) {
	c := testutil.StartRedis(t, testutil.RedisOptions{}).Dial(t)
	br := bufio.NewReader(c)
	do := func(args ...string) string {
		c.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.Write(resp.AppendCommandStrings(nil, args...)); err != nil {
			t.Fatal(err)
		}
		v, err := resp.ReadValue(br, resp.DefaultReplyLimits)
		if err != nil || v.IsError() {
			t.Fatalf("%v: %v %v", args, v, err)
		}
		return v.Str
	}
	field := func(info, name string) string {
		for _, l := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(l, name+":"); ok {
				return v
			}
		}
		t.Fatalf("no %s in %q", name, info)
		return ""
	}

	live := do("INFO", "replication")
	in := Info{IDs: IDs{ID: field(live, "master_replid"), ID2: NoID, SecondOffset: -1}, BacklogSize: DefaultBacklogSize}
	if got := InfoSection(&in); got != live {
		t.Fatalf("master:\n got %q\nwant %q", got, live)
	}

	// A master turned replica caches a master made of its own history
	// (replicationCacheMasterUsingMyself), so its slave_repl_offset is its
	// master_repl_offset (0), not the 1 of a node started as a replica.
	do("REPLICAOF", "127.0.0.1", "1")
	live = do("INFO", "replication")
	in = Info{IsReplica: true, MasterHost: "127.0.0.1", MasterPort: 1, LinkState: StateConnect,
		MasterLastIOSecondsAgo: -1, SlaveReadReplOffset: 0, SlaveReplOffset: 0, LinkDownSinceSeconds: -1,
		ReplicaPriority: 100, ReplicaReadOnly: true, ReplicaAnnounced: true,
		IDs: IDs{ID: field(live, "master_replid"), ID2: NoID, SecondOffset: -1}, BacklogSize: DefaultBacklogSize}
	if got := InfoSection(&in); got != live {
		t.Fatalf("replica:\n got %q\nwant %q", got, live)
	}

	// Promotion of a replica that never synced: the IDs shift at offset 0.
	do("REPLICAOF", "NO", "ONE")
	live = do("INFO", "replication")
	in = Info{IDs: IDs{ID: field(live, "master_replid"), ID2: in.IDs.ID, SecondOffset: 1}, BacklogSize: DefaultBacklogSize}
	if got := InfoSection(&in); got != live {
		t.Fatalf("promoted:\n got %q\nwant %q", got, live)
	}
}
