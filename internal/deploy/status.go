package deploy

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// Status is one snapshot of a deployment as its sentinels and servers
// report it. It works for any deployment (vigil or Redis): everything comes
// from SENTINEL master/replicas/sentinels and each node's INFO.
type Status struct {
	Time       time.Time        `json:"time"`
	MasterName string           `json:"master_name"`
	MasterAddr string           `json:"master_addr"` // what most sentinels answer
	Healthy    bool             `json:"healthy"`
	Problems   []string         `json:"problems,omitempty"`
	Servers    []ServerStatus   `json:"servers"`
	Sentinels  []SentinelStatus `json:"sentinels"`
}

// ServerStatus is a server's INFO (server and replication sections).
type ServerStatus struct {
	Addr              string `json:"addr"`
	Role              string `json:"role,omitempty"` // "master" or "replica" (INFO's role:slave)
	Pid               int    `json:"pid,omitempty"`
	Offset            int64  `json:"offset"`                // master_repl_offset, slave_repl_offset on replicas
	Lag               int64  `json:"lag"`                   // bytes behind the master's offset (replicas)
	MasterAddr        string `json:"master_addr,omitempty"` // replicas: master_host:master_port
	LinkStatus        string `json:"link_status,omitempty"` // replicas: master_link_status
	ConnectedReplicas int    `json:"connected_replicas"`
	OnlineReplicas    int    `json:"online_replicas"` // slaveN lines with state=online
	Error             string `json:"error,omitempty"`
}

// SentinelStatus is one sentinel's view of the master (SENTINEL master,
// SENTINEL replicas and SENTINEL sentinels).
type SentinelStatus struct {
	Addr              string   `json:"addr"`
	Pid               int      `json:"pid,omitempty"`
	MasterAddr        string   `json:"master_addr,omitempty"`
	Flags             string   `json:"flags,omitempty"`
	Quorum            int      `json:"quorum"`
	NumReplicas       int      `json:"num_replicas"`
	NumOtherSentinels int      `json:"num_other_sentinels"`
	Replicas          []string `json:"replicas,omitempty"`
	OtherSentinels    []string `json:"other_sentinels,omitempty"`
	Error             string   `json:"error,omitempty"`
}

// CollectOptions says what to ask.
type CollectOptions struct {
	Sentinels  []string // sentinel host:port; others they know are asked too
	MasterName string
	Servers    []string // servers to query even when no sentinel names them
	MasterAddr string   // the master when there are no sentinels
	// WantReplicas and WantSentinels are the expected counts for Health;
	// 0 means as many as discovered (at least one replica when sentinels
	// report none is not required).
	WantReplicas, WantSentinels int
	Timeout                     time.Duration // per request; default 1 s
}

// Collector queries a deployment repeatedly over kept connections.
type Collector struct {
	opts    CollectOptions
	mu      sync.Mutex
	clients map[string]*redis.Client
}

// NewCollector returns a Collector; Close releases its connections.
func NewCollector(opts CollectOptions) *Collector {
	if opts.Timeout == 0 {
		opts.Timeout = time.Second
	}
	if opts.MasterName == "" {
		opts.MasterName = "mymaster"
	}
	return &Collector{opts: opts, clients: map[string]*redis.Client{}}
}

// Collect takes one snapshot with a temporary Collector.
func Collect(ctx context.Context, opts CollectOptions) *Status {
	c := NewCollector(opts)
	defer c.Close()
	return c.Collect(ctx)
}

// Close closes the connections.
func (c *Collector) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, cl := range c.clients {
		cl.Close()
	}
	c.clients = map[string]*redis.Client{}
}

func (c *Collector) client(addr string) *redis.Client {
	c.mu.Lock()
	defer c.mu.Unlock()
	cl, ok := c.clients[addr]
	if !ok {
		cl = redis.NewClient(clientOptions(addr, c.opts.Timeout))
		c.clients[addr] = cl
	}
	return cl
}

// clientOptions: RESP2, no retries, small pool, short timeouts, so a paused
// node costs one timeout and nothing else.
func clientOptions(addr string, timeout time.Duration) *redis.Options {
	return &redis.Options{
		Addr: addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1,
		DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout,
		PoolSize: 2, ContextTimeoutEnabled: true,
	}
}

// Collect asks every sentinel (and the sentinels they know) and every
// server they name, in parallel, and fills Healthy/Problems.
func (c *Collector) Collect(ctx context.Context) *Status {
	st := &Status{Time: time.Now(), MasterName: c.opts.MasterName}
	seen := map[string]bool{}
	todo := append([]string{}, c.opts.Sentinels...)
	for round := 0; round < 2 && len(todo) > 0; round++ {
		var batch []string
		for _, a := range todo {
			if !seen[a] {
				seen[a] = true
				batch = append(batch, a)
			}
		}
		todo = nil
		res := make([]SentinelStatus, len(batch))
		parallel(len(batch), func(i int) { res[i] = c.sentinel(ctx, batch[i]) })
		for _, s := range res {
			st.Sentinels = append(st.Sentinels, s)
			todo = append(todo, s.OtherSentinels...)
		}
	}
	sort.SliceStable(st.Sentinels, func(i, j int) bool { return addrLess(st.Sentinels[i].Addr, st.Sentinels[j].Addr) })

	votes := map[string]int{}
	for _, s := range st.Sentinels {
		if s.MasterAddr != "" {
			votes[s.MasterAddr]++
		}
	}
	for a, n := range votes {
		if n > votes[st.MasterAddr] || (n == votes[st.MasterAddr] && addrLess(a, st.MasterAddr)) {
			st.MasterAddr = a
		}
	}
	if st.MasterAddr == "" {
		st.MasterAddr = c.opts.MasterAddr
	}

	servers := append([]string{}, c.opts.Servers...)
	known := map[string]bool{}
	for _, a := range servers {
		known[a] = true
	}
	var extra []string
	add := func(a string) {
		if a != "" && !known[a] {
			known[a] = true
			extra = append(extra, a)
		}
	}
	add(st.MasterAddr)
	for _, s := range st.Sentinels {
		for _, r := range s.Replicas {
			add(r)
		}
	}
	sort.Slice(extra, func(i, j int) bool { return addrLess(extra[i], extra[j]) })
	servers = append(servers, extra...)
	st.Servers = make([]ServerStatus, len(servers))
	parallel(len(servers), func(i int) { st.Servers[i] = c.server(ctx, servers[i]) })

	var masterOffset int64 = -1
	for _, s := range st.Servers {
		if s.Addr == st.MasterAddr && s.Role == "master" {
			masterOffset = s.Offset
		}
	}
	for i := range st.Servers {
		if s := &st.Servers[i]; s.Role == "replica" && masterOffset >= 0 {
			s.Lag = max(masterOffset-s.Offset, 0)
		}
	}
	wantR, wantS := c.opts.WantReplicas, c.opts.WantSentinels
	if wantS == 0 {
		wantS = len(st.Sentinels)
	}
	if wantR == 0 {
		for _, s := range st.Sentinels {
			wantR = max(wantR, s.NumReplicas)
		}
	}
	st.Problems = st.Health(wantR, wantS)
	st.Healthy = len(st.Problems) == 0
	return st
}

// parallel runs f(0..n-1) concurrently and waits.
func parallel(n int, f func(int)) {
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() { defer wg.Done(); f(i) }()
	}
	wg.Wait()
}

// addrLess orders host:port by host, then numeric port.
func addrLess(a, b string) bool {
	ha, pa, _ := net.SplitHostPort(a)
	hb, pb, _ := net.SplitHostPort(b)
	if ha != hb {
		return ha < hb
	}
	na, _ := strconv.Atoi(pa)
	nb, _ := strconv.Atoi(pb)
	return na < nb
}

func (c *Collector) sentinel(ctx context.Context, addr string) SentinelStatus {
	s := SentinelStatus{Addr: addr}
	cl := c.client(addr)
	if info, err := cl.Info(ctx, "server").Result(); err == nil {
		s.Pid, _ = strconv.Atoi(parseInfo(info)["process_id"])
	} else {
		s.Error = err.Error()
		return s
	}
	m, err := cl.Do(ctx, "SENTINEL", "MASTER", c.opts.MasterName).Result()
	if err != nil {
		s.Error = err.Error()
		return s
	}
	mm := toMap(m)
	if ip, port := mm["ip"], mm["port"]; ip != "" && port != "" {
		s.MasterAddr = net.JoinHostPort(ip, port)
	}
	s.Flags = mm["flags"]
	s.Quorum, _ = strconv.Atoi(mm["quorum"])
	s.NumReplicas, _ = strconv.Atoi(mm["num-slaves"])
	s.NumOtherSentinels, _ = strconv.Atoi(mm["num-other-sentinels"])
	if r, err := cl.Do(ctx, "SENTINEL", "REPLICAS", c.opts.MasterName).Result(); err == nil {
		for _, x := range toMaps(r) {
			if x["ip"] != "" && x["port"] != "" {
				s.Replicas = append(s.Replicas, net.JoinHostPort(x["ip"], x["port"]))
			}
		}
	}
	if r, err := cl.Do(ctx, "SENTINEL", "SENTINELS", c.opts.MasterName).Result(); err == nil {
		for _, x := range toMaps(r) {
			if x["ip"] != "" && x["port"] != "" {
				s.OtherSentinels = append(s.OtherSentinels, net.JoinHostPort(x["ip"], x["port"]))
			}
		}
	}
	sort.Slice(s.Replicas, func(i, j int) bool { return addrLess(s.Replicas[i], s.Replicas[j]) })
	sort.Slice(s.OtherSentinels, func(i, j int) bool { return addrLess(s.OtherSentinels[i], s.OtherSentinels[j]) })
	return s
}

// toMap reads a RESP2 flat array or a RESP3 map of strings.
func toMap(v any) map[string]string {
	out := map[string]string{}
	switch x := v.(type) {
	case []any:
		for i := 0; i+1 < len(x); i += 2 {
			out[fmt.Sprint(x[i])] = fmt.Sprint(x[i+1])
		}
	case map[any]any:
		for k, val := range x {
			out[fmt.Sprint(k)] = fmt.Sprint(val)
		}
	}
	return out
}

func toMaps(v any) []map[string]string {
	x, _ := v.([]any)
	var out []map[string]string
	for _, e := range x {
		out = append(out, toMap(e))
	}
	return out
}

func (c *Collector) server(ctx context.Context, addr string) ServerStatus {
	s := ServerStatus{Addr: addr}
	info, err := c.client(addr).Info(ctx).Result()
	if err != nil {
		s.Error = err.Error()
		return s
	}
	f := parseInfo(info)
	s.Pid, _ = strconv.Atoi(f["process_id"])
	s.Role = f["role"]
	if s.Role == "slave" {
		s.Role = "replica"
	}
	s.Offset, _ = strconv.ParseInt(f["master_repl_offset"], 10, 64)
	if v, ok := f["slave_repl_offset"]; ok {
		s.Offset, _ = strconv.ParseInt(v, 10, 64)
	}
	if h, p := f["master_host"], f["master_port"]; h != "" && p != "" {
		s.MasterAddr = net.JoinHostPort(h, p)
	}
	s.LinkStatus = f["master_link_status"]
	s.ConnectedReplicas, _ = strconv.Atoi(f["connected_slaves"])
	for i := 0; ; i++ {
		line, ok := f["slave"+strconv.Itoa(i)]
		if !ok {
			break
		}
		if strings.Contains(","+line+",", ",state=online,") {
			s.OnlineReplicas++
		}
	}
	return s
}

// parseInfo splits INFO text into its fields.
func parseInfo(text string) map[string]string {
	out := map[string]string{}
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimRight(line, "\r")
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = v
		}
	}
	return out
}

// Health lists the conditions of a healthy deployment with wantReplicas
// replicas and wantSentinels sentinels that st does not meet, one sentence
// each, or nothing when healthy.
func (st *Status) Health(wantReplicas, wantSentinels int) []string {
	var p []string
	if st.MasterAddr == "" {
		p = append(p, fmt.Sprintf("no sentinel knows master %q", st.MasterName))
	}
	for _, s := range st.Servers {
		switch {
		case s.Error != "":
			p = append(p, fmt.Sprintf("server %s does not answer INFO: %s", s.Addr, s.Error))
		case s.Addr == st.MasterAddr && s.Role != "master":
			p = append(p, fmt.Sprintf("server %s, the master for the sentinels, reports role %s", s.Addr, s.Role))
		case s.Addr == st.MasterAddr:
			if s.OnlineReplicas < wantReplicas {
				p = append(p, fmt.Sprintf("master %s has %d of %d replicas connected and online", s.Addr, s.OnlineReplicas, wantReplicas))
			}
		case s.Role == "master":
			p = append(p, fmt.Sprintf("server %s reports role master, not a replica of %s: it did not start replicating", s.Addr, st.MasterAddr))
		case s.LinkStatus == "":
			p = append(p, fmt.Sprintf("replica %s reports no master_link_status in INFO replication: it does not replicate", s.Addr))
		case s.LinkStatus != "up":
			p = append(p, fmt.Sprintf("replica %s: link to master %s is %s", s.Addr, s.MasterAddr, s.LinkStatus))
		case s.MasterAddr != st.MasterAddr:
			p = append(p, fmt.Sprintf("replica %s follows %s, not the master %s", s.Addr, s.MasterAddr, st.MasterAddr))
		}
	}
	if len(st.Sentinels) < wantSentinels {
		p = append(p, fmt.Sprintf("%d of %d sentinels found", len(st.Sentinels), wantSentinels))
	}
	for _, s := range st.Sentinels {
		switch {
		case s.Error != "":
			p = append(p, fmt.Sprintf("sentinel %s: %s", s.Addr, s.Error))
		case s.MasterAddr != st.MasterAddr:
			p = append(p, fmt.Sprintf("sentinel %s sees the master at %s, most at %s", s.Addr, s.MasterAddr, st.MasterAddr))
		case s.Flags != "master":
			p = append(p, fmt.Sprintf("sentinel %s flags the master %s", s.Addr, s.Flags))
		case s.NumReplicas < wantReplicas:
			p = append(p, fmt.Sprintf("sentinel %s knows %d of %d replicas", s.Addr, s.NumReplicas, wantReplicas))
		case s.NumOtherSentinels < wantSentinels-1:
			p = append(p, fmt.Sprintf("sentinel %s knows %d of %d other sentinels", s.Addr, s.NumOtherSentinels, wantSentinels-1))
		}
	}
	return p
}

// MasterNames are the master names the first answering sentinel monitors
// (SENTINEL MASTERS), in natural order: mymaster, mymaster-2, ...,
// mymaster-10.
func MasterNames(ctx context.Context, sentinels []string) ([]string, error) {
	var errs []error
	for _, a := range sentinels {
		cl := redis.NewClient(clientOptions(a, time.Second))
		v, err := cl.Do(ctx, "SENTINEL", "MASTERS").Result()
		cl.Close()
		if err != nil {
			errs = append(errs, fmt.Errorf("sentinel %s: %w", a, err))
			continue
		}
		var names []string
		for _, m := range toMaps(v) {
			if n := m["name"]; n != "" {
				names = append(names, n)
			}
		}
		SortNames(names)
		return names, nil
	}
	if len(errs) == 0 {
		return nil, fmt.Errorf("no sentinel given")
	}
	return nil, fmt.Errorf("no sentinel listed its masters: %w", errors.Join(errs...))
}

// SortNames sorts names naturally: names that differ only in a trailing
// number are ordered by its value (g-2 before g-10), and a name sorts
// before its numbered siblings (mymaster before mymaster-2).
func SortNames(names []string) {
	split := func(s string) (string, int) {
		i := len(s)
		for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
			i--
		}
		if i == len(s) || len(s)-i > 9 {
			return s, -1
		}
		n, _ := strconv.Atoi(s[i:])
		return strings.TrimRight(s[:i], "-_"), n
	}
	sort.SliceStable(names, func(i, j int) bool {
		pi, ni := split(names[i])
		pj, nj := split(names[j])
		if pi != pj {
			return pi < pj
		}
		if ni != nj {
			return ni < nj
		}
		return names[i] < names[j]
	})
}
