package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vigil-kv/vigil/internal/deploy"
)

func upCommand() *cli.Command {
	return &cli.Command{
		Name:  "up",
		Usage: "start a local deployment (1 master, 2 replicas, 3 sentinels) and watch it",
		Description: "Starts the servers and sentinels from configs/examples/ on loopback, waits until the\n" +
			"deployment is healthy, prints how to connect, then shows a live status view with the\n" +
			"sentinels' events. Ctrl-C (or SIGTERM) stops the sentinels, then the servers.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "server", Value: "vigil", Usage: "which binaries run the nodes: vigil (built in) or redis (Debian's redis-server and redis-sentinel)"},
			&cli.StringFlag{Name: "dir", Value: "vigil-data", Usage: "data directory, one subdirectory per node"},
			&cli.IntFlag{Name: "base-port", Value: 6379, Usage: "port of the master; replicas use the next ones"},
			&cli.IntFlag{Name: "sentinel-base-port", Value: 26379, Usage: "port of the first sentinel; the others use the next ones"},
			&cli.IntFlag{Name: "replicas", Value: 2, Usage: "number of replicas"},
			&cli.IntFlag{Name: "sentinels", Value: 3, Usage: "number of sentinels"},
			&cli.StringFlag{Name: "master-name", Value: "mymaster", Usage: "the name the sentinels monitor the master under (with --groups, of the first group; the others are NAME-2, NAME-3, ...)"},
			&cli.IntFlag{Name: "groups", Value: 1, Usage: "number of masters, each with its replicas on the next ports, all monitored by the same sentinels"},
			&cli.DurationFlag{Name: "down-after", Usage: "sentinel down-after-milliseconds", DefaultText: "5s, from sentinel.conf"},
			&cli.DurationFlag{Name: "failover-timeout", Usage: "sentinel failover-timeout", DefaultText: "60s, from sentinel.conf"},
			&cli.StringSliceFlag{Name: "server-directive", Usage: "extra server config line, e.g. --server-directive 'appendonly yes' (repeatable)"},
			&cli.StringSliceFlag{Name: "sentinel-directive", Usage: "extra sentinel config line (repeatable)"},
			&cli.DurationFlag{Name: "wait", Value: time.Minute, Usage: "how long to wait for the deployment to become healthy"},
			&cli.BoolFlag{Name: "restart-dead", Usage: "restart a node whose process died (a server as a replica of the sentinels' master); without it, type r and Enter in the live view to do it once"},
			&cli.BoolFlag{Name: "json", Usage: "print JSON lines (ready, status every second, event, stopped) instead of the view"},
		},
		Action: runUp,
	}
}

func runUp(c *cli.Context) error {
	if n := c.Int("groups"); n < 1 {
		return fmt.Errorf("--groups %d: want at least 1", n)
	}
	spec := deploy.Spec{
		Kind:               deploy.Kind(c.String("server")),
		Dir:                c.String("dir"),
		BasePort:           c.Int("base-port"),
		SentinelBasePort:   c.Int("sentinel-base-port"),
		Replicas:           countFlag(c.Int("replicas")),
		Sentinels:          countFlag(c.Int("sentinels")),
		MasterName:         c.String("master-name"),
		Groups:             c.Int("groups"),
		DownAfter:          c.Duration("down-after"),
		FailoverTimeout:    c.Duration("failover-timeout"),
		ServerDirectives:   c.StringSlice("server-directive"),
		SentinelDirectives: c.StringSlice("sentinel-directive"),
	}
	out := c.App.Writer
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)

	d, err := deploy.New(spec)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		}
		// A second Ctrl-C while stopping kills every node at once.
		<-sigs
		for _, n := range d.Nodes() {
			_ = n.Kill()
		}
	}()
	v := newView(out, c.Bool("json"), "vigil up")
	if !v.json {
		groups := ""
		if n := len(d.Groups()); n > 1 {
			groups = fmt.Sprintf(" in %d groups", n)
		}
		fmt.Fprintf(out, "Starting %d servers%s and %d sentinels (%s) in %s ...\n", len(d.Servers), groups, len(d.Sentinels), d.Spec.Kind, d.Spec.Dir)
	}
	if err := d.Start(); err != nil {
		return err
	}
	stop := func() error {
		if !v.json {
			fmt.Fprintln(out, "\nStopping the sentinels, then the servers ...")
		}
		err := d.Stop()
		if v.json {
			v.emitJSON("stopped", map[string]any{"error": errString(err)})
		} else {
			fmt.Fprintln(out, "Stopped.")
		}
		return err
	}
	wctx, wcancel := context.WithTimeout(ctx, c.Duration("wait"))
	var shown string
	var shownAt time.Time
	err = d.WaitHealthyFunc(wctx, func(problems []string) {
		// Text mode: say what is awaited, when it changes or every 5 s.
		if v.json {
			return
		}
		now := time.Now()
		if s := strings.Join(problems, "; "); s != shown || now.Sub(shownAt) >= 5*time.Second {
			shown, shownAt = s, now
			fmt.Fprintf(out, "waiting: %s\n", s)
		}
	})
	wcancel()
	if err != nil {
		_ = stop()
		if ctx.Err() != nil {
			return errors.New("interrupted before the deployment was healthy")
		}
		err = fmt.Errorf("%w\n(each node's output.log is under %s)", err, d.Spec.Dir)
		return err
	}
	printReady(out, v, d)

	var cols []*deploy.Collector
	for _, g := range d.Groups() {
		col := deploy.NewCollector(g.CollectOptions())
		defer col.Close()
		cols = append(cols, col)
	}
	restart := func() {
		did, err := d.RestartDead(ctx)
		for _, line := range did {
			if v.json {
				v.emitJSON("restarted", map[string]any{"node": line})
			} else {
				fmt.Fprintln(out, "restart-dead:", line)
			}
		}
		if err != nil && !v.json {
			fmt.Fprintln(out, "restart-dead:", err)
		}
	}
	if c.Bool("restart-dead") {
		go func() {
			t := time.NewTicker(time.Second)
			defer t.Stop()
			for {
				select {
				case <-ctx.Done():
					return
				case <-t.C:
					restart()
				}
			}
		}()
	} else if in := c.App.Reader; in != nil && !v.json {
		// The live view's key: "r" then Enter restarts the dead nodes now.
		go func() {
			sc := bufio.NewScanner(in)
			for sc.Scan() {
				if strings.TrimSpace(sc.Text()) == "r" && ctx.Err() == nil {
					restart()
				}
			}
		}()
	}
	watch(ctx, v, cols, d.SentinelAddrs())
	return stop()
}

// countFlag maps the flag's 0 to deploy.Spec's "none" (a negative count).
func countFlag(n int) int {
	if n == 0 {
		return -1
	}
	return n
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// printReady says how to connect: redis-cli lines, a go-redis
// FailoverClient snippet and a vigil client snippet (or one JSON line).
func printReady(out io.Writer, v *view, d *deploy.Deployment) {
	type node struct {
		Name string `json:"name"`
		Addr string `json:"addr"`
		Role string `json:"role"`
		Pid  int    `json:"pid"`
		Dir  string `json:"dir"`
	}
	if v.json {
		var nodes []node
		for _, n := range d.Nodes() {
			nodes = append(nodes, node{n.Name, n.Addr(), string(n.Role), n.Pid(), n.Dir})
		}
		ready := map[string]any{
			"master_name": d.Spec.MasterName, "master_addr": d.Servers[0].Addr(), "server_kind": d.Spec.Kind,
			"sentinel_addrs": d.SentinelAddrs(), "dir": d.Spec.Dir, "nodes": nodes,
		}
		if gs := d.Groups(); len(gs) > 1 {
			var groups []map[string]any
			for _, g := range gs {
				var servers []string
				for _, n := range g.Servers {
					servers = append(servers, n.Addr())
				}
				groups = append(groups, map[string]any{"master_name": g.Spec.MasterName, "master_addr": g.Servers[0].Addr(), "servers": servers})
			}
			ready["groups"] = groups
		}
		v.emitJSON("ready", ready)
		return
	}
	if len(d.Groups()) > 1 {
		printReadyGroups(out, d)
		return
	}
	cli := func(n *deploy.Node) string {
		if n.Host == "127.0.0.1" || n.Host == "localhost" {
			return fmt.Sprintf("redis-cli -p %d", n.Port)
		}
		return fmt.Sprintf("redis-cli -h %s -p %d", n.Host, n.Port)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "\nThe deployment is healthy. Master %q: %s; data, configs and logs in %s\n\n", d.Spec.MasterName, d.Servers[0].Addr(), d.Spec.Dir)
	for i, n := range d.Servers {
		what := "# the master (until a failover)"
		if i > 0 {
			what = "# a replica"
		}
		fmt.Fprintf(&b, "  %-28s %s, pid %d\n", cli(n), what, n.Pid())
	}
	for _, n := range d.Sentinels {
		fmt.Fprintf(&b, "  %-28s # a sentinel, pid %d\n", cli(n), n.Pid())
	}
	if len(d.Sentinels) > 0 {
		fmt.Fprintf(&b, "  %s SENTINEL get-master-addr-by-name %s\n", cli(d.Sentinels[0]), d.Spec.MasterName)
		addrs := make([]string, len(d.Sentinels))
		for i, n := range d.Sentinels {
			addrs[i] = fmt.Sprintf("%q", n.Addr())
		}
		list := strings.Join(addrs, ", ")
		fmt.Fprintf(&b, `
go-redis (github.com/redis/go-redis/v9):

	rdb := redis.NewFailoverClient(&redis.FailoverOptions{
		MasterName:    %q,
		SentinelAddrs: []string{%s},
	})

vigil's client (github.com/vigil-kv/vigil/client), which checks ROLE and follows +switch-master:

	c, err := client.New(client.Options{
		MasterName:    %q,
		SentinelAddrs: []string{%s},
	})
`, d.Spec.MasterName, list, d.Spec.MasterName, list)
		fmt.Fprintf(&b, "\nKill the master (kill -9 %d) to watch a failover. Status: vigil status --sentinel %s\n\n", d.Servers[0].Pid(), d.Sentinels[0].Addr())
	}
	io.WriteString(out, b.String())
}

// printReadyGroups is printReady for several groups: each group's servers,
// the sentinels, and a client.NewRing snippet that shards keys over the
// groups.
func printReadyGroups(out io.Writer, d *deploy.Deployment) {
	cli := func(n *deploy.Node) string {
		if n.Host == "127.0.0.1" || n.Host == "localhost" {
			return fmt.Sprintf("redis-cli -p %d", n.Port)
		}
		return fmt.Sprintf("redis-cli -h %s -p %d", n.Host, n.Port)
	}
	var b strings.Builder
	gs := d.Groups()
	fmt.Fprintf(&b, "\nThe deployment is healthy: %d groups; data, configs and logs in %s\n", len(gs), d.Spec.Dir)
	var names []string
	for _, g := range gs {
		names = append(names, fmt.Sprintf("%q", g.Spec.MasterName))
		fmt.Fprintf(&b, "\nGroup %q, master %s:\n", g.Spec.MasterName, g.Servers[0].Addr())
		for i, n := range g.Servers {
			what := "# the master (until a failover)"
			if i > 0 {
				what = "# a replica"
			}
			fmt.Fprintf(&b, "  %-28s %s, pid %d\n", cli(n), what, n.Pid())
		}
	}
	if len(d.Sentinels) > 0 {
		fmt.Fprintf(&b, "\nSentinels, monitoring every group:\n")
		for _, n := range d.Sentinels {
			fmt.Fprintf(&b, "  %-28s # a sentinel, pid %d\n", cli(n), n.Pid())
		}
		fmt.Fprintf(&b, "  %s SENTINEL masters\n", cli(d.Sentinels[0]))
		addrs := make([]string, len(d.Sentinels))
		for i, n := range d.Sentinels {
			addrs[i] = fmt.Sprintf("%q", n.Addr())
		}
		fmt.Fprintf(&b, `
vigil's client (github.com/vigil-kv/vigil/client) shards keys over the groups, each followed through the sentinels:

	r, err := client.NewRing(client.RingOptions{
		MasterNames: []string{%s},
		Options:     client.Options{SentinelAddrs: []string{%s}},
	})
`, strings.Join(names, ", "), strings.Join(addrs, ", "))
		fmt.Fprintf(&b, "\nKill a group's master (kill -9 %d) to watch that group fail over. Status: vigil status --all-masters --sentinel %s\n\n",
			gs[0].Servers[0].Pid(), d.Sentinels[0].Addr())
	}
	io.WriteString(out, b.String())
}
