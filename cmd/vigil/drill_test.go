package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/urfave/cli/v2"

	"github.com/vigil-kv/vigil/internal/drill"
)

// Off a terminal the drill's stderr is JSON lines only (the final error
// aside): what it set up comes as {"type":"info"} lines, not plain text.
// The busy port makes it stop right after the partition note, before any
// node starts.
func TestDrillNotesAreJSONLines(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	busy := ln.Addr().(*net.TCPAddr).Port
	var out, errb bytes.Buffer
	code := run([]string{"vigil", "drill", "--fault", "partition-master", "--net", "proxy", "--json",
		"--dir", t.TempDir(), "--base-port", strconv.Itoa(busy), "--sentinel-base-port", strconv.Itoa(busy + 10)}, &out, &errb)
	if code == 0 {
		t.Fatalf("drill on a busy port exited 0; stderr:\n%s", errb.String())
	}
	infos := 0
	sc := bufio.NewScanner(&errb)
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "vigil: ") {
			if !strings.Contains(line, "port "+strconv.Itoa(busy)) || !strings.Contains(line, "--base-port") {
				t.Errorf("error %q should name port %d and --base-port", line, busy)
			}
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Errorf("stderr line is not JSON: %q", line)
			continue
		}
		if m["type"] == "info" {
			infos++
		}
	}
	if infos == 0 {
		t.Errorf("no info line about the partitions; stderr:\n%s", errb.String())
	}
}

// --expect-no-loss: status 3 exactly when an acknowledged write was lost
// (with --wait, acknowledged means by WAIT); run makes the ExitCoder the
// process status.
func TestDrillExitExpectNoLoss(t *testing.T) {
	lost := []drill.LostWrite{{Key: "k", Want: "v"}}
	for _, tc := range []struct {
		name   string
		loss   drill.LossReport
		expect bool
		want   int
	}{
		{"no loss", drill.LossReport{Checked: 10, Lost: []drill.LostWrite{}}, true, 0},
		{"loss", drill.LossReport{Checked: 10, Lost: lost}, true, 3},
		{"loss without the flag", drill.LossReport{Checked: 10, Lost: lost}, false, 0},
		{"lost but not acknowledged by WAIT", drill.LossReport{Checked: 10, Lost: lost, Wait: 1, CheckedWithWait: 5}, true, 0},
		{"lost after WAIT", drill.LossReport{Checked: 10, Lost: lost, Wait: 1, CheckedWithWait: 5, LostWithWait: 1}, true, 3},
	} {
		err := drillExit(&drill.Report{Loss: tc.loss}, tc.expect)
		code := 0
		if err != nil {
			ec, ok := err.(cli.ExitCoder)
			if !ok {
				t.Errorf("%s: error %v is not an exit code", tc.name, err)
				continue
			}
			code = ec.ExitCode()
			if !strings.Contains(err.Error(), "1 acknowledged write(s) lost (--expect-no-loss)") {
				t.Errorf("%s: message %q", tc.name, err)
			}
		}
		if code != tc.want {
			t.Errorf("%s: exit status %d, want %d", tc.name, code, tc.want)
		}
	}
}

// A split needs network namespaces: --net proxy is refused before any node
// starts, for --fault split and for a --fault all whose schedule draws one.
func TestDrillRefusesSplitWithoutNetns(t *testing.T) {
	for _, args := range [][]string{
		{"--fault", "split"},
		{"--fault", "all", "--rounds", "8", "--seed", "1036"}, // round 2 draws split
	} {
		dir := t.TempDir()
		var out, errb bytes.Buffer
		code := run(append([]string{"vigil", "drill", "--net", "proxy", "--json", "--dir", dir}, args...), &out, &errb)
		if code == 0 {
			t.Fatalf("%v: exited 0", args)
		}
		if msg := errb.String(); !strings.Contains(msg, "needs --net netns") || !strings.Contains(msg, "split") {
			t.Errorf("%v: stderr %q should say split needs --net netns", args, msg)
		}
		if ents, _ := os.ReadDir(dir); len(ents) != 0 {
			t.Errorf("%v: the drill wrote %d entries under --dir before refusing", args, len(ents))
		}
	}
	if got := splitRound("all", 8, 1036, 1); !strings.Contains(got, "round 2") {
		t.Errorf("splitRound(all, 8, 1036) = %q, want round 2", got)
	}
	if got := splitRound("kill-master", 8, 1036, 1); got != "" {
		t.Errorf("kill-master: %q", got)
	}
}
