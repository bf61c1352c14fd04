package drill

import (
	"encoding/json"
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteFiles writes report.json and timeline.svg into dir (created).
func (r *Report) WriteFiles(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "report.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	f, err := os.Create(filepath.Join(dir, "timeline.svg"))
	if err != nil {
		return err
	}
	if err := r.WriteSVG(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

func secs(d time.Duration) string { return fmt.Sprintf("%.3fs", d.Seconds()) }

// signedSecs is secs with a sign, for offsets that may be negative.
func signedSecs(d time.Duration) string { return fmt.Sprintf("%+.3fs", d.Seconds()) }

// WriteText writes the readable report.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "vigil drill: fault %s, %d round(s), seed %d, %d client(s)", r.Fault, r.Rounds, r.Seed, r.Clients)
	if r.Wait > 0 {
		fmt.Fprintf(w, ", WAIT %d", r.Wait)
	}
	fmt.Fprintf(w, ", %s\n", secs(r.Duration))
	if d := r.Deployment; d != nil {
		fmt.Fprintf(w, "deployment: %d %s, %d %s\n", d.ServerCount, d.Server, d.SentinelCount, d.Sentinel)
	}
	if r.Network != "" {
		fmt.Fprintf(w, "partitions: %s (%s)\n", r.Network, r.NetworkInfo)
	}
	fmt.Fprintf(w, "master: %s at start, %s at end\n", r.InitialMaster, r.FinalMaster)
	c := r.Counts
	fmt.Fprintf(w, "operations: %d (ok %d, failed %d, unknown %d); writes ok %d, acknowledged %d\n",
		c.Total, c.OK, c.Failed, c.Unknown, c.WritesOK, c.WritesAckd)
	if len(r.Groups) > 0 {
		r.writeGroups(w)
	}
	fmt.Fprintln(w, "\nfaults:")
	for _, f := range r.Faults {
		in := ""
		if f.Group != "" {
			in = " in group " + f.Group
		}
		fmt.Fprintf(w, "  round %d: %s of %s%s at %s (recovered at %s)\n", f.Round, f.Fault, f.Target, in, secs(f.Start), secs(f.End))
		if f.SwitchMaster >= 0 {
			fmt.Fprintf(w, "    +switch-master after %s (new master %s)\n", secs(f.SwitchMaster), f.NewMaster)
		} else {
			fmt.Fprintln(w, "    no +switch-master")
		}
		if f.FirstWrite >= 0 {
			fmt.Fprintf(w, "    first successful write after %s\n", secs(f.FirstWrite))
		} else {
			fmt.Fprintln(w, "    no successful write after the fault")
		}
		if f.SwitchMaster >= 0 {
			if f.ClientSwitch != nil {
				verdict := "more than"
				if *f.ClientWithin100ms {
					verdict = "within"
				}
				fmt.Fprintf(w, "    client on the new master %s after +switch-master: %s switch time + 100 ms\n", signedSecs(*f.ClientSwitch), verdict)
			} else {
				fmt.Fprintln(w, "    no client switched to the new master")
			}
			if f.FirstWriteAfterSwitch >= 0 {
				fmt.Fprintf(w, "    first successful write %s after +switch-master\n", secs(f.FirstWriteAfterSwitch))
			} else {
				fmt.Fprintln(w, "    no successful write after +switch-master")
			}
		}
		if f.RejoinedAsReplica != nil {
			fmt.Fprintf(w, "    old master rejoined as a replica: %v\n", *f.RejoinedAsReplica)
		}
		if f.KilledDuringSync != nil {
			fmt.Fprintf(w, "    replica killed during its full sync: %v\n", *f.KilledDuringSync)
		}
		if sp := f.Split; sp != nil {
			fmt.Fprintf(w, "    split for %s: [%s] | [%s]\n", secs(sp.Hold), strings.Join(sp.Minority, " "), strings.Join(sp.Majority, " "))
			fmt.Fprintf(w, "    before the heal: sentinels name %s; servers %s\n", kv(sp.SentinelViews), kv(sp.ServerRoles))
		}
		if f.OldMasterWriteWindow != nil {
			if *f.OldMasterWriteWindow >= 0 {
				fmt.Fprintf(w, "    old master's write window: %s (it acknowledged %d write(s) after the fault)", secs(*f.OldMasterWriteWindow), f.OldMasterWrites)
			} else {
				fmt.Fprint(w, "    old master's write window: none (it acknowledged no write after the fault)")
			}
			if f.IsolationBound != nil && f.WithinIsolationBound != nil {
				verdict := "beyond"
				if *f.WithinIsolationBound {
					verdict = "within"
				}
				fmt.Fprintf(w, ", %s its master-isolation-timeout %s\n", verdict, secs(*f.IsolationBound))
			} else {
				fmt.Fprintln(w, ", no master-isolation-timeout: not bounded")
			}
		}
		if f.Note != "" {
			fmt.Fprintf(w, "    note: %s\n", f.Note)
		}
		if f.Error != "" {
			fmt.Fprintf(w, "    ERROR: %s\n", f.Error)
		}
	}
	if len(r.FaultStats) > 0 {
		fmt.Fprintln(w, "\nround durations (before the fault + the fault until recovered):")
		for _, st := range r.FaultStats {
			fmt.Fprintf(w, "  %-21s %3d round(s), mean %s, max %s", st.Fault, st.Rounds, secs(st.Mean), secs(st.Max))
			if st.Errors > 0 {
				fmt.Fprintf(w, ", %d with an error", st.Errors)
			}
			fmt.Fprintln(w)
		}
	}
	what := "no successful write"
	if r.Wait > 0 {
		what = fmt.Sprintf("no write acknowledged by WAIT %d", r.Wait)
	}
	fmt.Fprintf(w, "\nunavailability (%s): %s in all\n", what, secs(r.UnavailableTotal))
	if len(r.Unavailable) == 0 {
		fmt.Fprintln(w, "  none")
	}
	for _, u := range r.Unavailable {
		in := ""
		if u.Group != "" {
			in = " group " + u.Group
		}
		fmt.Fprintf(w, "  %s .. %s (%s)%s\n", secs(u.Start), secs(u.End), secs(u.Duration), in)
	}
	l := r.Loss
	fmt.Fprintf(w, "\nacknowledged writes lost: %d of %d (SET OK)", len(l.Lost), l.Checked)
	if l.Wait > 0 {
		fmt.Fprintf(w, "; with WAIT %d: %d of %d", l.Wait, l.LostWithWait, l.CheckedWithWait)
	}
	fmt.Fprintf(w, "\n  unknown-outcome writes present: %d, failed writes present: %d\n", l.UnknownPresent, l.FailedPresent)
	for i, lw := range l.Lost {
		if i == 10 {
			fmt.Fprintf(w, "  ... %d more\n", len(l.Lost)-10)
			break
		}
		fmt.Fprintf(w, "  lost %s = %q (acknowledged at %s, read %q)\n", lw.Key, lw.Want, secs(lw.Done), lw.Got)
	}
	lr := r.Linearizable
	fmt.Fprintf(w, "\nlinearizability (register, %d ops on %d keys): %s\n", lr.Ops, lr.Keys, lr.Result)
	if lr.Counterexample != "" {
		fmt.Fprint(w, lr.Counterexample)
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}

// clientLabel names client c's row: "client 3", or with several groups
// the group and the client's number in it ("mymaster-2 #1", to fit the margin).
func (r *Report) clientLabel(c int) string {
	for i := len(r.Groups) - 1; i >= 0; i-- {
		if g := r.Groups[i]; c >= g.FirstClient {
			return fmt.Sprintf("%s #%d", g.MasterName, c-g.FirstClient)
		}
	}
	return fmt.Sprintf("client %d", c)
}

// writeGroups writes one line per group of a drill over several groups:
// where its faults fell and what the drill found in it; the rest of the
// text report gives the totals.
func (r *Report) writeGroups(w io.Writer) {
	fmt.Fprintf(w, "\ngroups (%d; the figures below them are the totals):\n", len(r.Groups))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "  GROUP\tMASTER (START -> END)\tROUNDS\tWRITES OK\tLOST\tUNAVAILABLE\tLINEARIZABLE\t")
	for _, g := range r.Groups {
		rounds := "-"
		if len(g.Rounds) > 0 {
			var rs []string
			for _, n := range g.Rounds {
				rs = append(rs, fmt.Sprint(n))
			}
			rounds = strings.Join(rs, ",")
		}
		lost := fmt.Sprintf("%d of %d", len(g.Loss.Lost), g.Loss.Checked)
		if g.Loss.Wait > 0 {
			lost = fmt.Sprintf("%d of %d (WAIT %d)", g.Loss.LostWithWait, g.Loss.CheckedWithWait, g.Loss.Wait)
		}
		fmt.Fprintf(tw, "  %s\t%s -> %s\t%s\t%d\t%s\t%s\t%s (%d ops)\t\n", g.MasterName, g.InitialMaster, g.FinalMaster, rounds,
			g.Counts.WritesOK, lost, secs(g.UnavailableTotal), g.Linearizable.Result, g.Linearizable.Ops)
	}
	tw.Flush()
}

// WriteSVG draws the timeline: one row per client with each operation as a
// bar from invocation to completion (green ok, red failed, orange unknown),
// faults as shaded spans with a label, and sentinel events and the
// clients' master changes as vertical markers.
func (r *Report) WriteSVG(w io.Writer) error {
	const left, rowH, width = 90.0, 22.0, 1100.0
	total := r.Duration
	for _, op := range r.History {
		if op.Done > total {
			total = op.Done
		}
	}
	if total <= 0 {
		total = time.Second
	}
	x := func(d time.Duration) float64 { return left + width*float64(d)/float64(total) }
	// The faults' labels go above the bars, in as many rows as they need
	// not to overlap (faults close together: rolling-restart then
	// restart-master-empty); the bars start below the last row.
	faultLabels := make([]svgLabel, len(r.Faults))
	for i, f := range r.Faults {
		faultLabels[i] = svgLabel{x: x(f.Start), text0: strings.TrimSpace(f.Fault + " " + f.Group), color: "#b00", count: 1}
	}
	faultLabels = layoutLabels(faultLabels, 14, 12)
	top := 40.0
	for _, l := range faultLabels {
		top = max(top, l.y+14)
	}
	height := top + rowH*float64(r.Clients) + 120
	var b strings.Builder
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?>`+"\n")
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="11">`+"\n", left+width+20, height)
	fmt.Fprintf(&b, `<title>%s</title>`+"\n", esc(fmt.Sprintf("vigil drill %s seed %d", r.Fault, r.Seed)))
	fmt.Fprintf(&b, `<rect x="0" y="0" width="100%%" height="100%%" fill="white"/>`+"\n")
	b.WriteString("{{TOTALS}}")
	for _, f := range r.Faults {
		fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#fde2e2" opacity="0.6"><title>%s</title></rect>`+"\n",
			x(f.Start), top-10, max(1, x(f.End)-x(f.Start)), rowH*float64(r.Clients)+20,
			esc(fmt.Sprintf("round %d %s %s", f.Round, f.Fault, f.Target)))
	}
	for _, l := range faultLabels {
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" fill="%s">%s</text>`+"\n", l.x, l.y, l.color, esc(l.text()))
	}
	for c := 0; c < r.Clients; c++ {
		fmt.Fprintf(&b, `<text x="4" y="%.1f">%s</text>`+"\n", top+rowH*float64(c)+14, esc(r.clientLabel(c)))
	}
	color := map[Status]string{StatusOK: "#2a9d3a", StatusFailed: "#d62828", StatusUnknown: "#f4a100"}
	for _, op := range r.History {
		y := top + rowH*float64(op.Client) + 3
		fmt.Fprintf(&b, `<rect x="%.2f" y="%.1f" width="%.2f" height="%.1f" fill="%s"><title>%s</title></rect>`+"\n",
			x(op.Invoke), y, max(0.5, x(op.Done)-x(op.Invoke)), rowH-6, color[op.Status],
			esc(fmt.Sprintf("%s %s %s %s %s..%s %s", op.Kind, op.Key, op.Value, op.Status, secs(op.Invoke), secs(op.Done), op.Err)))
	}
	base := top + rowH*float64(r.Clients) + 10
	// Lost acknowledged writes: a red tick where each was acknowledged, on
	// its client's bar, and the window they came from shaded.
	lost := r.lostMarks()
	if len(lost) > 0 {
		lo, hi := lost[0].at, lost[0].at
		for _, l := range lost {
			lo, hi = min(lo, l.at), max(hi, l.at)
		}
		fmt.Fprintf(&b, `<rect class="lost-window" x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#d62828" opacity="0.12"><title>%s</title></rect>`+"\n",
			x(lo), top-4, max(2, x(hi)-x(lo)), rowH*float64(r.Clients)+8,
			esc(fmt.Sprintf("acknowledged writes lost: acknowledged between %s and %s", secs(lo), secs(hi))))
		for _, l := range lost {
			y := top + rowH*float64(l.client)
			fmt.Fprintf(&b, `<line class="lost" x1="%.2f" y1="%.1f" x2="%.2f" y2="%.1f" stroke="#b00000" stroke-width="1.5"><title>%s</title></line>`+"\n",
				x(l.at), y, x(l.at), y+rowH, esc(l.title))
		}
	}
	marks := append(append([]TimedEvent{}, r.Events...), r.MasterChanges...)
	var labels []svgLabel
	for _, e := range marks {
		col := eventColor(e.Type)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="1"><title>%s</title></line>`+"\n",
			x(e.At), top-10, x(e.At), base+10, col, esc(e.Type+" "+e.Payload))
		if !labelled(e.Type) {
			continue
		}
		// Several sentinels report the same event at about the same time:
		// one label, with a count.
		if n := len(labels); n > 0 && labels[n-1].text0 == e.Type && x(e.At)-labels[n-1].x < 8 {
			labels[n-1].count++
			continue
		}
		labels = append(labels, svgLabel{x: x(e.At), text0: e.Type, color: col, count: 1})
	}
	labels = layoutLabels(labels, base+18, 13)
	for _, l := range labels {
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-dasharray="2,2"/>`+"\n", l.x, base+10, l.x, l.y-9, l.color)
		fmt.Fprintf(&b, `<text class="label" x="%.1f" y="%.1f" fill="%s">%s</text>`+"\n", l.x+2, l.y, l.color, esc(l.text()))
	}
	rows := 0.0
	for _, l := range labels {
		rows = max(rows, l.y-(base+18))
	}
	height = max(height, base+rows+40)
	for s := 0.0; s <= total.Seconds(); s += tick(total) {
		px := x(time.Duration(s * float64(time.Second)))
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#999"/><text x="%.1f" y="%.1f" fill="#666">%gs</text>`+"\n",
			px, base, px, base+4, px-6, base+14, s)
	}
	fmt.Fprintf(&b, `<text x="4" y="%.1f" fill="#333">green ok, red failed, orange unknown; dark red ticks: acknowledged writes later lost (red band: their window); blue +switch-master, purple client master change, brown sdown/odown, grey failover phases; pink: fault</text>`+"\n", height-8)
	b.WriteString("</svg>\n")
	out := strings.Replace(b.String(), "{{TOTALS}}", r.totalsSVG(left), 1)
	out = strings.Replace(out, fmt.Sprintf(`height="%.0f" font-family`, top+rowH*float64(r.Clients)+120), fmt.Sprintf(`height="%.0f" font-family`, height), 1)
	_, err := io.WriteString(w, out)
	return err
}

// lostMark is a lost acknowledged write placed on its client's row.
type lostMark struct {
	client int
	at     time.Duration
	title  string
}

// lostMarks finds, for each lost write, the operation that wrote it (its
// client and acknowledgement time).
func (r *Report) lostMarks() []lostMark {
	type kv struct{ k, v string }
	writer := map[kv]Op{}
	for _, op := range r.History {
		if op.Kind == KindWrite && op.Status == StatusOK {
			writer[kv{op.Key, op.Value}] = op
		}
	}
	var out []lostMark
	for _, l := range r.Loss.Lost {
		op, ok := writer[kv{l.Key, l.Want}]
		if !ok {
			continue
		}
		out = append(out, lostMark{client: op.Client, at: l.Done,
			title: fmt.Sprintf("LOST %s = %q acknowledged at %s (read %q)", l.Key, l.Want, secs(l.Done), l.Got)})
	}
	return out
}

// totalsSVG says the verdict in the picture: lost/acknowledged writes and
// linearizability.
func (r *Report) totalsSVG(left float64) string {
	lost, checked := len(r.Loss.Lost), r.Loss.Checked
	col := "#2a9d3a"
	if lost > 0 {
		col = "#b00000"
	}
	lin := r.Linearizable.Result
	linText, linCol := "linearizable", "#2a9d3a"
	switch lin {
	case "Ok", "ok", "OK":
	case "":
		linText, linCol = "linearizability not checked", "#666"
	case "Unknown", "unknown":
		linText, linCol = "linearizability unknown (timed out)", "#f4a100"
	default:
		linText, linCol = "NOT linearizable", "#b00000"
		if r.Linearizable.Key != "" {
			linText += " (key " + r.Linearizable.Key + ")"
		}
	}
	return fmt.Sprintf(`<text class="totals" x="%.1f" y="14" font-size="13" font-weight="bold" xml:space="preserve"><tspan fill="%s">acknowledged writes lost: %d of %d</tspan><tspan fill="#333"> · </tspan><tspan fill="%s">%s</tspan></text>`+"\n",
		left, col, lost, checked, linCol, esc(linText))
}

// failoverPhaseEvents are the sentinel events that mark a failover's
// phases (SENTINEL TIMELINE's: sentinel/timeline.go), labelled on the
// timeline, with the clients' master changes.
var failoverPhaseEvents = map[string]bool{
	"+sdown": true, "+odown": true, "+try-failover": true, "+elected-leader": true,
	"+selected-slave": true, "+promoted-slave": true, "+failover-end": true,
	"+failover-end-for-timeout": true, "+switch-master": true, "+convert-to-slave": true,
	"-odown": true, "-sdown": true,
}

func labelled(typ string) bool {
	return failoverPhaseEvents[typ] || strings.HasPrefix(typ, "client:") || strings.HasPrefix(typ, "-failover-abort")
}

func eventColor(typ string) string {
	switch {
	case typ == "+switch-master":
		return "#1d4ed8"
	case strings.HasPrefix(typ, "client:"):
		return "#7c3aed"
	case strings.Contains(typ, "sdown") || strings.Contains(typ, "odown"):
		return "#c2410c"
	case strings.HasPrefix(typ, "-failover-abort"):
		return "#b00000"
	}
	return "#555"
}

// svgLabel is an event label: anchored at x, drawn at baseline y (set by
// layoutLabels).
type svgLabel struct {
	x, y  float64
	text0 string
	color string
	count int
}

func (l svgLabel) text() string {
	if l.count > 1 {
		return fmt.Sprintf("%s ×%d", l.text0, l.count)
	}
	return l.text0
}

// labelCharW is the width assumed per character (11 px sans-serif).
const labelCharW = 6.5

// box is the label's extent: [x0, x1] x [y-h+2, y+2].
func (l svgLabel) box(h float64) (x0, y0, x1, y1 float64) {
	return l.x, l.y - h + 2, l.x + 2 + labelCharW*float64(len([]rune(l.text()))), l.y + 2
}

// layoutLabels stacks labels in rows from y0 (rowH apart): each goes in
// the first row where it overlaps no label already placed there.
func layoutLabels(labels []svgLabel, y0, rowH float64) []svgLabel {
	sort.SliceStable(labels, func(i, j int) bool { return labels[i].x < labels[j].x })
	var rowEnd []float64 // right edge of each row's last label
	for i := range labels {
		l := &labels[i]
		_, _, w, _ := svgLabel{x: 0, text0: l.text0, count: l.count}.box(rowH)
		row := 0
		for row < len(rowEnd) && rowEnd[row]+3 > l.x {
			row++
		}
		if row == len(rowEnd) {
			rowEnd = append(rowEnd, 0)
		}
		rowEnd[row] = l.x + w
		l.y = y0 + rowH*float64(row+1)
	}
	return labels
}

func tick(total time.Duration) float64 {
	for _, t := range []float64{1, 2, 5, 10, 20, 30, 60, 120, 300, 600} {
		if total.Seconds()/t <= 20 {
			return t
		}
	}
	return 1200
}

func esc(s string) string { return html.EscapeString(s) }

// kv renders a map as "k=v, k=v" in key order ("-" for an empty value).
func kv(m map[string]string) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteString(", ")
		}
		v := m[k]
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(&b, "%s=%s", k, v)
	}
	return b.String()
}
