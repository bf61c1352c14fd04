package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net"
	"strconv"
	"strings"
	"testing"
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
