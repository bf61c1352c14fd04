package server

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"
)

// FuzzCommands runs random command lines through the server's real
// dispatch (Server.process: lookup, arity, ACL, MULTI, the handler, the
// write path) over a keyspace prepopulated with every type and encoding
// and keys with TTLs (cmdFuzzSetup), checking after every command that
// nothing panicked, the execution unit is closed, and the keyspace passes
// keyspace.Check (no empty aggregate, expires index consistent, encodings
// within their thresholds, internal counts agreeing).
//
// Input: commands separated by '\n', arguments by ' '. A command whose
// first argument is one or two bytes, the first >= 0x80, is the command
// table's entry (b0-0x80 + 128*b1) mod its size (a subcommand with its
// container's name before it), so mutations reach every command;
// otherwise the first argument is the name as sent. The fake clock advances 7ms after each
// command, so the short TTLs expire during a run.
//
// Excluded (cmdFuzzExcluded says why for each): commands that block the
// process or stop it (SHUTDOWN, DEBUG: SLEEP, SEGFAULT, PANIC, RELOAD...),
// run unbounded user code (EVAL*, FCALL*, FUNCTION: a script may loop
// forever), touch the network or other processes (REPLICAOF, SLAVEOF,
// SYNC, PSYNC, FAILOVER, REPLCONF), start background work that outlives
// the input (BGSAVE, BGREWRITEAOF, FLUSHALL/FLUSHDB ASYNC), put the client
// in push mode (MONITOR, [P|S]SUBSCRIBE) or change the thresholds Check
// relies on (CONFIG SET). Blocking commands (BLPOP with timeout 0, WAIT,
// CLIENT PAUSE...) are run: the handler returns and the client stays
// blocked, so the fuzzer continues on a new client. *RANDMEMBER and
// HRANDFIELD with a negative count below -1000 are skipped (Redis, too,
// would build a reply of that many elements), and proto-max-bulk-len is
// 1mb so SETRANGE/SETBIT/APPEND allocate at most that.
func FuzzCommands(f *testing.F) {
	for _, seed := range cmdFuzzSeeds {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 4096 {
			return
		}
		runCmdFuzz(t, data)
	})
}

// cmdFuzzSeeds are in-code seeds besides testdata/fuzz/FuzzCommands.
var cmdFuzzSeeds = []string{
	"SORT l\nSORT s BY nosort STORE d\nSORT z BY w_* GET # GET h->f LIMIT 0 2 ALPHA DESC",
	"RPUSH l a b\nLPOP l 9\nLLEN l\nSET str x\nAPPEND str y",
	"ZADD z 1 a\nZREM z a b c 1 2 3\nZREMRANGEBYRANK zb 0 -1\nZPOPMIN z 100",
	"HDEL h f g\nHDEL hb f\nSREM s 1 2 3\nSPOP sb 100\nEXISTS s sb",
	"MULTI\nSET a 1\nINCR a\nEXEC\nSELECT 1\nSWAPDB 0 1\nMOVE k1 0",
	"EXPIRE l 0\nPEXPIRE h 1\nPERSIST t\nSET t v KEEPTTL\nGETEX t PERSIST",
	"BLPOP nolist 0\nRPUSH nolist x\nLRANGE nolist 0 -1",
	"COPY zb zc\nRENAME zc z\nRESTORE r 0 x\nDUMP zb\nOBJECT ENCODING zb",
	"SMOVE sb s a\nSINTERSTORE s sb s\nSUNIONSTORE d s sb\nSDIFFSTORE d s s",
	"ZUNIONSTORE d 2 z zb WEIGHTS 1 2\nZRANGESTORE d z 0 -1\nZINTERSTORE d 1 z",
	"PFADD hll a b c\nPFMERGE hll hll str\nPFCOUNT hll\nSETRANGE hll 3 x\nPFCOUNT hll",
	"LMOVE l l2 LEFT RIGHT\nLMPOP 2 l l2 LEFT COUNT 100\nLINSERT l2 BEFORE a b",
	"HINCRBYFLOAT h f 1.5\nHSETNX h g v\nHRANDFIELD hb -5 WITHVALUES",
	"\x80\n\x81 l\n\x82 s a b\n\x90 z 0 -1\n\xff hb",
}

// cmdFuzzExcluded returns why a command is not run, "" if it is.
func cmdFuzzExcluded(argv [][]byte) string {
	name := strings.ToLower(string(argv[0]))
	sub := ""
	if len(argv) > 1 {
		sub = strings.ToLower(string(argv[1]))
	}
	switch name {
	case "shutdown":
		return "stops the server"
	case "debug":
		return "DEBUG SLEEP/SEGFAULT/PANIC/RELOAD/... block, crash or reload on purpose"
	case "eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro", "function":
		return "scripts may loop forever"
	case "replicaof", "slaveof", "sync", "psync", "failover", "replconf":
		return "replication: network and other processes"
	case "bgsave", "bgrewriteaof":
		return "background work outliving the input"
	case "monitor", "subscribe", "psubscribe", "ssubscribe":
		return "push mode"
	case "flushall", "flushdb":
		for _, a := range argv[1:] {
			if bytes.EqualFold(a, []byte("async")) {
				return "lazy free in the background"
			}
		}
	case "config":
		if sub == "set" {
			return "changes the encoding thresholds Check relies on"
		}
	case "srandmember", "zrandmember", "hrandfield":
		if len(argv) > 2 {
			if n, err := strconv.ParseInt(string(argv[2]), 10, 64); err == nil && n < -1000 {
				return "a reply of that many elements"
			}
		}
	}
	return ""
}

// cmdFuzzSetup is the keyspace every input starts from: every type and
// encoding, keys with TTLs (some expiring within a few commands), the
// BY/GET keys of SORT, and keys in db 1.
var cmdFuzzSetup = [][]string{
	{"SET", "str", "hello"}, {"SET", "int", "42"}, {"SET", "float", "3.5"},
	{"SET", "big", strings.Repeat("x", 100)},
	{"RPUSH", "l", "3", "1", "2", "a", "b"},
	{"RPUSH", "l2", strings.Repeat("e", 70), "x", "y"},
	{"HSET", "h", "f", "1", "g", "v"},
	{"HSET", "hb", "f", strings.Repeat("v", 70), "g", "1"},
	{"SADD", "s", "1", "2", "3"},
	{"SADD", "sb", "a", "b", "1"},
	{"ZADD", "z", "1", "a", "2", "b", "3", "c"},
	{"ZADD", "zb", "1", strings.Repeat("m", 70), "2", "n"},
	{"PFADD", "hll", "a", "b", "c"},
	{"SET", "t", "v", "PX", "100000"},
	{"RPUSH", "lt", "x"}, {"PEXPIRE", "lt", "20"},
	{"ZADD", "zt", "1", "x"}, {"PEXPIRE", "zt", "50"},
	{"SET", "w_a", "2"}, {"SET", "w_b", "1"}, {"SET", "w_1", "x"},
	{"HSET", "h_a", "f", "1"},
	{"SELECT", "1"}, {"SET", "k1", "v"}, {"SADD", "s1", "x"}, {"SELECT", "0"},
}

func runCmdFuzz(t *testing.T, data []byte) {
	ts := newTestServer(t, "--proto-max-bulk-len", "1mb")
	initTable()
	var clients []*Client
	newClient := func() *Client {
		c := ts.client()
		clients = append(clients, c)
		return c
	}
	defer func() {
		for _, c := range clients {
			c.conn.Close()
		}
	}()
	c := newClient()
	for _, cmd := range cmdFuzzSetup {
		if got := ts.do(c, cmd...); strings.HasPrefix(got, "-") {
			t.Fatalf("setup %q: %q", cmd, got)
		}
	}
	check := func(line []byte) {
		t.Helper()
		ts.s.mu.Lock()
		defer ts.s.mu.Unlock()
		if ts.s.execDepth != 0 {
			t.Fatalf("after %q: execDepth %d", line, ts.s.execDepth)
		}
		if err := ts.s.ks.Check(); err != nil {
			t.Fatalf("after %q: keyspace check: %v", line, err)
		}
	}
	check(nil)
	for _, line := range bytes.Split(data, []byte("\n")) {
		var argv [][]byte
		for _, a := range bytes.Split(line, []byte(" ")) {
			if len(a) > 0 {
				argv = append(argv, a)
			}
		}
		if len(argv) == 0 {
			continue
		}
		if a0 := argv[0]; len(a0) <= 2 && a0[0] >= 0x80 {
			idx := int(a0[0] - 0x80)
			if len(a0) == 2 {
				idx += 128 * int(a0[1])
			}
			cmd := allCommands[idx%len(allCommands)]
			name := [][]byte{[]byte(cmd.FullName())}
			if cmd.Parent() != nil {
				name = [][]byte{[]byte(cmd.Parent().Name), []byte(cmd.Name)}
			}
			argv = append(name, argv[1:]...)
		}
		if cmdFuzzExcluded(argv) != "" {
			continue
		}
		args := make([]string, len(argv))
		for i, a := range argv {
			args[i] = string(a)
		}
		ts.do(c, args...)
		check(line)
		ts.clk.Advance(7 * time.Millisecond)
		if c.blockedFlag() || c.closeAfterReply || c.killed.Load() {
			c = newClient()
		}
	}
}
