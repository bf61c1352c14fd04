package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/redis/go-redis/v9"

	"github.com/vigil-kv/vigil/internal/deploy"
)

// quietLogger drops go-redis's own log lines (failed dials of a node that is
// down): the view shows a down node already.
type quietLogger struct{}

func (quietLogger) Printf(context.Context, string, ...any) {}

func init() { redis.SetLogger(quietLogger{}) }

// view prints status snapshots and sentinel events in one of three forms:
// JSON lines (--json), a screen redrawn in place (a terminal), or plain
// lines (the full status when it changes shape, each event as it comes).
type view struct {
	out    io.Writer
	json   bool
	tty    bool
	title  string
	events []deploy.Event // the latest, for the terminal screen
	last   string         // shape of the last status printed (plain mode)
}

func newView(out io.Writer, jsonMode bool, title string) *view {
	tty := false
	if f, ok := out.(*os.File); ok && !jsonMode {
		tty = isatty.IsTerminal(f.Fd()) || isatty.IsCygwinTerminal(f.Fd())
	}
	return &view{out: out, json: jsonMode, tty: tty, title: title}
}

// emitJSON writes one JSON line {"type": typ, ...v's fields}.
func (v *view) emitJSON(typ string, x any) {
	b, err := json.Marshal(x)
	if err != nil {
		return
	}
	var m map[string]any
	if json.Unmarshal(b, &m) != nil {
		return
	}
	m["type"] = typ
	b, _ = json.Marshal(m)
	fmt.Fprintf(v.out, "%s\n", b)
}

// status shows one snapshot.
func (v *view) status(st *deploy.Status) { v.statuses([]*deploy.Status{st}) }

// statuses shows one snapshot of each group (one master name each) of a
// deployment: one after the other on the screen, one JSON line each.
func (v *view) statuses(sts []*deploy.Status) {
	switch {
	case v.json:
		for _, st := range sts {
			v.emitJSON("status", st)
		}
	case v.tty:
		var b strings.Builder
		b.WriteString("\x1b[H\x1b[2J")
		renderStatuses(&b, v.title, sts)
		if len(v.events) > 0 {
			b.WriteString("\nEvents (latest last):\n")
			for _, e := range v.events {
				b.WriteString(eventLine(e))
				b.WriteString("\n")
			}
		}
		b.WriteString("\nCtrl-C to stop.\n")
		io.WriteString(v.out, b.String())
	default:
		var sh strings.Builder
		for _, st := range sts {
			sh.WriteString(shape(st))
		}
		if s := sh.String(); s != v.last {
			v.last = s
			var b strings.Builder
			renderStatuses(&b, v.title, sts)
			b.WriteString("\n")
			io.WriteString(v.out, b.String())
		}
	}
}

// renderStatuses writes each group's snapshot, a blank line between them;
// with several groups a first line sums up how many are healthy.
func renderStatuses(w io.Writer, title string, sts []*deploy.Status) {
	if len(sts) > 1 {
		healthy := 0
		for _, st := range sts {
			if st.Healthy {
				healthy++
			}
		}
		fmt.Fprintf(w, "%s  %d groups, %d healthy\n\n", title, len(sts), healthy)
	}
	for i, st := range sts {
		if i > 0 {
			fmt.Fprintln(w)
		}
		renderStatus(w, title, st)
	}
}

// event shows one sentinel event.
func (v *view) event(e deploy.Event) {
	switch {
	case v.json:
		v.emitJSON("event", e)
	case v.tty:
		v.events = append(v.events, e)
		if len(v.events) > 15 {
			v.events = v.events[len(v.events)-15:]
		}
	default:
		fmt.Fprintln(v.out, eventLine(e))
	}
}

func eventLine(e deploy.Event) string {
	return fmt.Sprintf("%s %-22s %s   (from %s)", e.Time.Format("15:04:05.000"), e.Type, e.Payload, e.Sentinel)
}

// shape is what plain mode prints again on change: roles, links, the
// master and the sentinels' flags, not offsets.
func shape(st *deploy.Status) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %v %v|", st.MasterAddr, st.Healthy, st.Problems)
	for _, s := range st.Servers {
		fmt.Fprintf(&b, "%s %s %d %s %s %d %v|", s.Addr, s.Role, s.Pid, s.LinkStatus, s.MasterAddr, s.OnlineReplicas, s.Error != "")
	}
	for _, s := range st.Sentinels {
		fmt.Fprintf(&b, "%s %s %s %d %d %d %v|", s.Addr, s.MasterAddr, s.Flags, s.Quorum, s.NumReplicas, s.NumOtherSentinels, s.Error != "")
	}
	return b.String()
}

// renderStatus writes the human-readable snapshot.
func renderStatus(w io.Writer, title string, st *deploy.Status) {
	health := "healthy"
	if !st.Healthy {
		health = "NOT healthy"
	}
	master := st.MasterAddr
	if master == "" {
		master = "(unknown)"
	}
	fmt.Fprintf(w, "%s  master %q at %s  %s  %s\n\n", title, st.MasterName, master, health, st.Time.Format("15:04:05"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tROLE\tPID\tOFFSET\tLAG\tLINK\tREPLICAS\t")
	for _, s := range st.Servers {
		if s.Error != "" {
			fmt.Fprintf(tw, "%s\tdown\t-\t-\t-\t-\t-\t%s\n", s.Addr, s.Error)
			continue
		}
		lag, link, reps := "-", "-", "-"
		if s.Role == "replica" {
			lag = strconv.FormatInt(s.Lag, 10)
			link = s.LinkStatus + " to " + s.MasterAddr
		} else {
			reps = fmt.Sprintf("%d online", s.OnlineReplicas)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\t%s\t\n", s.Addr, s.Role, s.Pid, s.Offset, lag, link, reps)
	}
	tw.Flush()
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SENTINEL\tPID\tMASTER\tFLAGS\tQUORUM\tREPLICAS\tOTHER SENTINELS\t")
	for _, s := range st.Sentinels {
		if s.Error != "" {
			fmt.Fprintf(tw, "%s\t-\t-\t-\t-\t-\t-\t%s\n", s.Addr, s.Error)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%d\t%d\t%d\t\n", s.Addr, s.Pid, s.MasterAddr, s.Flags, s.Quorum, s.NumReplicas, s.NumOtherSentinels)
	}
	tw.Flush()
	if len(st.Problems) > 0 {
		fmt.Fprintln(w, "\nProblems:")
		for _, p := range st.Problems {
			fmt.Fprintln(w, "  - "+p)
		}
	}
}

// watch refreshes the view every second (one snapshot per collector: a
// group each) and shows events as they come, until ctx ends.
func watch(ctx context.Context, v *view, cs []*deploy.Collector, sentinels []string) {
	events := deploy.WatchEvents(ctx, sentinels, 3*time.Second)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	refresh := func() {
		cctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		sts := make([]*deploy.Status, len(cs))
		var wg sync.WaitGroup
		for i, c := range cs {
			wg.Add(1)
			go func() { defer wg.Done(); sts[i] = c.Collect(cctx) }()
		}
		wg.Wait()
		cancel()
		if ctx.Err() == nil {
			v.statuses(sts)
		}
	}
	refresh()
	for {
		select {
		case <-ctx.Done():
			return
		case e, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			v.event(e)
		case <-tick.C:
			refresh()
		}
	}
}
