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

// TestFailoverCoordinatedArgs: SENTINEL FAILOVER <name> [COORDINATED];
// other extra arguments get redis-sentinel's arity error, and a
// coordinated failover of an unreachable master is refused.
func TestFailoverCoordinatedArgs(t *testing.T) {
	dead := freePort(t)
	port, _ := startSentinel(t, fmt.Sprintf("sentinel monitor m 127.0.0.1 %d 2\n", dead))
	conn, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(port))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	br := bufio.NewReader(conn)
	for _, tt := range []struct {
		args []string
		want string
	}{
		{[]string{"sentinel", "failover", "m", "bogus"}, "-ERR wrong number of arguments for 'sentinel|failover' command\r\n"},
		{[]string{"sentinel", "failover", "m", "coordinated", "x"}, "-ERR wrong number of arguments for 'sentinel|failover' command\r\n"},
		{[]string{"sentinel", "failover", "nope", "COORDINATED"}, "-ERR No such master with that name\r\n"},
		{[]string{"sentinel", "failover", "m"}, "-NOGOODSLAVE No suitable replica to promote\r\n"},
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
