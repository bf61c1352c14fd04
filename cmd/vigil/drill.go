package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/mattn/go-isatty"
	"github.com/urfave/cli/v2"

	"github.com/vigil-kv/vigil/internal/deploy"
	"github.com/vigil-kv/vigil/internal/drill"
)

func drillCommand() *cli.Command {
	return &cli.Command{
		Name:  "drill",
		Usage: "rehearse failures: run a workload, inject faults on a seeded schedule, report lost writes, unavailability and linearizability",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "fault", Value: "kill-master", Usage: drill.FaultNames() + " (split needs --net netns)"},
			&cli.IntFlag{Name: "rounds", Value: 1, Usage: "number of faults"},
			&cli.Int64Flag{Name: "seed", Value: 1, Usage: "seed of the fault schedule and the workload"},
			&cli.IntFlag{Name: "clients", Value: 4, Usage: "concurrent clients"},
			&cli.IntFlag{Name: "wait", Usage: "WAIT for this many replicas before a write counts as acknowledged (0: SET OK is enough)"},
			&cli.StringFlag{Name: "report", Value: "drill-report", Usage: "directory for report.json and timeline.svg"},
			&cli.BoolFlag{Name: "expect-no-loss", Usage: "exit with status 3 when an acknowledged write was lost"},
			&cli.StringSliceFlag{Name: "sentinel", Usage: "host:port of a sentinel of an existing deployment (repeatable); no deployment is started"},
			&cli.StringFlag{Name: "master-name", Value: "mymaster", Usage: "the name the sentinels monitor the master under (with --groups, of the first group; the others are NAME-2, ...)"},
			&cli.IntFlag{Name: "groups", Value: 1, Usage: "start this many groups (masters with 2 replicas each) under the same sentinels: every group gets --clients clients, each round's fault targets a seeded group, and the report gives each group's figures and the totals"},
			&cli.StringFlag{Name: "password", Usage: "password of the data nodes (existing deployment)"},
			&cli.StringFlag{Name: "against", Value: "vigil", Usage: "sentinels: vigil (vigil-sentinel) or redis (Debian's redis-sentinel, with redis-server)"},
			&cli.StringFlag{Name: "server", Value: "vigil", Usage: "data servers: vigil (vigil-server, run by this binary) or redis (Debian's redis-server)"},
			&cli.IntFlag{Name: "base-port", Value: 7379, Usage: "port of the first server"},
			&cli.IntFlag{Name: "sentinel-base-port", Value: 27379, Usage: "port of the first sentinel"},
			&cli.StringFlag{Name: "dir", Value: "vigil-drill-data", Usage: "data directory of the deployment the drill starts"},
			&cli.DurationFlag{Name: "down-after", Value: 2 * time.Second, Usage: "sentinel down-after-milliseconds"},
			&cli.DurationFlag{Name: "failover-timeout", Value: 10 * time.Second, Usage: "sentinel failover-timeout"},
			&cli.DurationFlag{Name: "timeout", Value: time.Minute, Usage: "how long to wait for health or a failover after each fault"},
			&cli.DurationFlag{Name: "split-hold", Usage: "how long a split lasts before it heals, plus a seeded 0.5 to 1.5 s (default 4 x --down-after)"},
			&cli.StringSliceFlag{Name: "server-directive", Usage: "extra server config line, e.g. --server-directive 'min-replicas-to-write 1' (repeatable)"},
			&cli.StringSliceFlag{Name: "sentinel-directive", Usage: "extra sentinel config line (repeatable)"},
			&cli.BoolFlag{Name: "json", Usage: "progress as JSON lines even on a terminal"},
			&cli.StringFlag{Name: "net", Value: "auto", Usage: "how partitions are made: netns (a Linux network namespace per node, real packet loss; needs root, ip and nft), proxy (a TCP proxy in this process) or auto (netns when available, else proxy)"},
		},
		Action: runDrill,
	}
}

func runDrill(c *cli.Context) error {
	fault := c.String("fault")
	if !drill.ValidFault(fault) {
		return fmt.Errorf("--fault %q: want %s", fault, drill.FaultNames())
	}
	netMode := c.String("net")
	if netMode != "auto" && netMode != "netns" && netMode != "proxy" {
		return fmt.Errorf("--net %q: want netns, proxy or auto", netMode)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	go func() {
		select {
		case <-sigs:
			cancel()
		case <-ctx.Done():
		}
	}()

	cfg := drill.Config{Fault: fault, Rounds: c.Int("rounds"), Seed: c.Int64("seed"), Clients: c.Int("clients"),
		Wait: c.Int("wait"), MasterName: c.String("master-name"), Password: c.String("password"),
		DownAfter: c.Duration("down-after"), RecoverTimeout: c.Duration("timeout"), SplitHold: c.Duration("split-hold")}
	errw := c.App.ErrWriter
	if errw == nil {
		errw = os.Stderr
	}
	tty := !c.Bool("json") && isatty.IsTerminal(os.Stderr.Fd())
	cfg.Progress = func(p drill.Progress) {
		if tty {
			fmt.Fprintf(errw, "\r\033[Kround %d of %d: %s %s, writes ok %d", p.Round, p.Rounds, p.Fault, p.Phase, p.WritesOK)
			return
		}
		b, _ := json.Marshal(map[string]any{"type": "progress", "progress": p})
		fmt.Fprintln(errw, string(b))
	}
	// note says what the drill set up: a plain line on a terminal, a JSON
	// line {"type":"info","message":...} otherwise, so that stderr is all
	// JSON lines for scripts.
	note := func(format string, a ...any) {
		msg := fmt.Sprintf(format, a...)
		if tty {
			fmt.Fprintln(errw, msg)
			return
		}
		b, _ := json.Marshal(map[string]any{"type": "info", "message": msg})
		fmt.Fprintln(errw, string(b))
	}

	if c.Int("groups") < 1 {
		return fmt.Errorf("--groups %d: want at least 1", c.Int("groups"))
	}
	if addrs := c.StringSlice("sentinel"); len(addrs) > 0 {
		if c.Int("groups") > 1 {
			return errors.New("--groups starts a deployment of several groups: it cannot be used with --sentinel")
		}
		cfg.SentinelAddrs = addrs
	} else {
		against, server := c.String("against"), c.String("server")
		if against != "vigil" && against != "redis" {
			return fmt.Errorf("--against %q: want vigil or redis", against)
		}
		if server != "vigil" && server != "redis" {
			return fmt.Errorf("--server %q: want redis or vigil", server)
		}
		if against == "redis" && !c.IsSet("server") {
			server = "redis"
		}
		spec := deploy.Spec{Kind: deploy.Kind(server), SentinelKind: deploy.Kind(against), Dir: c.String("dir"),
			BasePort: c.Int("base-port"), SentinelBasePort: c.Int("sentinel-base-port"), MasterName: c.String("master-name"),
			Groups:    c.Int("groups"),
			DownAfter: c.Duration("down-after"), FailoverTimeout: c.Duration("failover-timeout"),
			ServerDirectives: c.StringSlice("server-directive"), SentinelDirectives: c.StringSlice("sentinel-directive"),
			StopTimeout: 5 * time.Second}
		partitions := fault == drill.FaultPartitionMaster || fault == drill.FaultAll
		// A split (--fault split, or a round of --fault all that draws
		// one) needs network namespaces: refuse before starting anything.
		splitWhy := splitRound(fault, c.Int("rounds"), c.Int64("seed"), c.Int("groups"))
		switch {
		case netMode == "netns":
			spec.Netns = true
			note("partitions: network namespaces (--net netns)")
		case splitWhy != "" && netMode == "proxy":
			return fmt.Errorf("%s, which needs --net netns: the TCP proxy sits in front of the servers only and cannot cut the sentinels off each other", splitWhy)
		case splitWhy != "":
			if err := deploy.NetnsAvailable(); err != nil {
				return fmt.Errorf("%s, which needs network namespaces (--net netns), unavailable here: %v", splitWhy, err)
			}
			spec.Netns = true
			note("partitions: network namespaces (root, ip netns and nft available)")
		case !partitions:
		case netMode == "proxy":
			spec.Proxy = true
			note("partitions: TCP proxy (--net proxy)")
		default:
			if err := deploy.NetnsAvailable(); err != nil {
				spec.Proxy = true
				note("partitions: TCP proxy (network namespaces unavailable: %v)", err)
			} else {
				spec.Netns = true
				note("partitions: network namespaces (root, ip netns and nft available)")
			}
		}
		d, err := deploy.New(spec)
		if err != nil {
			return err
		}
		if err := d.Start(); err != nil {
			return err
		}
		defer d.Stop()
		if n := len(d.Groups()); n > 1 {
			note("started %d %s servers in %d groups (%s) and %d %s sentinels in %s (%s)", len(d.Servers), server, n,
				strings.Join(d.Spec.GroupNames(), ", "), len(d.Sentinels), against, d.Spec.Dir, d.NetworkInfo())
		} else {
			note("started %d %s servers and %d %s sentinels in %s (%s)", len(d.Servers), server, len(d.Sentinels), against, d.Spec.Dir, d.NetworkInfo())
		}
		wctx, wcancel := context.WithTimeout(ctx, c.Duration("timeout"))
		var since time.Time
		err = d.WaitHealthyFunc(wctx, func(problems []string) {
			// vigil-server replicas that never start replicating will not:
			// say so after a few seconds instead of at --timeout.
			if server != "vigil" || !strings.Contains(strings.Join(problems, ";"), "did not start replicating") {
				since = time.Time{}
				return
			}
			if since.IsZero() {
				since = time.Now()
			} else if time.Since(since) > 5*time.Second {
				wcancel()
			}
		})
		wcancel()
		if err != nil {
			if server == "vigil" && strings.Contains(err.Error(), "replica") {
				err = fmt.Errorf("%w\n(the vigil-server replicas never came up; see each node's output.log under --dir)", err)
			}
			return err
		}
		cfg.Deployment = d
	}
	rep, err := drill.Run(ctx, cfg)
	if tty {
		fmt.Fprintln(errw)
	}
	if err != nil {
		return err
	}
	rep.WriteText(c.App.Writer)
	dir := c.String("report")
	if err := rep.WriteFiles(dir); err != nil {
		return err
	}
	fmt.Fprintf(c.App.Writer, "\nreport: %s/report.json, timeline: %s/timeline.svg\n", dir, dir)
	return drillExit(rep, c.Bool("expect-no-loss"))
}

// splitRound says why the drill's schedule holds a split ("" when it does
// not): the deployment the drill starts has 3 servers per group and 3
// sentinels.
func splitRound(fault string, rounds int, seed int64, groups int) string {
	if fault == drill.FaultSplit {
		return "--fault split"
	}
	sched, err := drill.ScheduleGroups(seed, fault, rounds, 3, 3, max(groups, 1))
	if err != nil {
		return ""
	}
	for _, s := range sched {
		if s.Fault == drill.FaultSplit {
			return fmt.Sprintf("--fault %s --seed %d draws split in round %d", fault, seed, s.Round)
		}
	}
	return ""
}

// drillExit is the drill's verdict once the report is out: with
// --expect-no-loss, status 3 when an acknowledged write was lost (with
// --wait N, a write acknowledged by WAIT; otherwise any SET OK), else nil.
func drillExit(rep *drill.Report, expectNoLoss bool) error {
	if n := rep.Loss.AckedLost(); expectNoLoss && n > 0 {
		return cli.Exit(fmt.Sprintf("vigil drill: %d acknowledged write(s) lost (--expect-no-loss)", n), 3)
	}
	return nil
}
