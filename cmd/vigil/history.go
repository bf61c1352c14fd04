package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// historyRecord is one entry of SENTINEL TIMELINE (vigil-sentinel).
type historyRecord struct {
	Fields   map[string]string   `json:"fields"`
	Phases   []map[string]string `json:"phases"`
	Rejected []map[string]string `json:"rejected,omitempty"`
}

// flatMap turns a RESP2 flat field list into a map of its string values
// (nested arrays are returned by name in nested).
func flatMap(v any) (map[string]string, map[string][]any) {
	l, _ := v.([]any)
	out, nested := map[string]string{}, map[string][]any{}
	for i := 0; i+1 < len(l); i += 2 {
		k, _ := l[i].(string)
		switch x := l[i+1].(type) {
		case string:
			out[k] = x
		case []any:
			nested[k] = x
		}
	}
	return out, nested
}

// parseTimeline reads the reply of SENTINEL TIMELINE (RESP2).
func parseTimeline(v []any) []historyRecord {
	var recs []historyRecord
	for _, e := range v {
		f, nested := flatMap(e)
		r := historyRecord{Fields: f}
		for _, p := range nested["phases"] {
			m, _ := flatMap(p)
			r.Phases = append(r.Phases, m)
		}
		for _, p := range nested["rejected"] {
			m, _ := flatMap(p)
			r.Rejected = append(r.Rejected, m)
		}
		recs = append(recs, r)
	}
	return recs
}

// fetchHistory asks one sentinel for SENTINEL TIMELINE master.
func fetchHistory(ctx context.Context, addr, master string) ([]historyRecord, error) {
	cl := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: 2 * time.Second})
	defer cl.Close()
	v, err := cl.Do(ctx, "SENTINEL", "TIMELINE", master).Slice()
	if err != nil {
		return nil, err
	}
	return parseTimeline(v), nil
}

func msTime(s string) string {
	ms, err := strconv.ParseInt(s, 10, 64)
	if err != nil || ms == 0 {
		return "-"
	}
	return time.UnixMilli(ms).UTC().Format("15:04:05.000")
}

// printHistory writes one sentinel's failovers, oldest first.
func printHistory(w io.Writer, addr string, recs []historyRecord, err error, asJSON bool) {
	if asJSON {
		line := map[string]any{"sentinel": addr, "failovers": recs}
		if err != nil {
			line["error"] = err.Error()
		}
		b, _ := json.Marshal(line)
		fmt.Fprintln(w, string(b))
		return
	}
	if err != nil {
		fmt.Fprintf(w, "sentinel %s: %v\n", addr, err)
		return
	}
	fmt.Fprintf(w, "sentinel %s: %d failover(s)\n", addr, len(recs))
	for i, r := range recs {
		f := r.Fields
		fmt.Fprintf(w, "  #%d %s  epoch %s  leader %s  result %s", i+1, msTime(f["start-ms"]), f["epoch"], short(f["leader"]), f["result"])
		if d := f["duration-ms"]; d != "" {
			fmt.Fprintf(w, "  (%s ms)", d)
		}
		fmt.Fprintln(w)
		for _, p := range r.Phases {
			fmt.Fprintf(w, "     %-30s %s  +%6s ms", p["name"], msTime(p["time-ms"]), p["since-start-ms"])
			if p["detail"] != "" {
				fmt.Fprintf(w, "  %s", p["detail"])
			}
			fmt.Fprintln(w)
		}
		for _, x := range r.Rejected {
			fmt.Fprintf(w, "     rejected %s: %s\n", x["replica"], x["reason"])
		}
	}
}

func short(id string) string {
	if len(id) > 8 {
		return id[:8]
	}
	if id == "" {
		return "-"
	}
	return id
}

// historyTargets lists the sentinel addresses to ask: those given and those
// they know.
func historyTargets(given, discovered []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, a := range append(append([]string(nil), given...), discovered...) {
		if a = strings.TrimSpace(a); a != "" && !seen[a] {
			seen[a] = true
			out = append(out, a)
		}
	}
	return out
}
