package client

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakeNode is a tiny RESP2 server for unit tests: it answers HELLO with an
// error (go-redis falls back to RESP2), and hands every other command to
// handle, which returns the raw reply. Subscribers get push messages from
// publish.
type fakeNode struct {
	ln     net.Listener
	handle func(args []string) string
	silent bool // never answer anything, not even HELLO

	mu    sync.Mutex
	subs  []net.Conn
	conns []net.Conn
	log   [][]string
}

func newFake(t *testing.T, handle func(args []string) string) *fakeNode {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeNode{ln: ln, handle: handle}
	go f.serve()
	t.Cleanup(f.close)
	return f
}

func (f *fakeNode) setHandle(wrap func(func([]string) string) func([]string) string) {
	f.mu.Lock()
	f.handle = wrap(f.handle)
	f.mu.Unlock()
}

func (f *fakeNode) addr() string { return f.ln.Addr().String() }

func (f *fakeNode) hostPort() (string, string) {
	h, p, _ := net.SplitHostPort(f.addr())
	return h, p
}

func (f *fakeNode) close() {
	_ = f.ln.Close()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.conns {
		_ = c.Close()
	}
}

func (f *fakeNode) commands() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.log...)
}

func (f *fakeNode) count(name string) int {
	n := 0
	for _, c := range f.commands() {
		if strings.EqualFold(strings.Join(c, " "), name) || (len(c) > 0 && strings.EqualFold(c[0], name)) {
			n++
		}
	}
	return n
}

func (f *fakeNode) publish(channel, payload string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.subs {
		_, _ = io.WriteString(c, arr(bulk("message"), bulk(channel), bulk(payload)))
	}
	return len(f.subs)
}

func (f *fakeNode) serve() {
	for {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.mu.Lock()
		f.conns = append(f.conns, c)
		f.mu.Unlock()
		go f.conn(c)
	}
}

func (f *fakeNode) conn(c net.Conn) {
	defer c.Close()
	r := bufio.NewReader(c)
	for {
		args, err := readCommand(r)
		if err != nil {
			return
		}
		f.mu.Lock()
		f.log = append(f.log, args)
		f.mu.Unlock()
		if f.silent {
			continue
		}
		var reply string
		switch strings.ToUpper(args[0]) {
		case "HELLO":
			reply = "-ERR unknown command 'HELLO'\r\n"
		case "SUBSCRIBE":
			f.mu.Lock()
			f.subs = append(f.subs, c)
			f.mu.Unlock()
			for i, ch := range args[1:] {
				reply += arr(bulk("subscribe"), bulk(ch), ":"+strconv.Itoa(i+1)+"\r\n")
			}
		case "PING":
			reply = "+PONG\r\n"
		case "CLIENT", "SELECT", "AUTH":
			reply = "+OK\r\n"
		default:
			f.mu.Lock()
			h := f.handle
			f.mu.Unlock()
			reply = h(args)
		}
		if reply == "" { // never answer
			continue
		}
		if _, err := io.WriteString(c, reply); err != nil {
			return
		}
	}
}

func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 || line[0] != '*' {
		return nil, fmt.Errorf("not an array: %q", line)
	}
	n, err := strconv.Atoi(strings.TrimSpace(line[1:]))
	if err != nil || n <= 0 || n > 1024 {
		return nil, fmt.Errorf("bad array length %q", line)
	}
	args := make([]string, n)
	for i := range args {
		line, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		l, err := strconv.Atoi(strings.TrimSpace(line[1:]))
		if err != nil || l < 0 || l > 1<<20 {
			return nil, fmt.Errorf("bad bulk length %q", line)
		}
		buf := make([]byte, l+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, err
		}
		args[i] = string(buf[:l])
	}
	return args, nil
}

func bulk(s string) string { return "$" + strconv.Itoa(len(s)) + "\r\n" + s + "\r\n" }

func arr(items ...string) string {
	return "*" + strconv.Itoa(len(items)) + "\r\n" + strings.Join(items, "")
}

// flat is a RESP2 map (flat array of bulk strings).
func flat(kv ...string) string {
	var items []string
	for _, s := range kv {
		items = append(items, bulk(s))
	}
	return arr(items...)
}

// dataNode is a fake data node with a fixed ROLE that stores SET/GET.
func dataNode(t *testing.T, role string) *fakeNode {
	var mu sync.Mutex
	kv := map[string]string{}
	return newFake(t, func(args []string) string {
		switch strings.ToUpper(args[0]) {
		case "ROLE":
			if role == "master" {
				return arr(bulk("master"), ":0\r\n", "*0\r\n")
			}
			return arr(bulk("slave"), bulk("127.0.0.1"), ":1\r\n", bulk("connected"), ":0\r\n")
		case "SET":
			if role != "master" {
				return "-READONLY You can't write against a read only replica.\r\n"
			}
			mu.Lock()
			kv[args[1]] = args[2]
			mu.Unlock()
			return "+OK\r\n"
		case "GET":
			mu.Lock()
			v, ok := kv[args[1]]
			mu.Unlock()
			if !ok {
				return "$-1\r\n"
			}
			return bulk(v)
		}
		return "-ERR unknown command '" + args[0] + "'\r\n"
	})
}

// sentinelNode is a fake sentinel answering get-master-addr-by-name with
// *master (nil: a null reply) and SENTINEL replicas with *replicas.
type sentinelState struct {
	mu       sync.Mutex
	master   *fakeNode
	replicas []map[string]string
	others   []string
}

func sentinelNode(t *testing.T, st *sentinelState) *fakeNode {
	return newFake(t, func(args []string) string {
		st.mu.Lock()
		defer st.mu.Unlock()
		if strings.ToUpper(args[0]) != "SENTINEL" || len(args) < 2 {
			return "-ERR unknown command\r\n"
		}
		switch strings.ToLower(args[1]) {
		case "get-master-addr-by-name":
			if st.master == nil {
				return "*-1\r\n"
			}
			h, p := st.master.hostPort()
			return arr(bulk(h), bulk(p))
		case "sentinels":
			var items []string
			for _, o := range st.others {
				h, p, _ := net.SplitHostPort(o)
				items = append(items, flat("name", o, "ip", h, "port", p, "flags", "sentinel"))
			}
			return arr(items...)
		case "replicas", "slaves":
			var items []string
			for _, r := range st.replicas {
				var kv []string
				for k, v := range r {
					kv = append(kv, k, v)
				}
				items = append(items, flat(kv...))
			}
			return arr(items...)
		}
		return "-ERR unknown subcommand\r\n"
	})
}

// silentNode accepts connections and never answers.
func silentNode(t *testing.T) *fakeNode {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeNode{ln: ln, silent: true}
	go f.serve()
	t.Cleanup(f.close)
	return f
}
