package servermain

import (
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// A full sync's RDB is written by a child process, as Redis forks one
// (startBgsaveForReplication): a disk target through BGSAVE's
// `redis-rdb-bgsave` child writing dbfilename, a diskless one through a
// `redis-rdb-to-slaves` child whose RDB the master reads from a pipe and
// forwards to the replicas. The tests run the scenario against
// vigil-server and, when installed, redis-server 7.0.

// replicaOf starts a replica of m, the same program as m.
func replicaOf(t *testing.T, m *process) *process {
	t.Helper()
	p := newProcess(t)
	p.exe = m.exe
	p.launch(t, "save \"\"\n")
	p.waitUp(t)
	p.mustDo(t, "+OK\r\n", "REPLICAOF", "127.0.0.1", strconv.Itoa(m.port))
	return p
}

// infoSection is one field of an INFO section.
func infoSection(t *testing.T, p *process, section, name string) string {
	t.Helper()
	info, err := p.do("INFO", section)
	if err != nil {
		t.Fatalf("INFO: %v", err)
	}
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, name+":"); ok {
			return v
		}
	}
	return ""
}

// TestFullSyncChildKilled: during a full sync the master has one child,
// titled redis-rdb-bgsave (disk) or redis-rdb-to-slaves (diskless); INFO
// says a save is in progress (rdb_bgsave_in_progress:1, the keys total) and
// the replica waits (state=wait_bgsave). A second BGSAVE is refused as
// "already in progress". Killed with SIGKILL, the sync fails ("Background
// saving terminated by signal 9" and rdb_last_bgsave_status:err for a disk
// save; "Background transfer terminated by signal 9", status unchanged,
// for a diskless one), the replica is dropped ("SYNC failed. BGSAVE child
// returned an error"), comes back and converges; a disk sync leaves
// dbfilename in the master's dir.
func TestFullSyncChildKilled(t *testing.T) {
	for _, diskless := range []string{"no", "yes"} {
		t.Run("diskless-"+diskless, func(t *testing.T) {
			// 20 keys at 0.4 s: the save outlasts the checks made while it
			// runs on a loaded machine (it is killed, not waited for).
			conf := "save \"\"\nrepl-diskless-sync " + diskless + "\nrepl-diskless-sync-delay 0\nrdb-key-save-delay 400000\n"
			for name, m := range saveServers(t, conf) {
				t.Run(name, func(t *testing.T) {
					for i := range 20 {
						m.mustDo(t, "+OK\r\n", "SET", "k"+strconv.Itoa(i), "v")
					}
					r := replicaOf(t, m)
					title, done, status := "redis-rdb-bgsave ", "Background saving terminated by signal 9", "err"
					if diskless == "yes" {
						title, done, status = "redis-rdb-to-slaves ", "Background transfer terminated by signal 9", "ok"
					}
					// A fork child sets its title just after the fork.
					child := titledChild(t, m, title)
					if got := infoField(t, m, "rdb_bgsave_in_progress"); got != "1" {
						t.Errorf("rdb_bgsave_in_progress:%s during the sync", got)
					}
					if got := infoField(t, m, "current_save_keys_total"); got != "20" {
						t.Errorf("current_save_keys_total:%s during the sync, want 20", got)
					}
					if got := infoField(t, m, "rdb_current_bgsave_time_sec"); got == "-1" {
						t.Errorf("rdb_current_bgsave_time_sec:-1 during the sync")
					}
					if got := infoSection(t, m, "replication", "slave0"); !strings.Contains(got, "state=wait_bgsave") {
						t.Errorf("slave0:%s, want state=wait_bgsave", got)
					}
					m.mustDo(t, "-ERR Background save already in progress\r\n", "BGSAVE")
					if err := syscall.Kill(child, syscall.SIGKILL); err != nil {
						t.Fatal(err)
					}
					waitLog(t, m, done)
					// Read at once: the replica's retry starts another
					// save, which takes seconds with the delay.
					if got := infoField(t, m, "rdb_last_bgsave_status"); got != status {
						t.Errorf("rdb_last_bgsave_status:%s, want %s", got, status)
					}
					waitLog(t, m, "SYNC failed. BGSAVE child returned an error")
					m.mustDo(t, "+OK\r\n", "CONFIG", "SET", "rdb-key-save-delay", "0")
					var link, size string
					if !testutil.PollUntil(30*time.Second, func() bool {
						link = infoSection(t, r, "replication", "master_link_status")
						size, _ = r.do("DBSIZE")
						return link == "up" && size == ":20\r\n"
					}) {
						t.Fatalf("replica: link %s, DBSIZE %q\nmaster log:\n%s\nreplica log:\n%s", link, size, m.log(), r.log())
					}
					if diskless == "no" && !exists(filepath.Join(m.dir, "dump.rdb")) {
						t.Errorf("no dump.rdb after the disk sync; dir has %v", dirNames(m.dir))
					}
					if !testutil.PollUntil(10*time.Second, func() bool { return len(children(m.cmd.Process.Pid)) == 0 }) {
						t.Errorf("children left: %v", children(m.cmd.Process.Pid))
					}
				})
			}
		})
	}
}

// TestDiskSyncAttachesToRunningSave: a replica asking for a full sync
// while a disk save for another replica runs is served by that save
// ("Waiting for end of BGSAVE for SYNC": one child, one save); a save
// no replica waits for any more is killed when there are no save points
// (freeClient's anyOtherSlaveWaitRdb), as Redis.
func TestDiskSyncAttachesToRunningSave(t *testing.T) {
	conf := "save \"\"\nrepl-diskless-sync no\nrdb-key-save-delay 200000\n"
	for name, m := range saveServers(t, conf) {
		t.Run(name, func(t *testing.T) {
			for i := range 20 {
				m.mustDo(t, "+OK\r\n", "SET", "k"+strconv.Itoa(i), "v")
			}
			r1 := replicaOf(t, m)
			child := saveChild(t, m)
			r2 := replicaOf(t, m)
			waitLog(t, m, "Waiting for end of BGSAVE for SYNC")
			for _, r := range []*process{r1, r2} {
				var size string
				if !testutil.PollUntil(30*time.Second, func() bool {
					size, _ = r.do("DBSIZE")
					return infoSection(t, r, "replication", "master_link_status") == "up" && size == ":20\r\n"
				}) {
					t.Fatalf("replica: DBSIZE %q\nmaster log:\n%s", size, m.log())
				}
			}
			if n := strings.Count(m.log(), "Background saving started by pid"); n != 1 {
				t.Errorf("%d saves started, want 1 (the first child was %d)\n%s", n, child, m.log())
			}
			// Both replicas leave during a new sync's save: it is killed.
			for _, r := range []*process{r1, r2} {
				r.mustDo(t, "+OK\r\n", "REPLICAOF", "NO", "ONE")
			}
			for _, r := range []*process{r1, r2} {
				r.mustDo(t, "+OK\r\n", "REPLICAOF", "127.0.0.1", strconv.Itoa(m.port))
			}
			saveChild(t, m)
			if !testutil.PollUntil(10*time.Second, func() bool {
				return strings.Count(infoSectionAll(t, m, "replication"), "state=wait_bgsave") == 2
			}) {
				t.Fatalf("replicas not waiting for the save:\n%s", infoSectionAll(t, m, "replication"))
			}
			for _, r := range []*process{r1, r2} {
				r.mustDo(t, "+OK\r\n", "REPLICAOF", "NO", "ONE")
			}
			waitInfo(t, m, "rdb_bgsave_in_progress", "0")
			waitLog(t, m, "Background saving terminated by signal 10")
		})
	}
}

func infoSectionAll(t *testing.T, p *process, section string) string {
	t.Helper()
	info, _ := p.do("INFO", section)
	return info
}
