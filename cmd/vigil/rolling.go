package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v2"

	"github.com/vigil-kv/vigil/internal/deploy"
)

func rollingRestartCommand() *cli.Command {
	return &cli.Command{
		Name:  "rolling-restart",
		Usage: "restart every node of a supervised deployment without losing an acknowledged write",
		Description: "Restarts the replicas one at a time, then hands the master's role over through the\n" +
			"sentinels (SENTINEL FAILOVER <master> COORDINATED: the master pauses writes until the chosen\n" +
			"replica has all of them; vigil-sentinel only), then restarts the old master (now a replica; its\n" +
			"config is rewritten first) and the sentinels, waiting for a healthy deployment after each step.\n" +
			"Each node is asked to exit with SHUTDOWN and must be started again by its supervisor (systemd,\n" +
			"a container runtime): the step waits until it answers with a new pid. If the hand-over times\n" +
			"out or is aborted the master stays in place, nothing is lost, and the command fails.",
		Flags: []cli.Flag{
			&cli.StringSliceFlag{Name: "sentinel", Required: true, Usage: "a sentinel's host:port (repeatable); the others are discovered"},
			&cli.StringFlag{Name: "master", Value: "mymaster", Usage: "the master's name"},
			&cli.DurationFlag{Name: "timeout", Value: 2 * time.Minute, Usage: "how long each step may take"},
		},
		Action: runRollingRestart,
	}
}

func runRollingRestart(c *cli.Context) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	out := c.App.Writer
	r := &remoteRolling{opts: deploy.CollectOptions{Sentinels: c.StringSlice("sentinel"), MasterName: c.String("master")},
		timeout: c.Duration("timeout"), log: func(s string) { fmt.Fprintln(out, s) }}
	return r.run(ctx)
}

// remoteRolling is a rolling restart of a deployment reached through its
// sentinels, whose processes a supervisor restarts when they exit.
type remoteRolling struct {
	opts          deploy.CollectOptions
	timeout       time.Duration
	log           func(string)
	wantReplicas  int
	wantSentinels int
}

func (r *remoteRolling) collect(ctx context.Context) *deploy.Status {
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	return deploy.Collect(cctx, r.opts)
}

// healthy waits until the deployment has its replicas and sentinels back.
func (r *remoteRolling) healthy(ctx context.Context) (*deploy.Status, error) {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	for {
		st := r.collect(ctx)
		problems := st.Health(r.wantReplicas, r.wantSentinels)
		if len(problems) == 0 {
			return st, nil
		}
		select {
		case <-ctx.Done():
			return st, fmt.Errorf("the deployment is not healthy: %v", problems)
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func (r *remoteRolling) run(ctx context.Context) error {
	st := r.collect(ctx)
	if st.MasterAddr == "" {
		return statusErr(st, r.opts.MasterName)
	}
	r.wantReplicas, r.wantSentinels = len(st.Servers)-1, len(st.Sentinels)
	if _, err := r.healthy(ctx); err != nil {
		return fmt.Errorf("before the restart: %w", err)
	}
	master := st.MasterAddr
	pids := map[string]int{}
	var replicas, sentinels []string
	for _, s := range st.Servers {
		pids[s.Addr] = s.Pid
		if s.Addr != master {
			replicas = append(replicas, s.Addr)
		}
	}
	for _, s := range st.Sentinels {
		pids[s.Addr] = s.Pid
		sentinels = append(sentinels, s.Addr)
	}
	for _, a := range replicas {
		if err := r.restart(ctx, a, pids[a], false); err != nil {
			return err
		}
	}
	if len(replicas) > 0 {
		r.log("hand over from " + master)
		hctx, cancel := context.WithTimeout(ctx, r.timeout)
		nu, err := deploy.HandOverVia(hctx, r.opts.Sentinels, r.opts.MasterName, master, func(ctx context.Context) (string, error) {
			return r.collect(ctx).MasterAddr, nil
		})
		cancel()
		if err != nil {
			return fmt.Errorf("hand-over from %s: %w", master, err)
		}
		r.log("new master " + nu)
		if _, err := r.healthy(ctx); err != nil {
			return fmt.Errorf("after the hand-over: %w", err)
		}
	}
	if err := r.restart(ctx, master, pids[master], true); err != nil {
		return err
	}
	for _, a := range sentinels {
		if err := r.restart(ctx, a, pids[a], false); err != nil {
			return err
		}
	}
	r.log("done")
	return nil
}

// restart asks the node at addr to exit (SHUTDOWN; CONFIG REWRITE first
// when rewrite) and waits until it answers with another pid than pid and
// the deployment is healthy.
func (r *remoteRolling) restart(ctx context.Context, addr string, pid int, rewrite bool) error {
	r.log("restart " + addr)
	cl := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, DisableIdentity: true, MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: 5 * time.Second})
	defer cl.Close()
	if rewrite {
		_ = cl.Do(ctx, "CONFIG", "REWRITE").Err()
	}
	// No reply on success: the connection closes as the node exits.
	if err := cl.Do(ctx, "SHUTDOWN").Err(); err != nil && isErrorReply(err) {
		return fmt.Errorf("SHUTDOWN %s: %w", addr, err)
	}
	ctx2, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	for {
		if p := r.pidOf(ctx2, addr); p != 0 && p != pid {
			break
		}
		select {
		case <-ctx2.Done():
			return fmt.Errorf("%s did not come back (is it supervised?)", addr)
		case <-time.After(200 * time.Millisecond):
		}
	}
	if _, err := r.healthy(ctx); err != nil {
		return fmt.Errorf("after restarting %s: %w", addr, err)
	}
	return nil
}

func (r *remoteRolling) pidOf(ctx context.Context, addr string) int {
	st := r.collect(ctx)
	for _, s := range st.Servers {
		if s.Addr == addr && s.Error == "" {
			return s.Pid
		}
	}
	for _, s := range st.Sentinels {
		if s.Addr == addr && s.Error == "" {
			return s.Pid
		}
	}
	return 0
}

// isErrorReply tells a server's error reply from a dropped connection.
func isErrorReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}
