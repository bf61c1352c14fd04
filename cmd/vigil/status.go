package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/urfave/cli/v2"

	"github.com/vigil-kv/vigil/internal/deploy"
)

func statusCommand() *cli.Command {
	return &cli.Command{
		Name:  "status",
		Usage: "show a deployment's status through its sentinels (Vigil or Redis)",
		Description: "Asks the sentinel for the master, its replicas and the other sentinels (SENTINEL master,\n" +
			"replicas, sentinels), then every node's INFO, and prints roles, pids, offsets, lag and each\n" +
			"sentinel's view. --watch refreshes every second and shows the sentinels' events.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "sentinel", Required: true, Usage: "a sentinel's host:port (repeatable); the others are discovered"},
			&cli.StringSliceFlag{Name: "master", Value: cli.NewStringSlice("mymaster"), Usage: "the master's name (repeatable: one status per master)"},
			&cli.BoolFlag{Name: "all-masters", Usage: "show every master the sentinel monitors (SENTINEL MASTERS), e.g. the groups of vigil up --groups"},
			&cli.BoolFlag{Name: "json", Usage: "print the status as JSON lines"},
			&cli.BoolFlag{Name: "watch", Usage: "refresh every second and show events until Ctrl-C"},
			&cli.BoolFlag{Name: "history", Usage: "print each sentinel's last failovers (SENTINEL TIMELINE, vigil-sentinel)"},
		},
		Action: runStatus,
	}
}

func runStatus(c *cli.Context) error {
	masters := c.StringSlice("master")
	if c.Bool("all-masters") {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		names, err := deploy.MasterNames(ctx, c.StringSlice("sentinel"))
		cancel()
		if err != nil {
			return err
		}
		if len(names) == 0 {
			return errors.New("the sentinels monitor no master (SENTINEL MASTERS is empty)")
		}
		masters = names
	}
	var cols []*deploy.Collector
	for _, m := range masters {
		col := deploy.NewCollector(deploy.CollectOptions{Sentinels: c.StringSlice("sentinel"), MasterName: m})
		defer col.Close()
		cols = append(cols, col)
	}
	v := newView(c.App.Writer, c.Bool("json"), "vigil status")
	if c.Bool("watch") {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		st := cols[0].Collect(ctx)
		var addrs []string
		for _, s := range st.Sentinels {
			addrs = append(addrs, s.Addr)
		}
		watch(ctx, v, cols, addrs)
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if c.Bool("history") {
		st := cols[0].Collect(ctx)
		var found []string
		for _, s := range st.Sentinels {
			found = append(found, s.Addr)
		}
		for _, m := range masters {
			answered := false
			for _, a := range historyTargets(c.StringSlice("sentinel"), found) {
				recs, err := fetchHistory(ctx, a, m)
				answered = answered || err == nil
				printHistory(c.App.Writer, a, recs, err, c.Bool("json"))
			}
			if !answered {
				return fmt.Errorf("no sentinel gave the failover history of master %q", m)
			}
		}
		return nil
	}
	sts := make([]*deploy.Status, len(cols))
	for i, col := range cols {
		sts[i] = col.Collect(ctx)
	}
	v.tty = false
	v.statuses(sts)
	for i, st := range sts {
		if err := statusErr(st, masters[i]); err != nil {
			return err
		}
	}
	return nil
}

// statusErr is nil when a sentinel gave the status; else it says why,
// naming the master (a sentinel that answers "No such master" did answer).
func statusErr(st *deploy.Status, master string) error {
	for _, s := range st.Sentinels {
		if s.Error == "" {
			return nil
		}
	}
	if len(st.Sentinels) == 0 {
		return errors.New("no sentinel answered")
	}
	s := st.Sentinels[0]
	return fmt.Errorf("no sentinel gave the status of master %q (%s: %s)", master, s.Addr, s.Error)
}
