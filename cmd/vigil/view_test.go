package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/deploy"
)

func snapshot() *deploy.Status {
	return &deploy.Status{
		Time: time.Unix(0, 0), MasterName: "mymaster", MasterAddr: "127.0.0.1:6379", Healthy: true,
		Servers: []deploy.ServerStatus{
			{Addr: "127.0.0.1:6379", Role: "master", Pid: 10, Offset: 100, OnlineReplicas: 1},
			{Addr: "127.0.0.1:6380", Role: "replica", Pid: 11, Offset: 90, Lag: 10, LinkStatus: "up", MasterAddr: "127.0.0.1:6379"},
		},
		Sentinels: []deploy.SentinelStatus{{Addr: "127.0.0.1:26379", Pid: 12, MasterAddr: "127.0.0.1:6379", Flags: "master", Quorum: 2, NumReplicas: 1}},
	}
}

func TestJSONLines(t *testing.T) {
	var out bytes.Buffer
	v := newView(&out, true, "vigil up")
	v.status(snapshot())
	v.event(deploy.Event{Time: time.Unix(1, 0), Sentinel: "127.0.0.1:26379", Type: "+switch-master", Payload: "mymaster 127.0.0.1 6379 127.0.0.1 6380"})
	ls := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(ls) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(ls), out.String())
	}
	var st struct {
		Type       string `json:"type"`
		MasterAddr string `json:"master_addr"`
		Servers    []struct {
			Pid  int    `json:"pid"`
			Lag  int64  `json:"lag"`
			Role string `json:"role"`
		} `json:"servers"`
	}
	if err := json.Unmarshal([]byte(ls[0]), &st); err != nil {
		t.Fatal(err)
	}
	if st.Type != "status" || st.MasterAddr != "127.0.0.1:6379" || len(st.Servers) != 2 || st.Servers[1].Lag != 10 || st.Servers[0].Pid != 10 {
		t.Errorf("status line %s", ls[0])
	}
	var ev map[string]any
	if err := json.Unmarshal([]byte(ls[1]), &ev); err != nil {
		t.Fatal(err)
	}
	if ev["type"] != "event" || ev["event"] != "+switch-master" || ev["payload"] != "mymaster 127.0.0.1 6379 127.0.0.1 6380" {
		t.Errorf("event line %s", ls[1])
	}
}

func TestPlainModePrintsChangesAndEvents(t *testing.T) {
	var out bytes.Buffer
	v := newView(&out, false, "vigil up")
	if v.tty {
		t.Fatal("a buffer is not a terminal")
	}
	st := snapshot()
	v.status(st)
	first := out.String()
	for _, want := range []string{`master "mymaster" at 127.0.0.1:6379  healthy`, "127.0.0.1:6380", "up to 127.0.0.1:6379", "127.0.0.1:26379"} {
		if !strings.Contains(first, want) {
			t.Errorf("view lacks %q:\n%s", want, first)
		}
	}
	st.Servers[0].Offset, st.Servers[1].Offset = 200, 200 // offsets alone: not printed again
	v.status(st)
	if out.String() != first {
		t.Errorf("printed again for an offset change:\n%s", out.String()[len(first):])
	}
	st.MasterAddr, st.Healthy = "127.0.0.1:6380", false
	v.status(st)
	if !strings.Contains(out.String()[len(first):], "NOT healthy") {
		t.Errorf("change of master not printed")
	}
	v.event(deploy.Event{Time: time.Unix(1, 0), Type: "+sdown", Payload: "master mymaster 127.0.0.1 6379", Sentinel: "127.0.0.1:26379"})
	if !strings.Contains(out.String(), "+sdown") {
		t.Error("event not printed")
	}
}

func TestSeveralGroups(t *testing.T) {
	a, b := snapshot(), snapshot()
	b.MasterName, b.MasterAddr, b.Healthy = "mymaster-2", "127.0.0.1:6382", false
	var out bytes.Buffer
	newView(&out, false, "vigil up").statuses([]*deploy.Status{a, b})
	text := out.String()
	for _, want := range []string{"vigil up  2 groups, 1 healthy", `master "mymaster" at 127.0.0.1:6379  healthy`, `master "mymaster-2" at 127.0.0.1:6382  NOT healthy`} {
		if !strings.Contains(text, want) {
			t.Errorf("view lacks %q:\n%s", want, text)
		}
	}
	out.Reset()
	newView(&out, true, "vigil up").statuses([]*deploy.Status{a, b})
	ls := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(ls) != 2 || !strings.Contains(ls[0], `"master_name":"mymaster"`) || !strings.Contains(ls[1], `"master_name":"mymaster-2"`) {
		t.Errorf("JSON lines, one status per group:\n%s", out.String())
	}
	// One group: no summary line, as before groups existed.
	out.Reset()
	newView(&out, false, "vigil up").statuses([]*deploy.Status{a})
	if strings.Contains(out.String(), "groups") {
		t.Errorf("one group printed a groups line:\n%s", out.String())
	}
}
