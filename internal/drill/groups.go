package drill

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vigil-kv/vigil/internal/deploy"
)

// runGroups is Run over a deployment of several groups (deploy.Spec.Groups):
// every group has its own workload (Clients clients following its master
// name), each round's fault acts on the group the schedule drew for it
// (the sentinels are shared, so a sentinel fault touches every group), and
// each group's history is checked on its own. The report's top-level
// figures are the totals; Report.Groups has each group's.
func runGroups(ctx context.Context, cfg Config) (*Report, error) {
	dep := cfg.Deployment
	groups := dep.Groups()
	sched, err := ScheduleGroups(cfg.Seed, cfg.Fault, cfg.Rounds, len(groups[0].Servers), len(dep.Sentinels), len(groups))
	if err != nil {
		return nil, err
	}
	start := time.Now()
	runID := strconv.FormatInt(start.UnixNano(), 36)
	ds := make([]*drill, len(groups))
	var mu sync.Mutex // guards phase
	phase := Progress{Rounds: cfg.Rounds}
	progress := func() {
		if cfg.Progress == nil {
			return
		}
		mu.Lock()
		p := phase
		mu.Unlock()
		p.Time = time.Now()
		for _, d := range ds {
			p.WritesOK += d.w.writesOK.Load()
		}
		cfg.Progress(p)
	}
	set := func(round int, fault, ph string) {
		mu.Lock()
		phase.Round, phase.Fault, phase.Phase = round, fault, ph
		mu.Unlock()
		progress()
	}
	for i, g := range groups {
		gc := cfg
		gc.Deployment, gc.MasterName, gc.SentinelAddrs = g, g.Spec.MasterName, g.SentinelAddrs()
		name := g.Spec.MasterName
		gc.Progress = func(p Progress) {
			if p.Phase != "" && p.Fault != "" {
				set(p.Round, p.Fault, name+": "+p.Phase)
			}
		}
		// Each group's workload draws from its own seed; group 1's is the
		// drill's, as with one group.
		ds[i] = newDrill(gc, start, runID, cfg.Seed+int64(i)*7919)
	}
	for i := range sched {
		s := &sched[i]
		s.GroupName = groups[s.Group].Spec.MasterName
		if err := checkSplit([]Step{*s}, ds[s.Group].cfg); err != nil {
			return nil, err
		}
	}

	rep := &Report{Fault: cfg.Fault, Rounds: cfg.Rounds, Seed: cfg.Seed, Clients: cfg.Clients * len(groups), Wait: cfg.Wait,
		Start: start, Schedule: sched, Network: dep.Network(), NetworkInfo: dep.NetworkInfo(), Deployment: deploymentInfo(dep)}
	initial := make([]string, len(groups))
	for i, d := range ds {
		initial[i], _ = d.masterAddr(ctx)
	}
	rep.InitialMaster = strings.Join(initial, " ")

	// One event watcher: each event goes to the groups it names (every
	// group when it names none: +tilt, a sentinel's own events).
	evctx, evcancel := context.WithCancel(context.Background())
	defer evcancel()
	var evwg sync.WaitGroup
	evwg.Add(1)
	go func() {
		defer evwg.Done()
		for e := range deploy.WatchEvents(evctx, dep.SentinelAddrs(), 500*time.Millisecond) {
			te := TimedEvent{At: e.Time.Sub(start), Type: e.Type, Payload: e.Payload}
			for _, i := range eventGroups(e.Payload, groups) {
				ds[i].mu.Lock()
				ds[i].events = append(ds[i].events, te)
				ds[i].mu.Unlock()
			}
		}
	}()

	wctx, wcancel := context.WithCancel(context.Background())
	werrs := make(chan error, len(ds))
	for _, d := range ds {
		go func() { werrs <- d.w.run(wctx) }()
	}
	pctx, pcancel := context.WithCancel(context.Background())
	defer pcancel()
	go func() {
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-pctx.Done():
				return
			case <-t.C:
				progress()
			}
		}
	}()

	recs := make([][]FaultRecord, len(groups))
	for _, s := range sched {
		if ctx.Err() != nil {
			rep.Notes = append(rep.Notes, "interrupted: "+ctx.Err().Error())
			break
		}
		set(s.Round, s.Fault, "steady")
		if !sleepCtx(ctx, s.Before) {
			continue
		}
		set(s.Round, s.Fault, s.GroupName+": inject")
		rec := ds[s.Group].inject(ctx, s)
		rec.Group = s.GroupName
		recs[s.Group] = append(recs[s.Group], rec)
	}
	set(cfg.Rounds, "", "settle")
	sleepCtx(ctx, cfg.Settle)
	wcancel()
	var werr []error
	for range ds {
		werr = append(werr, <-werrs)
	}
	if err := errors.Join(werr...); err != nil {
		return nil, err
	}
	pcancel()
	end := time.Since(start)
	rep.Duration = end

	set(cfg.Rounds, "", "read-back")
	type result struct {
		ops    []Op
		final  map[string]string
		master string
	}
	res := make([]result, len(ds))
	for i, d := range ds {
		ops := d.w.h.Ops()
		rctx, rcancel := context.WithTimeout(context.Background(), cfg.RecoverTimeout)
		final, master, err := readBack(rctx, d.w.opts, ops)
		rcancel()
		if err != nil {
			return nil, fmt.Errorf("group %s: %w", groups[i].Spec.MasterName, err)
		}
		res[i] = result{ops, final, master}
	}
	evcancel()
	evwg.Wait()

	set(cfg.Rounds, "", "check")
	subs := make([]*Report, len(ds))
	for i, d := range ds {
		subs[i] = &Report{Wait: cfg.Wait, Schedule: sched, Faults: recs[i]}
		d.finish(subs[i], res[i].ops, res[i].final, end)
		subs[i].InitialMaster, subs[i].FinalMaster = initial[i], res[i].master
	}
	mergeGroups(rep, groups, subs, cfg.Clients)
	return rep, nil
}

// eventGroups are the indexes of the groups whose master name is a word of
// a sentinel event's payload, or every group when it names none.
func eventGroups(payload string, groups []*deploy.Deployment) []int {
	words := map[string]bool{}
	for _, w := range strings.Fields(payload) {
		words[w] = true
	}
	var out []int
	for i, g := range groups {
		if words[g.Spec.MasterName] {
			out = append(out, i)
		}
	}
	if len(out) == 0 {
		for i := range groups {
			out = append(out, i)
		}
	}
	return out
}

// mergeGroups fills rep's totals and Groups from each group's report: the
// histories and lost writes with keys prefixed "<name>/" and client
// numbers following on, counts and losses summed, the unavailability
// windows of every group (each naming its group) and their sum, and a
// linearizability verdict that is Ok only when every group's is.
func mergeGroups(rep *Report, groups []*deploy.Deployment, subs []*Report, clients int) {
	seen := map[string]bool{}
	var finals []string
	rep.Loss.Wait = rep.Wait
	rep.Linearizable.Result = "Ok"
	for i, sub := range subs {
		name := groups[i].Spec.MasterName
		first := i * clients
		gr := GroupReport{MasterName: name, InitialMaster: sub.InitialMaster, FinalMaster: sub.FinalMaster, FirstClient: first,
			Counts: sub.Counts, Loss: sub.Loss, Unavailable: sub.Unavailable, UnavailableTotal: sub.UnavailableTotal,
			Linearizable: sub.Linearizable, Rounds: []int{}}
		for _, f := range sub.Faults {
			gr.Rounds = append(gr.Rounds, f.Round)
		}
		rep.Groups = append(rep.Groups, gr)
		finals = append(finals, sub.FinalMaster)

		for _, op := range sub.History {
			op.Key = name + "/" + op.Key
			op.Client += first
			rep.History = append(rep.History, op)
		}
		rep.Faults = append(rep.Faults, sub.Faults...)
		for _, e := range sub.Events {
			k := e.Type + "\x00" + e.Payload + "\x00" + e.At.String()
			if !seen[k] {
				seen[k] = true
				rep.Events = append(rep.Events, e)
			}
		}
		for _, e := range sub.MasterChanges {
			e.Payload = name + " " + e.Payload
			rep.MasterChanges = append(rep.MasterChanges, e)
		}
		c := &rep.Counts
		c.Total += sub.Counts.Total
		c.OK += sub.Counts.OK
		c.Failed += sub.Counts.Failed
		c.Unknown += sub.Counts.Unknown
		c.WritesOK += sub.Counts.WritesOK
		c.WritesAckd += sub.Counts.WritesAckd
		l := &rep.Loss
		l.Checked += sub.Loss.Checked
		l.CheckedWithWait += sub.Loss.CheckedWithWait
		l.LostWithWait += sub.Loss.LostWithWait
		l.UnknownPresent += sub.Loss.UnknownPresent
		l.FailedPresent += sub.Loss.FailedPresent
		for _, lw := range sub.Loss.Lost {
			lw.Key = name + "/" + lw.Key
			l.Lost = append(l.Lost, lw)
		}
		for _, u := range sub.Unavailable {
			u.Group = name
			rep.Unavailable = append(rep.Unavailable, u)
		}
		rep.UnavailableTotal += sub.UnavailableTotal
		lr, sl := &rep.Linearizable, sub.Linearizable
		lr.Ops += sl.Ops
		lr.Keys += sl.Keys
		switch {
		case sl.Result == "Illegal" && lr.Result != "Illegal":
			lr.Result, lr.Key, lr.Counterexample = "Illegal", name+"/"+sl.Key, sl.Counterexample
		case sl.Result != "Ok" && lr.Result == "Ok":
			lr.Result = sl.Result
		}
	}
	if rep.Loss.Lost == nil {
		rep.Loss.Lost = []LostWrite{}
	}
	sort.SliceStable(rep.Faults, func(i, j int) bool { return rep.Faults[i].Round < rep.Faults[j].Round })
	sort.SliceStable(rep.Events, func(i, j int) bool { return rep.Events[i].At < rep.Events[j].At })
	sort.SliceStable(rep.MasterChanges, func(i, j int) bool { return rep.MasterChanges[i].At < rep.MasterChanges[j].At })
	sort.SliceStable(rep.Unavailable, func(i, j int) bool { return rep.Unavailable[i].Start < rep.Unavailable[j].Start })
	sort.SliceStable(rep.History, func(i, j int) bool { return rep.History[i].Invoke < rep.History[j].Invoke })
	rep.FaultStats = faultStats(rep.Schedule, rep.Faults)
	rep.FinalMaster = strings.Join(finals, " ")
}
