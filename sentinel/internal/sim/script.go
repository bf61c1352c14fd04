package sim

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-kv/vigil/sentinel"
)

// Script language, one command per line ('#' starts a comment):
//
//	seed <n>                           rng seed (before any node)
//	latency <dur> | sync-delay <dur>   network hop latency, replica resync time
//	tunables redis|vigil               Redis 7.0 timers only, or with Vigil's speed-ups
//	redis <name> <ip:port> [of <master>] [priority=<n>] [offset=<n>] [runid=<hex40>] [ack=<n>]
//	sentinel <name> <ip:port> [id=<hex40>]
//	monitor <master-name> <redis> <quorum> [down-after=<ms>] [failover-timeout=<ms>]
//	        [parallel-syncs=<n>] [forget-after=<ms>] [on=<s1,s2,...>]  (before start: part of the config)
//	start                              load configs, start timers (implied by tick)
//	tick <dur>                         run the simulation
//	kill <node> | restart <node>
//	partition <a,b,...> <c,d,...> ...  cut every pair across groups
//	isolate <node> | cut <a> <b> | heal
//	freeze <sentinel> <dur>            stop the process (TILT when it resumes)
//	clock <sentinel> <+-dur>           jump a sentinel's clock
//	failover <sentinel> <master-name> [coordinated]  SENTINEL FAILOVER [COORDINATED]
//	reset <sentinel> <pattern>         SENTINEL RESET
//	set <sentinel> <master-name> <opt> <val> ...
//	monitor-cmd <sentinel> <name> <ip> <port> <quorum>   SENTINEL MONITOR
//	remove <sentinel> <master-name>
//	ckquorum <sentinel> <master-name>
//	set-priority <redis> <n> | set-offset <redis> <n|-1> | set-runid <redis> <hex40>
//	announce <redis> 0|1 | ping-reply <redis> <text...> | replicaof <redis> <master>|no-one
//	refuse-empty <replica> (its empty-restart guard holds until a REPLICAOF) | set-keys <redis> <n>
//	set-ack <redis> <n>                min-replicas-ack (sync-ack mode; INFO min_replicas_ack)
//	deaf <redis>                       ignore SLAVEOF (renamed command: EXECABORT)
//	stall <redis>                      as a FAILOVER target, never catch up (TIMEOUT expires)
//	show <sentinel> <master-name>      print flags, state, epochs, address
//	expect-master <sentinel> <master-name> <redis>
//	expect-role <redis> master | expect-role <redis> slave <master>
//	expect-acks-count <master> <replica> yes|no   sync-ack: the replica's acks count (AckGate)
//	expect-events <sentinel|*> <type> <n>
//	expect-epoch <sentinel> <n>
//	expect-known <sentinel> <master-name> <redis,...|-> <sentinel,...|->
//	                                   exactly these known replicas and other sentinels
//	log <text>
//
// Durations are Go durations ("5s", "250ms") or plain milliseconds.

// RunScript runs a scenario script and returns the simulation.
func RunScript(src string) *Sim {
	seed := int64(1)
	var s *Sim
	lines := strings.Split(src, "\n")
	// seed must come first to build the Sim.
	for _, raw := range lines {
		f := strings.Fields(stripComment(raw))
		if len(f) == 2 && f[0] == "seed" {
			v, err := strconv.ParseInt(f[1], 10, 64)
			if err == nil {
				seed = v
			}
		}
	}
	s = New(seed)
	nSentinels := int64(0)
	for i, raw := range lines {
		line := strings.TrimSpace(stripComment(raw))
		if line == "" {
			continue
		}
		f := strings.Fields(line)
		if err := s.command(f, seed, &nSentinels); err != nil {
			s.errorf("line %d: %q: %v", i+1, line, err)
		}
	}
	return s
}

func stripComment(l string) string {
	if i := strings.IndexByte(l, '#'); i >= 0 {
		return l[:i]
	}
	return l
}

func parseDur(v string) (int64, error) {
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		return n, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil {
		return 0, err
	}
	return d.Milliseconds(), nil
}

func parseAddr(v string) (sentinel.Addr, error) {
	i := strings.LastIndexByte(v, ':')
	if i < 0 {
		return sentinel.Addr{}, fmt.Errorf("bad address %q", v)
	}
	p, err := strconv.Atoi(v[i+1:])
	if err != nil {
		return sentinel.Addr{}, err
	}
	return sentinel.Addr{IP: v[:i], Port: p}, nil
}

func kv(args []string) map[string]string {
	m := map[string]string{}
	for _, a := range args {
		if i := strings.IndexByte(a, '='); i > 0 {
			m[a[:i]] = a[i+1:]
		}
	}
	return m
}

func (s *Sim) node(name string, sentinelWanted int) (*Node, error) {
	n := s.Nodes[name]
	if n == nil {
		return nil, fmt.Errorf("unknown node %q", name)
	}
	if sentinelWanted == 1 && !n.IsSentinel {
		return nil, fmt.Errorf("%q is not a sentinel", name)
	}
	if sentinelWanted == 0 && n.IsSentinel {
		return nil, fmt.Errorf("%q is not a redis", name)
	}
	return n, nil
}

func (s *Sim) command(f []string, seed int64, nSentinels *int64) error {
	cmd, args := f[0], f[1:]
	need := func(n int) error {
		if len(args) < n {
			return fmt.Errorf("%s needs %d arguments", cmd, n)
		}
		return nil
	}
	echo := func() { s.printf("%9.3f === %s\n", float64(s.now)/1000, strings.Join(f, " ")) }
	switch cmd {
	case "seed":
		return nil
	case "latency", "sync-delay":
		if err := need(1); err != nil {
			return err
		}
		d, err := parseDur(args[0])
		if err != nil {
			return err
		}
		if cmd == "latency" {
			s.Latency = d
		} else {
			s.SyncDelay = d
		}
	case "tunables":
		if err := need(1); err != nil {
			return err
		}
		if args[0] == "redis" {
			s.Tunables = sentinel.RedisTunables()
		} else {
			s.Tunables = sentinel.DefaultTunables()
		}
	case "redis":
		if err := need(2); err != nil {
			return err
		}
		addr, err := parseAddr(args[1])
		if err != nil {
			return err
		}
		of := ""
		rest := args[2:]
		if len(rest) >= 2 && rest[0] == "of" {
			of = rest[1]
			if _, err := s.node(of, 0); err != nil {
				return err
			}
			rest = rest[2:]
		}
		n := s.AddRedis(args[0], addr, of)
		opts := kv(rest)
		if v, ok := opts["priority"]; ok {
			n.Priority, _ = strconv.Atoi(v)
		}
		if v, ok := opts["offset"]; ok {
			off, _ := strconv.ParseInt(v, 10, 64)
			s.SetOffset(n.Name, off)
		}
		if v, ok := opts["runid"]; ok {
			n.RunID = v
		}
		if v, ok := opts["ack"]; ok {
			n.MinReplicasAck, _ = strconv.Atoi(v)
		}
	case "sentinel":
		if err := need(2); err != nil {
			return err
		}
		addr, err := parseAddr(args[1])
		if err != nil {
			return err
		}
		*nSentinels++
		s.AddSentinel(args[0], addr, kv(args[2:])["id"], seed*1000+*nSentinels)
	case "monitor":
		if err := need(3); err != nil {
			return err
		}
		r, err := s.node(args[1], 0)
		if err != nil {
			return err
		}
		q, err := strconv.Atoi(args[2])
		if err != nil {
			return err
		}
		opts := kv(args[3:])
		mc := sentinel.MasterConfig{Name: args[0], IP: r.Addr.IP, Port: r.Addr.Port, Quorum: q}
		if v, ok := opts["down-after"]; ok {
			mc.DownAfter, _ = parseDur(v)
		}
		if v, ok := opts["failover-timeout"]; ok {
			mc.FailoverTimeout, _ = parseDur(v)
		}
		if v, ok := opts["parallel-syncs"]; ok {
			mc.ParallelSyncs, _ = strconv.Atoi(v)
		}
		if v, ok := opts["forget-after"]; ok {
			mc.ForgetAfter, _ = parseDur(v)
		}
		var targets []*Node
		if on, ok := opts["on"]; ok {
			for _, name := range strings.Split(on, ",") {
				n, err := s.node(name, 1)
				if err != nil {
					return err
				}
				targets = append(targets, n)
			}
		} else {
			for _, n := range s.sortedNodes() {
				if n.IsSentinel {
					targets = append(targets, n)
				}
			}
		}
		if s.started {
			return fmt.Errorf("monitor after start: use monitor-cmd")
		}
		for _, n := range targets {
			s.Monitor(n, mc)
		}
	case "start":
		echo()
		s.Start()
	case "tick":
		if err := need(1); err != nil {
			return err
		}
		d, err := parseDur(args[0])
		if err != nil {
			return err
		}
		if !s.started {
			s.printf("%9.3f === start\n", float64(s.now)/1000)
			s.Start()
		}
		s.printf("%9.3f === %s\n", float64(s.now)/1000, strings.Join(f, " "))
		s.Run(s.now + d)
	case "kill", "restart":
		if err := need(1); err != nil {
			return err
		}
		if _, err := s.node(args[0], -1); err != nil {
			return err
		}
		echo()
		if cmd == "kill" {
			s.Kill(args[0])
		} else {
			s.Restart(args[0])
		}
	case "partition":
		if err := need(2); err != nil {
			return err
		}
		var groups [][]string
		for _, g := range args {
			names := strings.Split(g, ",")
			for _, n := range names {
				if _, err := s.node(n, -1); err != nil {
					return err
				}
			}
			groups = append(groups, names)
		}
		echo()
		s.Partition(groups)
	case "isolate":
		if err := need(1); err != nil {
			return err
		}
		echo()
		s.Isolate(args[0])
	case "cut":
		if err := need(2); err != nil {
			return err
		}
		echo()
		s.Cut(args[0], args[1])
	case "heal":
		echo()
		s.Heal()
	case "freeze", "clock":
		if err := need(2); err != nil {
			return err
		}
		if _, err := s.node(args[0], 1); err != nil {
			return err
		}
		d, err := parseDur(strings.TrimPrefix(args[1], "+"))
		if err != nil {
			return err
		}
		echo()
		if cmd == "freeze" {
			s.Freeze(args[0], d)
		} else {
			s.SkewClock(args[0], d)
		}
	case "failover", "reset", "remove":
		if err := need(2); err != nil {
			return err
		}
		echo()
		switch cmd {
		case "failover":
			s.Request(args[0], sentinel.FailoverRequested{Name: args[1],
				Coordinated: len(args) > 2 && strings.EqualFold(args[2], "coordinated")})
		case "reset":
			s.Request(args[0], sentinel.ResetRequested{Pattern: args[1]})
		case "remove":
			s.Request(args[0], sentinel.RemoveRequested{Name: args[1]})
		}
	case "set":
		if err := need(3); err != nil {
			return err
		}
		echo()
		s.Request(args[0], sentinel.SetRequested{Name: args[1], Args: args[2:]})
	case "monitor-cmd":
		if err := need(5); err != nil {
			return err
		}
		port, _ := strconv.Atoi(args[3])
		q, _ := strconv.Atoi(args[4])
		echo()
		s.Request(args[0], sentinel.MonitorRequested{Name: args[1], IP: args[2], Port: port, Quorum: q})
	case "ckquorum":
		if err := need(2); err != nil {
			return err
		}
		n, err := s.node(args[0], 1)
		if err != nil {
			return err
		}
		echo()
		text, ok, found := n.Core.CKQuorum(args[1])
		switch {
		case !found:
			text = "-ERR No such master with that name"
		case ok:
			text = "+" + text
		default:
			text = "-" + text
		}
		s.log(Line{At: s.now, Node: n.Name, Type: "reply", Message: text})
	case "refuse-empty":
		if err := need(1); err != nil {
			return err
		}
		n, err := s.node(args[0], 0)
		if err != nil {
			return err
		}
		echo()
		s.mutate(func() { n.RefusedEmpty = true })
	case "set-priority", "set-offset", "set-runid", "announce", "set-keys", "set-ack":
		if err := need(2); err != nil {
			return err
		}
		n, err := s.node(args[0], 0)
		if err != nil {
			return err
		}
		echo()
		switch cmd {
		case "set-priority":
			n.Priority, _ = strconv.Atoi(args[1])
		case "set-offset":
			off, _ := strconv.ParseInt(args[1], 10, 64)
			s.SetOffset(n.Name, off)
		case "set-runid":
			n.RunID = args[1]
		case "announce":
			n.Announced, _ = strconv.Atoi(args[1])
		case "set-keys":
			n.Keys, _ = strconv.Atoi(args[1])
		case "set-ack":
			n.MinReplicasAck, _ = strconv.Atoi(args[1])
		}
	case "deaf", "stall":
		if err := need(1); err != nil {
			return err
		}
		n, err := s.node(args[0], 0)
		if err != nil {
			return err
		}
		echo()
		if cmd == "deaf" {
			n.deaf = true
		} else {
			n.stall = true
		}
	case "ping-reply":
		if err := need(1); err != nil {
			return err
		}
		n, err := s.node(args[0], 0)
		if err != nil {
			return err
		}
		echo()
		n.pingReply = strings.Join(args[1:], " ")
	case "replicaof":
		if err := need(2); err != nil {
			return err
		}
		n, err := s.node(args[0], 0)
		if err != nil {
			return err
		}
		echo()
		if args[1] == "no-one" {
			s.ReplicaOf(n, "", 0)
		} else {
			m, err := s.node(args[1], 0)
			if err != nil {
				return err
			}
			s.ReplicaOf(n, m.Addr.IP, m.Addr.Port)
		}
	case "show":
		if err := need(2); err != nil {
			return err
		}
		n, err := s.node(args[0], 1)
		if err != nil {
			return err
		}
		s.printf("%9.3f %-3s show %s\n", float64(s.now)/1000, n.Name, s.show(n, args[1]))
	case "expect-master":
		if err := need(3); err != nil {
			return err
		}
		n, err := s.node(args[0], 1)
		if err != nil {
			return err
		}
		r, err := s.node(args[2], 0)
		if err != nil {
			return err
		}
		got, ok := n.Core.MasterAddr(args[1])
		if !ok || got != r.Addr {
			s.errorf("expect-master %s %s: got %v, want %s (%v)", args[0], args[1], got, r.Name, r.Addr)
		}
	case "expect-acks-count":
		if err := need(3); err != nil {
			return err
		}
		m, err := s.node(args[0], 0)
		if err != nil {
			return err
		}
		r, err := s.node(args[1], 0)
		if err != nil {
			return err
		}
		got := m.AcksCount(r)
		if got != (args[2] == "yes") {
			s.errorf("expect-acks-count %s %s: %v, want %s", m.Name, r.Name, got, args[2])
		}
	case "expect-role":
		if err := need(2); err != nil {
			return err
		}
		n, err := s.node(args[0], 0)
		if err != nil {
			return err
		}
		if n.Role != args[1] {
			s.errorf("expect-role %s: role %s, want %s", n.Name, n.Role, args[1])
		} else if len(args) > 2 {
			m, err := s.node(args[2], 0)
			if err != nil {
				return err
			}
			if n.MasterHost != m.Addr.IP || n.MasterPort != m.Addr.Port {
				s.errorf("expect-role %s: replicates %s:%d, want %s", n.Name, n.MasterHost, n.MasterPort, m.Name)
			}
		}
	case "expect-events":
		if err := need(3); err != nil {
			return err
		}
		want, err := strconv.Atoi(args[2])
		if err != nil {
			return err
		}
		if got := s.Count(args[0], args[1]); got != want {
			s.errorf("expect-events %s %s: got %d, want %d", args[0], args[1], got, want)
		}
	case "expect-epoch":
		if err := need(2); err != nil {
			return err
		}
		n, err := s.node(args[0], 1)
		if err != nil {
			return err
		}
		want, _ := strconv.ParseUint(args[1], 10, 64)
		if got := n.Core.CurrentEpoch(); got != want {
			s.errorf("expect-epoch %s: got %d, want %d", n.Name, got, want)
		}
	case "expect-known":
		if err := need(4); err != nil {
			return err
		}
		n, err := s.node(args[0], 1)
		if err != nil {
			return err
		}
		addrs := func(list string) ([]string, error) {
			var out []string
			if list == "-" {
				return out, nil
			}
			for _, name := range strings.Split(list, ",") {
				x, err := s.node(name, -1)
				if err != nil {
					return nil, err
				}
				out = append(out, x.Addr.String())
			}
			sort.Strings(out)
			return out, nil
		}
		wantR, err := addrs(args[2])
		if err != nil {
			return err
		}
		wantS, err := addrs(args[3])
		if err != nil {
			return err
		}
		now := T0 + s.now + n.clockSkew
		got := func(rows [][]sentinel.Field) []string {
			var out []string
			for _, row := range rows {
				var ip, port string
				for _, f := range row {
					switch f.Name {
					case "ip":
						ip = f.Value
					case "port":
						port = f.Value
					}
				}
				out = append(out, ip+":"+port)
			}
			sort.Strings(out)
			return out
		}
		reps, _ := n.Core.Replicas(now, args[1])
		sens, _ := n.Core.Sentinels(now, args[1])
		if g := got(reps); strings.Join(g, " ") != strings.Join(wantR, " ") {
			s.errorf("expect-known %s %s: replicas %v, want %v", args[0], args[1], g, wantR)
		}
		if g := got(sens); strings.Join(g, " ") != strings.Join(wantS, " ") {
			s.errorf("expect-known %s %s: sentinels %v, want %v", args[0], args[1], g, wantS)
		}
	case "log":
		s.printf("%9.3f === %s\n", float64(s.now)/1000, strings.Join(f, " "))
	default:
		return fmt.Errorf("unknown command %q", cmd)
	}
	return nil
}

// Count returns how many Notify lines of type typ a sentinel ("*": any) logged.
func (s *Sim) Count(node, typ string) int {
	n := 0
	for _, l := range s.Lines {
		if l.Sentinel && l.Type == typ && (node == "*" || l.Node == node) {
			n++
		}
	}
	return n
}

// Events returns the Notify lines of type typ (any sentinel if node is "*").
func (s *Sim) Events(node, typ string) []Line {
	var out []Line
	for _, l := range s.Lines {
		if (l.Sentinel || typ == "slaveof" || typ == "failover" || typ == "reply") && l.Type == typ && (node == "*" || l.Node == node) {
			out = append(out, l)
		}
	}
	return out
}

func (s *Sim) show(n *Node, master string) string {
	if !n.Alive || n.Core == nil {
		return "(down)"
	}
	fields, ok := n.Core.Master(T0+s.now+n.clockSkew, master)
	if !ok {
		return "(no such master)"
	}
	get := func(k string) string {
		for _, f := range fields {
			if f.Name == k {
				return f.Value
			}
		}
		return "-"
	}
	addr, _ := n.Core.MasterAddr(master)
	out := fmt.Sprintf("%s addr=%s flags=%s state=%s config-epoch=%s current-epoch=%d slaves=%s sentinels=%s",
		master, addr, get("flags"), get("failover-state"), get("config-epoch"), n.Core.CurrentEpoch(),
		get("num-slaves"), get("num-other-sentinels"))
	if ack := get("min-replicas-ack"); ack != "-" {
		out += fmt.Sprintf(" min-replicas-ack=%s ack-replicas=%s needed=%s proven=%s failover-blocked=%q",
			ack, get("ack-replicas"), get("ack-replicas-needed"), get("ack-replicas-proven"), get("failover-blocked"))
	}
	return out
}
