package replication

import (
	"testing"

	"github.com/vigil-kv/vigil/internal/resp"
)

func TestRole(t *testing.T) {
	var w resp.Writer
	WriteRoleMaster(&w, 541, []InfoReplica{
		{IP: "127.0.0.1", Port: 6380, State: ReplicaOnline, Offset: 541},
		{IP: "127.0.0.1", Port: 6381, State: ReplicaWaitBgsaveStart},
	})
	want := "*3\r\n$6\r\nmaster\r\n:541\r\n*1\r\n*3\r\n$9\r\n127.0.0.1\r\n$4\r\n6380\r\n$3\r\n541\r\n"
	if string(w.B) != want {
		t.Fatalf("%q", w.B)
	}
	w.Reset()
	WriteRoleReplica(&w, "10.0.0.1", 6379, StateReceivePsyncReply, 99, false)
	if want := "*5\r\n$5\r\nslave\r\n$8\r\n10.0.0.1\r\n:6379\r\n$9\r\nhandshake\r\n:-1\r\n"; string(w.B) != want {
		t.Fatalf("%q", w.B)
	}
	w.Reset()
	WriteRoleReplica(&w, "10.0.0.1", 6379, StateConnected, 99, true)
	if want := "*5\r\n$5\r\nslave\r\n$8\r\n10.0.0.1\r\n:6379\r\n$9\r\nconnected\r\n:99\r\n"; string(w.B) != want {
		t.Fatalf("%q", w.B)
	}
}
