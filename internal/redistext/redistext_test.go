package redistext

import (
	"runtime"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/resp"
)

func TestUnknownCommand(t *testing.T) {
	got := UnknownCommand([]string{"foo", "a", "b"})
	if want := "ERR unknown command 'foo', with args beginning with: 'a' 'b' "; got != want {
		t.Fatalf("%q", got)
	}
	if got2 := UnknownCommand([][]byte{[]byte("foo"), []byte("a"), []byte("b")}); got2 != got {
		t.Fatalf("bytes %q", got2)
	}
	long := strings.Repeat("x", 300)
	got = UnknownCommand([]string{long, long, "y"})
	if want := "ERR unknown command '" + long[:128] + "', with args beginning with: '" + long[:128] + "' "; got != want {
		t.Fatalf("long: %q", got)
	}
}

func TestValidClientName(t *testing.T) {
	for name, ok := range map[string]bool{"": true, "worker-1": true, "a b": false, "a\n": false, "é": false, "~!": true} {
		if ValidClientName(name) != ok || ValidClientName([]byte(name)) != ok {
			t.Errorf("%q: want %v", name, ok)
		}
	}
}

func TestHelp(t *testing.T) {
	var w resp.Writer
	w.Proto = 2
	Help(&w, "CLIENT", []string{"ID", "    Return the ID."})
	want := "*5\r\n+CLIENT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:\r\n+ID\r\n+    Return the ID.\r\n+HELP\r\n+    Prints this help.\r\n"
	if string(w.B) != want {
		t.Fatalf("%q", w.B)
	}
	if UnknownSubcommand("x", "CLIENT") != "ERR unknown subcommand 'x'. Try CLIENT HELP." {
		t.Fatal(UnknownSubcommand("x", "CLIENT"))
	}
}

func TestPing(t *testing.T) {
	for _, c := range []struct {
		args   []string
		pubsub bool
		want   string
	}{
		{[]string{"ping"}, false, "+PONG\r\n"},
		{[]string{"ping", "hi"}, false, "$2\r\nhi\r\n"},
		{[]string{"ping"}, true, "*2\r\n$4\r\npong\r\n$0\r\n\r\n"},
		{[]string{"ping", "hi"}, true, "*2\r\n$4\r\npong\r\n$2\r\nhi\r\n"},
		{[]string{"ping", "a", "b"}, false, "-ERR wrong number of arguments for 'ping' command\r\n"},
	} {
		var w resp.Writer
		w.Proto = 2
		Ping(&w, c.pubsub, c.args)
		var wb resp.Writer
		wb.Proto = 2
		bargs := make([][]byte, len(c.args))
		for i, a := range c.args {
			bargs[i] = []byte(a)
		}
		Ping(&wb, c.pubsub, bargs)
		if string(w.B) != c.want || string(wb.B) != c.want {
			t.Errorf("%v %v: %q / %q", c.args, c.pubsub, w.B, wb.B)
		}
	}
}

func TestHello(t *testing.T) {
	w := resp.Writer{Proto: 3}
	Hello(&w, "7.0.15", 9, "standalone", "master")
	want := "%7\r\n$6\r\nserver\r\n$5\r\nredis\r\n$7\r\nversion\r\n$6\r\n7.0.15\r\n$5\r\nproto\r\n:3\r\n$2\r\nid\r\n:9\r\n" +
		"$4\r\nmode\r\n$10\r\nstandalone\r\n$4\r\nrole\r\n$6\r\nmaster\r\n$7\r\nmodules\r\n*0\r\n"
	if string(w.B) != want {
		t.Fatalf("%q", w.B)
	}
	w = resp.Writer{Proto: 2}
	Hello(&w, "7.0.15", 9, "sentinel", "")
	if !strings.HasPrefix(string(w.B), "*12\r\n") || strings.Contains(string(w.B), "role") {
		t.Fatalf("%q", w.B)
	}
}

func TestHostInfo(t *testing.T) {
	osName, buildID := HostInfo()
	if len(strings.Fields(osName)) < 2 || buildID == "" {
		t.Fatalf("os %q build id %q", osName, buildID)
	}
	if runtime.GOOS == "linux" && (!strings.HasPrefix(osName, "Linux ") || MultiplexingAPI() != "epoll") {
		t.Fatalf("os %q, api %s", osName, MultiplexingAPI())
	}
}
