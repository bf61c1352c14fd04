package drill

import (
	"fmt"
	"math/rand"
	"strings"
	"time"
)

// Fault kinds.
const (
	FaultKillMaster      = "kill-master"
	FaultPauseMaster     = "pause-master"
	FaultPartitionMaster = "partition-master"
	FaultKillSentinel    = "kill-sentinel"
	FaultRollingRestart  = "rolling-restart"
	// FaultKillReplicaSync restarts a replica without its data (so it
	// needs a full sync) and SIGKILLs it while the sync is in progress.
	FaultKillReplicaSync = "kill-replica-sync"
	// FaultRestartMasterEmpty SIGKILLs the master, deletes its RDB and AOF
	// and starts it again at once (well within down-after): it comes back
	// empty under a new replication ID (redis/redis#2087). With
	// vigil-server's empty-restart guard the replicas refuse its empty
	// sync and the sentinels fail over to one of them; nothing is lost.
	FaultRestartMasterEmpty = "restart-master-empty"
	// FaultSplit partitions the deployment in two (deploy.Deployment.Split,
	// network namespaces only): the master keeps one replica and a
	// minority of the sentinels on its side, the other replicas and the
	// sentinel majority are on the other side, and the drill's clients
	// (application hosts) reach both sides. It is held for
	// Config.SplitHold plus the step's seeded Hold, then healed.
	FaultSplit = "split"
	FaultAll   = "all"
)

// Faults are the fault kinds "all" draws from. A kind added here changes
// the schedule "all" draws for every seed (each round draws among
// len(Faults)); new kinds go at the end.
var Faults = []string{FaultKillMaster, FaultPauseMaster, FaultPartitionMaster, FaultKillSentinel, FaultRollingRestart, FaultKillReplicaSync,
	FaultRestartMasterEmpty, FaultSplit}

// FaultNames lists the fault kinds for messages: "kill-master, ..., split or all".
func FaultNames() string {
	return strings.Join(Faults, ", ") + " or " + FaultAll
}

// ValidFault reports whether f names a fault or "all".
func ValidFault(f string) bool {
	if f == FaultAll {
		return true
	}
	for _, k := range Faults {
		if k == f {
			return true
		}
	}
	return false
}

// Step is one round of the schedule.
type Step struct {
	Round int    `json:"round"` // 1-based
	Fault string `json:"fault"`
	// Before is how long the workload runs undisturbed before the fault.
	Before time.Duration `json:"before_ns"`
	// Hold is how long a killed sentinel stays down.
	Hold time.Duration `json:"hold_ns"`
	// Target picks the sentinel for kill-sentinel, the replica for
	// kill-replica-sync and the replica that stays on the master's side of
	// a split (an index, modulo their number).
	Target int `json:"target"`
	// SplitSentinels are the sentinels (indexes) that stay on the master's
	// side of a split: a minority, (sentinels-1)/2 of them.
	SplitSentinels []int `json:"split_sentinels,omitempty"`
	// Order is the restart order of the nodes for rolling-restart
	// (indexes into servers then sentinels).
	Order []int `json:"order,omitempty"`
	// Group is the group (0-based, in the deployment's order) whose
	// servers the fault acts on, with several groups (ScheduleGroups);
	// GroupName is its master name, set by the drill.
	Group     int    `json:"group,omitempty"`
	GroupName string `json:"group_name,omitempty"`
}

// Schedule draws rounds steps from seed: the same seed, fault, rounds and
// deployment shape always give the same schedule. fault "all" picks each
// round's fault at random.
func Schedule(seed int64, fault string, rounds, servers, sentinels int) ([]Step, error) {
	return ScheduleGroups(seed, fault, rounds, servers, sentinels, 1)
}

// ScheduleGroups is Schedule for a deployment of groups groups of servers
// servers each: each round also draws the group it targets (after the
// round's other draws, so one group gives Schedule's steps). A fault on a
// sentinel (kill-sentinel, and the sentinels of rolling-restart and
// split) touches every group, since they share the sentinels.
func ScheduleGroups(seed int64, fault string, rounds, servers, sentinels, groups int) ([]Step, error) {
	if groups < 1 {
		return nil, fmt.Errorf("groups %d: want at least 1", groups)
	}
	if !ValidFault(fault) {
		return nil, fmt.Errorf("unknown fault %q: want %s", fault, FaultNames())
	}
	if rounds < 1 {
		return nil, fmt.Errorf("rounds %d: want at least 1", rounds)
	}
	r := rand.New(rand.NewSource(seed))
	var out []Step
	for i := 1; i <= rounds; i++ {
		s := Step{Round: i, Fault: fault}
		if fault == FaultAll {
			s.Fault = Faults[r.Intn(len(Faults))]
		}
		s.Before = 500*time.Millisecond + time.Duration(r.Int63n(int64(time.Second)))
		s.Hold = 500*time.Millisecond + time.Duration(r.Int63n(int64(time.Second)))
		s.Target = r.Intn(max(sentinels, servers, 1))
		if s.Fault == FaultRollingRestart {
			s.Order = r.Perm(servers + sentinels)
		}
		// Drawn only for a split, so the schedules of the other faults
		// stay what they were.
		if s.Fault == FaultSplit {
			s.SplitSentinels = r.Perm(sentinels)[:max(sentinels-1, 0)/2]
		}
		if groups > 1 {
			s.Group = r.Intn(groups)
		}
		out = append(out, s)
	}
	return out, nil
}
