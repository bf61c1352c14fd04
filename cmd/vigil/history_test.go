package main

import (
	"bytes"
	"strings"
	"testing"
)

// canned is a SENTINEL TIMELINE reply (RESP2) with one failover.
var canned = "*1\r\n*20\r\n" +
	"$6\r\nmaster\r\n$3\r\nmym\r\n$5\r\nepoch\r\n$1\r\n3\r\n$6\r\nleader\r\n$10\r\nabcdef0123\r\n" +
	"$6\r\nresult\r\n$12\r\nfailover-end\r\n$16\r\nselected-replica\r\n$14\r\n127.0.0.1:6380\r\n" +
	"$8\r\nstart-ms\r\n$13\r\n1700000000000\r\n$6\r\nend-ms\r\n$13\r\n1700000001500\r\n" +
	"$11\r\nduration-ms\r\n$4\r\n1500\r\n" +
	"$6\r\nphases\r\n*1\r\n*8\r\n$4\r\nname\r\n$5\r\nsdown\r\n$7\r\ntime-ms\r\n$13\r\n1700000000000\r\n" +
	"$14\r\nsince-start-ms\r\n$1\r\n0\r\n$6\r\ndetail\r\n$0\r\n\r\n" +
	"$8\r\nrejected\r\n*1\r\n*4\r\n$7\r\nreplica\r\n$14\r\n127.0.0.1:6381\r\n$6\r\nreason\r\n$12\r\ninfo-too-old\r\n"

// vigil status --history prints what SENTINEL TIMELINE answers.
func TestStatusHistory(t *testing.T) {
	addr := fakeSentinel(t, func(req string) string {
		if strings.Contains(strings.ToUpper(req), "TIMELINE") {
			return canned
		}
		return "-ERR No such master with that name\r\n"
	})
	var out, errb bytes.Buffer
	if code := run([]string{"vigil", "status", "--history", "--sentinel", addr, "--master", "mym"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"1 failover(s)", "epoch 3", "leader abcdef01", "result failover-end", "(1500 ms)",
		"sdown", "rejected 127.0.0.1:6381: info-too-old"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
}
