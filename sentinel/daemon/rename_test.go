package daemon

import (
	"bufio"
	"fmt"
	"net"
	"strconv"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

// TestRenameCommand: rename-command applies to the sentinel's own command
// table as in redis-sentinel 7.0.15, whose replies to the same config
// (`rename-command sentinel mysentinel`, `rename-command role ""`) these are.
func TestRenameCommand(t *testing.T) {
	dead := freePort(t)
	port, _ := startSentinel(t, fmt.Sprintf("rename-command sentinel mysentinel\nrename-command role \"\"\n"+
		"sentinel monitor m 127.0.0.1 %d 2\n", dead))
	conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	p := strconv.Itoa(dead)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"sentinel", "myid"}, "-ERR unknown command 'sentinel', with args beginning with: 'myid' \r\n"},
		{[]string{"mysentinel", "get-master-addr-by-name", "m"}, "*2\r\n$9\r\n127.0.0.1\r\n$" + strconv.Itoa(len(p)) + "\r\n" + p + "\r\n"},
		{[]string{"MYSENTINEL", "get-master-addr-by-name", "m"}, "*2\r\n$9\r\n127.0.0.1\r\n$" + strconv.Itoa(len(p)) + "\r\n" + p + "\r\n"},
		{[]string{"role"}, "-ERR unknown command 'role', with args beginning with: \r\n"},
		{[]string{"mysentinel"}, "-ERR wrong number of arguments for 'sentinel' command\r\n"},
		{[]string{"command", "getkeys", "mysentinel", "x"}, "-ERR Invalid command specified\r\n"},
		{[]string{"command", "getkeys", "role", "x"}, "-ERR Invalid command specified\r\n"},
		{[]string{"ping"}, "+PONG\r\n"},
	} {
		conn.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := conn.Write(resp.AppendCommandStrings(nil, tt.args...)); err != nil {
			t.Fatal(err)
		}
		got, err := readFrame(br)
		if err != nil {
			t.Fatalf("%v: %v", tt.args, err)
		}
		if string(got) != tt.want {
			t.Errorf("%v:\n got %q\nwant %q", tt.args, got, tt.want)
		}
	}
}
