package drill

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/client"
	"github.com/vigil-kv/vigil/internal/deploy"
)

// Config describes a drill.
type Config struct {
	Fault   string // a fault kind or "all"
	Rounds  int
	Seed    int64
	Clients int // default 4
	Wait    int // WAIT for this many replicas before a write counts as acknowledged

	// Deployment is the deployment the faults act on. Without one the
	// drill runs against SentinelAddrs/MasterName and can only inject
	// faults through commands (see Run).
	Deployment    *deploy.Deployment
	SentinelAddrs []string
	MasterName    string
	Password      string
	// DownAfter is the sentinels' down-after-milliseconds (pause-master
	// holds the pause at least this long); default 5 s.
	DownAfter time.Duration
	// SplitHold is how long a split lasts before it heals, plus each
	// step's seeded Hold (0.5 to 1.5 s); default 4 × DownAfter (time for
	// the majority side to fail over and for clients to keep writing to
	// the old master after it did).
	SplitHold time.Duration

	// RegisterKeys is the number of register keys (default 5).
	RegisterKeys int
	// Pace is each client's pause between operations (default 5 ms).
	Pace time.Duration
	// OpTimeout bounds one operation (default 2 s).
	OpTimeout time.Duration
	// RecoverTimeout bounds waiting for a failover or for health after a
	// fault (default 60 s).
	RecoverTimeout time.Duration
	// Settle is how long the workload runs after the last round (default 1 s).
	Settle time.Duration
	// GapMin is the shortest gap reported as unavailability (default 500 ms).
	GapMin time.Duration
	// LinTimeout bounds the linearizability check per key (default 20 s).
	LinTimeout time.Duration

	// Progress, when set, is called about every second and at each step.
	Progress func(Progress)
}

// Progress is a snapshot while a drill runs.
type Progress struct {
	Time     time.Time `json:"time"`
	Round    int       `json:"round"`
	Rounds   int       `json:"rounds"`
	Fault    string    `json:"fault"`
	Phase    string    `json:"phase"`
	WritesOK int64     `json:"writes_ok"`
}

// FaultRecord is what happened in one round.
type FaultRecord struct {
	Round int `json:"round"`
	// Group is the master name of the group the fault acted on (several
	// groups only).
	Group  string        `json:"group,omitempty"`
	Fault  string        `json:"fault"`
	Target string        `json:"target"` // the node acted on
	Start  time.Duration `json:"start_ns"`
	End    time.Duration `json:"end_ns"` // healed / restarted and recovered
	// SwitchMaster is the time from the fault to the first +switch-master
	// between the fault and the end of its recovery (-1 when none was
	// seen); NewMaster is its address.
	SwitchMaster time.Duration `json:"switch_master_ns"`
	NewMaster    string        `json:"new_master,omitempty"`
	// FirstWrite is the time from the fault to the completion of the first
	// successful write invoked after it (-1: none).
	FirstWrite time.Duration `json:"first_write_ns"`
	// ClientSwitch is the time from that +switch-master to the first
	// drill client's switch to NewMaster (negative when a client found it
	// through the sentinels before the event was published; absent
	// without a +switch-master or when no client switched), and
	// ClientWithin100ms whether it is at most 100 ms: the client reaches
	// the new master within the sentinels' switch time plus 100 ms.
	ClientSwitch      *time.Duration `json:"client_switch_ns,omitempty"`
	ClientWithin100ms *bool          `json:"client_within_100ms,omitempty"`
	// FirstWriteAfterSwitch is the time from the +switch-master to the
	// completion of the first successful write invoked after it (-1: none).
	FirstWriteAfterSwitch time.Duration `json:"first_write_after_switch_ns"`
	// RejoinedAsReplica: pause-master and partition-master check that the
	// old master came back as a replica of the new one with its link up.
	RejoinedAsReplica *bool `json:"rejoined_as_replica,omitempty"`
	// KilledDuringSync: kill-replica-sync saw the replica's full sync in
	// progress (master_sync_in_progress:1) when it killed it.
	KilledDuringSync *bool `json:"killed_during_sync,omitempty"`
	// Healed (partition-master, split) is when the cut was removed, from
	// the drill's start (0: not healed).
	Healed time.Duration `json:"healed_ns,omitempty"`
	// OldMasterWriteWindow (partition-master, split) is the time from the
	// fault to the completion of the last write the old master (Target)
	// acknowledged while cut off or deposed (see oldMasterWriteWindow),
	// -1 when it acknowledged none; OldMasterWrites counts those writes.
	OldMasterWriteWindow *time.Duration `json:"old_master_write_window_ns,omitempty"`
	OldMasterWrites      int            `json:"old_master_writes,omitempty"`
	// IsolationBound is the cut-off master's master-isolation-timeout
	// (fencing.go; absent: none, as on redis-server);
	// WithinIsolationBound whether the write window is at most the bound.
	IsolationBound       *time.Duration `json:"isolation_bound_ns,omitempty"`
	WithinIsolationBound *bool          `json:"within_isolation_bound,omitempty"`
	// Split is what a split separated and what each side saw.
	Split *SplitRecord `json:"split,omitempty"`
	// Note says what the drill observed that is no error of the run (a
	// fault whose remedy the binaries under test lack).
	Note  string `json:"note,omitempty"`
	Error string `json:"error,omitempty"`
}

// SplitRecord is one split: its two sides (node names) and, just before the
// heal, the master each sentinel named ("" when it did not answer) and the
// role each server reported ("master", or "replica of <addr>"): the evidence
// that the sides were apart.
type SplitRecord struct {
	Minority []string `json:"minority"` // the old master's side
	Majority []string `json:"majority"`
	// MajorityReplica is the replica on the majority side the sentinels
	// there may promote (the first, with more than two replicas).
	MajorityReplica string            `json:"majority_replica"`
	Hold            time.Duration     `json:"hold_ns"`
	SentinelViews   map[string]string `json:"sentinel_views"`
	ServerRoles     map[string]string `json:"server_roles"`
}

// FaultStat sums up the rounds of one fault kind: how long a round took
// (the undisturbed time before the fault plus the fault up to recovery),
// to plan longer runs.
type FaultStat struct {
	Fault  string        `json:"fault"`
	Rounds int           `json:"rounds"`
	Errors int           `json:"errors"`
	Mean   time.Duration `json:"mean_round_ns"`
	Max    time.Duration `json:"max_round_ns"`
}

// TimedEvent is a sentinel event at an offset from the start.
type TimedEvent struct {
	At      time.Duration `json:"at_ns"`
	Type    string        `json:"event"`
	Payload string        `json:"payload"`
}

// Report is the result of a drill.
type Report struct {
	Fault         string        `json:"fault"`
	Rounds        int           `json:"rounds"`
	Seed          int64         `json:"seed"`
	Clients       int           `json:"clients"`
	Wait          int           `json:"wait"`
	Start         time.Time     `json:"start"`
	Duration      time.Duration `json:"duration_ns"`
	Schedule      []Step        `json:"schedule"`
	Counts        Counts        `json:"counts"`
	Faults        []FaultRecord `json:"faults"`
	Events        []TimedEvent  `json:"events"`
	MasterChanges []TimedEvent  `json:"master_changes"` // seen by the client
	Loss          LossReport    `json:"loss"`
	Unavailable   []Window      `json:"unavailability"`
	// UnavailableTotal is the sum of the Unavailable windows.
	UnavailableTotal time.Duration `json:"unavailable_total_ns"`
	// FaultStats: per fault kind, how long its rounds took.
	FaultStats   []FaultStat `json:"fault_stats"`
	Linearizable LinResult   `json:"linearizability"`
	// Network is how partitions were made: "netns" (network namespaces,
	// real packet loss), "proxy" (a TCP proxy in this process) or "" (no
	// deployment of the drill's, or none could be made); NetworkInfo
	// describes it.
	Network     string `json:"network"`
	NetworkInfo string `json:"network_info,omitempty"`
	// Deployment names what ran the drill's own deployment (nil with
	// --sentinel: an existing one): redis-server / redis-sentinel
	// (--against redis) or vigil-server / vigil-sentinel.
	Deployment    *DeploymentInfo `json:"deployment,omitempty"`
	InitialMaster string          `json:"initial_master"`
	FinalMaster   string          `json:"final_master"`
	History       []Op            `json:"history"`
	Notes         []string        `json:"notes,omitempty"`
	// Groups is the drill of each group, with several groups (vigil drill
	// --groups N): then the fields above are the totals, History holds
	// every group's operations with keys prefixed "<master name>/" and
	// client numbers following on from group to group (GroupReport.
	// FirstClient), and Loss's keys are prefixed the same way.
	Groups []GroupReport `json:"groups,omitempty"`
}

// GroupReport is what the drill found in one group of several.
type GroupReport struct {
	MasterName    string `json:"master_name"`
	InitialMaster string `json:"initial_master"`
	FinalMaster   string `json:"final_master"`
	// FirstClient is the number of the group's first client in the
	// report's History (its clients are FirstClient..+Clients-1).
	FirstClient      int           `json:"first_client"`
	Rounds           []int         `json:"rounds"` // the rounds whose fault targeted this group
	Counts           Counts        `json:"counts"`
	Loss             LossReport    `json:"loss"`
	Unavailable      []Window      `json:"unavailability"`
	UnavailableTotal time.Duration `json:"unavailable_total_ns"`
	Linearizable     LinResult     `json:"linearizability"`
}

// DeploymentInfo says which binaries ran the nodes of the drill's deployment.
type DeploymentInfo struct {
	Server        string `json:"server"`   // redis-server or vigil-server
	Sentinel      string `json:"sentinel"` // redis-sentinel or vigil-sentinel
	ServerCount   int    `json:"servers"`
	SentinelCount int    `json:"sentinels"`
}

func deploymentInfo(d *deploy.Deployment) *DeploymentInfo {
	return &DeploymentInfo{Server: string(d.Spec.Kind) + "-server", Sentinel: string(d.Spec.SentinelKind) + "-sentinel",
		ServerCount: len(d.Servers), SentinelCount: len(d.Sentinels)}
}

// checkSplit refuses a schedule with a split the deployment cannot make:
// one needs network namespaces (on loopback, or behind the TCP proxy, the
// sentinels' links to each other cannot be cut) and two replicas.
func checkSplit(sched []Step, cfg Config) error {
	for _, s := range sched {
		if s.Fault != FaultSplit {
			continue
		}
		what := "the fault"
		if cfg.Fault == FaultAll {
			what = fmt.Sprintf("--fault all draws it in round %d, and it", s.Round)
		}
		if d := cfg.Deployment; d == nil || d.Network() != "netns" {
			net := "no deployment of the drill's"
			if d != nil {
				net = d.NetworkInfo()
			}
			return fmt.Errorf("fault split: %s needs network namespaces (--net netns; root, ip and nft), here: %s. "+
				"The TCP proxy sits in front of the servers only and cannot cut the sentinels off each other, so it cannot make a split", what, net)
		}
		if n := len(cfg.Deployment.Servers) - 1; n < 2 {
			return fmt.Errorf("fault split: %s needs at least two replicas (one on each side), the deployment has %d", what, n)
		}
		return nil
	}
	return nil
}

// faultStats sums up each fault kind's rounds: the undisturbed time before
// the fault (the schedule's Before) plus the fault up to its recovery.
func faultStats(sched []Step, faults []FaultRecord) []FaultStat {
	before := map[int]time.Duration{}
	for _, s := range sched {
		before[s.Round] = s.Before
	}
	idx := map[string]int{}
	var out []FaultStat
	for _, f := range faults {
		i, ok := idx[f.Fault]
		if !ok {
			i = len(out)
			idx[f.Fault] = i
			out = append(out, FaultStat{Fault: f.Fault})
		}
		st := &out[i]
		d := before[f.Round] + f.End - f.Start
		st.Mean = (st.Mean*time.Duration(st.Rounds) + d) / time.Duration(st.Rounds+1)
		st.Rounds++
		st.Max = max(st.Max, d)
		if f.Error != "" {
			st.Errors++
		}
	}
	return out
}

func (c *Config) defaults() error {
	if c.Clients <= 0 {
		c.Clients = 4
	}
	if c.Rounds <= 0 {
		c.Rounds = 1
	}
	if c.MasterName == "" {
		c.MasterName = "mymaster"
	}
	if c.Deployment != nil {
		c.SentinelAddrs = c.Deployment.SentinelAddrs()
		c.MasterName = c.Deployment.Spec.MasterName
		if c.DownAfter == 0 {
			c.DownAfter = c.Deployment.Spec.DownAfter
		}
	}
	if c.DownAfter <= 0 {
		c.DownAfter = 5 * time.Second
	}
	if c.SplitHold <= 0 {
		c.SplitHold = 4 * c.DownAfter
	}
	if c.RegisterKeys <= 0 {
		c.RegisterKeys = 5
	}
	if c.Pace <= 0 {
		c.Pace = 5 * time.Millisecond
	}
	if c.OpTimeout <= 0 {
		c.OpTimeout = 2 * time.Second
	}
	if c.RecoverTimeout <= 0 {
		c.RecoverTimeout = 60 * time.Second
	}
	if c.Settle <= 0 {
		c.Settle = time.Second
	}
	if c.GapMin <= 0 {
		c.GapMin = 500 * time.Millisecond
	}
	if c.LinTimeout <= 0 {
		c.LinTimeout = 20 * time.Second
	}
	if len(c.SentinelAddrs) == 0 {
		return errors.New("drill: no sentinels: start a deployment or pass --sentinel host:port")
	}
	return nil
}

// drill is one run's state.
type drill struct {
	cfg   Config
	start time.Time
	w     *workload

	mu      sync.Mutex
	events  []TimedEvent
	changes []TimedEvent
	round   int
	fault   string
	phase   string
}

// Run runs the drill: the workload starts, each scheduled fault is injected
// and recovered from in turn, the workload settles and stops, every
// acknowledged write is read back from the final master, and the history is
// checked. The error is for a drill that could not run; what the drill
// found (lost writes, a non-linearizable history, a failed recovery) is in
// the report.
//
// Without a Deployment, faults go through commands to the nodes the
// sentinels name: kill-master is SHUTDOWN NOSAVE on the master (not
// restarted), pause-master is DEBUG SLEEP; the other faults need a
// deployment the drill started.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	if err := cfg.defaults(); err != nil {
		return nil, err
	}
	if dep := cfg.Deployment; dep != nil && len(dep.Groups()) > 1 {
		return runGroups(ctx, cfg)
	}
	servers, sentinels := 0, len(cfg.SentinelAddrs)
	if cfg.Deployment != nil {
		servers = len(cfg.Deployment.Servers)
	}
	sched, err := Schedule(cfg.Seed, cfg.Fault, cfg.Rounds, servers, sentinels)
	if err != nil {
		return nil, err
	}
	if cfg.Deployment == nil {
		for _, s := range sched {
			if s.Fault != FaultKillMaster && s.Fault != FaultPauseMaster {
				return nil, fmt.Errorf("fault %s needs a deployment started by the drill (without --sentinel)", s.Fault)
			}
		}
	}
	if err := checkSplit(sched, cfg); err != nil {
		return nil, err
	}
	d := newDrill(cfg, time.Now(), "", cfg.Seed)
	copts := d.w.opts
	rep := &Report{Fault: cfg.Fault, Rounds: cfg.Rounds, Seed: cfg.Seed, Clients: cfg.Clients, Wait: cfg.Wait,
		Start: d.start, Schedule: sched}
	if cfg.Deployment != nil {
		rep.Network, rep.NetworkInfo = cfg.Deployment.Network(), cfg.Deployment.NetworkInfo()
		rep.Deployment = deploymentInfo(cfg.Deployment)
	}
	rep.InitialMaster, _ = d.masterAddr(ctx)

	evctx, evcancel := context.WithCancel(context.Background())
	defer evcancel()
	var evwg sync.WaitGroup
	evwg.Add(1)
	go func() {
		defer evwg.Done()
		for e := range deploy.WatchEvents(evctx, cfg.SentinelAddrs, 500*time.Millisecond) {
			d.mu.Lock()
			d.events = append(d.events, TimedEvent{At: e.Time.Sub(d.start), Type: e.Type, Payload: e.Payload})
			d.mu.Unlock()
		}
	}()

	wctx, wcancel := context.WithCancel(context.Background())
	werr := make(chan error, 1)
	go func() { werr <- d.w.run(wctx) }()

	pctx, pcancel := context.WithCancel(context.Background())
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-pctx.Done():
				return
			case <-t.C:
				d.report()
			}
		}
	}()

	for _, s := range sched {
		if ctx.Err() != nil {
			rep.Notes = append(rep.Notes, "interrupted: "+ctx.Err().Error())
			break
		}
		d.set(s.Round, s.Fault, "steady")
		if !sleepCtx(ctx, s.Before) {
			continue
		}
		d.set(s.Round, s.Fault, "inject")
		rec := d.inject(ctx, s)
		rep.Faults = append(rep.Faults, rec)
	}
	d.set(cfg.Rounds, "", "settle")
	sleepCtx(ctx, cfg.Settle)
	wcancel()
	if err := <-werr; err != nil {
		pcancel()
		return nil, err
	}
	pcancel()
	end := time.Since(d.start)
	rep.Duration = end

	d.set(cfg.Rounds, "", "read-back")
	ops := d.w.h.Ops()
	rctx, rcancel := context.WithTimeout(context.Background(), cfg.RecoverTimeout)
	final, master, err := readBack(rctx, copts, ops)
	rcancel()
	if err != nil {
		return nil, err
	}
	rep.FinalMaster = master
	evcancel()
	evwg.Wait()

	d.set(cfg.Rounds, "", "check")
	d.finish(rep, ops, final, end)
	return rep, nil
}

// newDrill is a drill's state with its workload (not started); runID ""
// draws one from start.
func newDrill(cfg Config, start time.Time, runID string, seed int64) *drill {
	if runID == "" {
		runID = strconv.FormatInt(start.UnixNano(), 36)
	}
	d := &drill{cfg: cfg, start: start}
	copts := client.Options{MasterName: cfg.MasterName, SentinelAddrs: cfg.SentinelAddrs, Password: cfg.Password,
		ReadTimeout: time.Second, WriteTimeout: time.Second, DialTimeout: time.Second, MasterWait: cfg.OpTimeout}
	d.w = &workload{opts: copts, clients: cfg.Clients, wait: cfg.Wait, regKeys: cfg.RegisterKeys,
		opTime: cfg.OpTimeout, pace: cfg.Pace, seed: seed, start: start, h: &History{},
		runID: runID,
		onChange: func(client int, old, new, source string) {
			d.mu.Lock()
			d.changes = append(d.changes, TimedEvent{At: time.Since(d.start), Type: "client:" + source,
				Payload: fmt.Sprintf("client %d: %s -> %s", client, old, new)})
			d.mu.Unlock()
		}}
	return d
}

// finish fills rep from the history, the read-back values and what the
// drill recorded: events, fault figures, counts, loss, unavailability and
// linearizability.
func (d *drill) finish(rep *Report, ops []Op, final map[string]string, end time.Duration) {
	cfg := d.cfg
	d.mu.Lock()
	rep.Events = append([]TimedEvent{}, d.events...)
	rep.MasterChanges = append([]TimedEvent{}, d.changes...)
	d.mu.Unlock()
	fillFaultTimes(rep, ops)
	fillWriteWindows(rep)
	rep.History = ops
	rep.Counts = Count(ops)
	rep.Loss = CheckLoss(ops, final, cfg.Wait)
	rep.Unavailable = UnavailabilityWait(ops, end, cfg.GapMin, cfg.Wait)
	for _, u := range rep.Unavailable {
		rep.UnavailableTotal += u.Duration
	}
	rep.FaultStats = faultStats(rep.Schedule, rep.Faults)
	rep.Linearizable = CheckLinearizable(ops, cfg.LinTimeout)
}

// fillFaultTimes computes each fault's figures from the history and the
// events: time to the first successful write, to +switch-master, from it
// to the first client on the new master and to the first write after it.
func fillFaultTimes(rep *Report, ops []Op) {
	for i := range rep.Faults {
		f := &rep.Faults[i]
		f.FirstWrite = FirstWriteAfter(ops, f.Start)
		f.SwitchMaster = -1
		f.FirstWriteAfterSwitch = -1
		for _, e := range rep.Events {
			if e.Type == "+switch-master" && e.At >= f.Start && e.At <= f.End {
				f.SwitchMaster = e.At - f.Start
				if p := strings.Fields(e.Payload); len(p) == 5 {
					f.NewMaster = p[3] + ":" + p[4]
				}
				break
			}
		}
		if f.SwitchMaster >= 0 {
			at := f.Start + f.SwitchMaster
			f.FirstWriteAfterSwitch = FirstWriteAfter(ops, at)
			if c, ok := ClientSwitchAfter(rep.MasterChanges, f.Start, f.NewMaster); ok {
				lag := c - at
				within := lag <= 100*time.Millisecond
				f.ClientSwitch, f.ClientWithin100ms = &lag, &within
			}
		}
	}
	for i := range rep.Faults {
		f := &rep.Faults[i]
		if f.Fault == FaultPartitionMaster || f.Fault == FaultSplit {
			w, n := oldMasterWriteWindow(ops, *f, rep.Events)
			f.OldMasterWriteWindow, f.OldMasterWrites = &w, n
		}
	}
}

func (d *drill) set(round int, fault, phase string) {
	d.mu.Lock()
	d.round, d.fault, d.phase = round, fault, phase
	d.mu.Unlock()
	d.report()
}

func (d *drill) report() {
	if d.cfg.Progress == nil {
		return
	}
	d.mu.Lock()
	p := Progress{Time: time.Now(), Round: d.round, Rounds: d.cfg.Rounds, Fault: d.fault, Phase: d.phase, WritesOK: d.w.writesOK.Load()}
	d.mu.Unlock()
	d.cfg.Progress(p)
}

func (d *drill) since() time.Duration { return time.Since(d.start) }

// masterAddr is the master the sentinels name now.
func (d *drill) masterAddr(ctx context.Context) (string, error) {
	if dep := d.cfg.Deployment; dep != nil {
		n, err := dep.CurrentMaster(ctx)
		if err != nil {
			return "", err
		}
		return n.PeerAddr(), nil
	}
	var errs []error
	for _, s := range d.cfg.SentinelAddrs {
		cl := redis.NewSentinelClient(&redis.Options{Addr: s, DialTimeout: time.Second, ReadTimeout: time.Second, MaxRetries: -1})
		a, err := cl.GetMasterAddrByName(ctx, d.cfg.MasterName).Result()
		cl.Close()
		if err == nil && len(a) == 2 {
			return a[0] + ":" + a[1], nil
		}
		errs = append(errs, err)
	}
	return "", fmt.Errorf("no sentinel names master %s: %w", d.cfg.MasterName, errors.Join(errs...))
}

func sleepCtx(ctx context.Context, dur time.Duration) bool {
	t := time.NewTimer(dur)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
