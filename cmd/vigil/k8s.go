package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/urfave/cli/v2"

	"github.com/vigil-kv/vigil/internal/deploy"
	"github.com/vigil-kv/vigil/internal/netshell"
)

// The subcommands a FROM-scratch container image needs, where there is no
// shell for probes, hooks and init steps (configs/examples/k8s).

func probeCommand() *cli.Command {
	return &cli.Command{
		Name:  "probe",
		Usage: "readiness probe: exit 0 when the node answers PING with PONG, -LOADING or -MASTERDOWN, 1 otherwise",
		Description: "The replies redis-server's and redis-sentinel's usual readiness probes accept: a node that is\n" +
			"loading its data set or a replica whose master link is down is alive and will serve.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:6379", Usage: "host:port of the node"},
			&cli.StringFlag{Name: "password", EnvVars: []string{"VIGIL_PROBE_PASSWORD"}, Usage: "AUTH password"},
			&cli.DurationFlag{Name: "timeout", Value: 2 * time.Second, Usage: "connect and reply timeout"},
			// redis-cli's names, for a node on its tls-port.
			&cli.BoolFlag{Name: "tls", Usage: "connect with TLS (the node's tls-port)"},
			&cli.StringFlag{Name: "cacert", Usage: "with --tls: the CA that signed the node's certificate (default: the system's)"},
			&cli.StringFlag{Name: "cert", Usage: "with --tls: a client certificate (tls-auth-clients yes)"},
			&cli.StringFlag{Name: "key", Usage: "with --tls: the client certificate's key"},
			&cli.BoolFlag{Name: "insecure", Usage: "with --tls: do not verify the node's certificate"},
		},
		Action: func(c *cli.Context) error {
			ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
			defer cancel()
			var tc *tls.Config
			if c.Bool("tls") {
				var err error
				if tc, err = probeTLS(c.String("cacert"), c.String("cert"), c.String("key"), c.Bool("insecure")); err != nil {
					return cli.Exit("probe: "+err.Error(), 1)
				}
			}
			if err := probeWith(ctx, c.String("addr"), c.String("password"), c.Duration("timeout"), tc); err != nil {
				return cli.Exit("probe: "+err.Error(), 1)
			}
			return nil
		},
	}
}

// probe PINGs addr once. PONG, -LOADING and -MASTERDOWN are healthy.
func probe(ctx context.Context, addr, password string, timeout time.Duration) error {
	return probeWith(ctx, addr, password, timeout, nil)
}

// probeWith is probe over TLS when tc is set.
func probeWith(ctx context.Context, addr, password string, timeout time.Duration, tc *tls.Config) error {
	d := net.Dialer{Timeout: timeout}
	var nc net.Conn
	var err error
	if tc != nil {
		nc, err = (&tls.Dialer{NetDialer: &d, Config: tc}).DialContext(ctx, "tcp", addr)
	} else {
		nc, err = d.DialContext(ctx, "tcp", addr)
	}
	if err != nil {
		return err
	}
	defer nc.Close()
	if dl, ok := ctx.Deadline(); ok {
		_ = nc.SetDeadline(dl)
	}
	req := "PING\r\n"
	if password != "" {
		req = fmt.Sprintf("*2\r\n$4\r\nAUTH\r\n$%d\r\n%s\r\n", len(password), password) + req
	}
	if _, err := io.WriteString(nc, req); err != nil {
		return err
	}
	r := newLineReader(nc)
	if password != "" {
		line, err := r()
		if err != nil {
			return err
		}
		if !strings.HasPrefix(line, "+OK") {
			return fmt.Errorf("AUTH: %s", strings.TrimPrefix(line, "-"))
		}
	}
	line, err := r()
	if err != nil {
		return err
	}
	return probeReply(line)
}

// probeTLS is the probe's TLS configuration: the node's certificate
// verified against cacert (the system's CAs when empty) without a host
// name check, as the servers verify their peers (a pod's probe dials
// 127.0.0.1, which a node certificate rarely names); a client pair when
// cert and key are given.
func probeTLS(cacert, cert, key string, insecure bool) (*tls.Config, error) {
	var pool *x509.CertPool
	if cacert != "" {
		b, err := os.ReadFile(cacert)
		if err != nil {
			return nil, err
		}
		pool = x509.NewCertPool()
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("%s: no certificate found", cacert)
		}
	}
	tc := &tls.Config{InsecureSkipVerify: true}
	if !insecure {
		tc.VerifyPeerCertificate = netshell.VerifyChain(pool)
	}
	if cert != "" || key != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, err
		}
		tc.Certificates = []tls.Certificate{pair}
	}
	return tc, nil
}

// probeReply judges the first line of the reply to PING.
func probeReply(line string) error {
	switch {
	case line == "+PONG":
		return nil
	case strings.HasPrefix(line, "-LOADING"), strings.HasPrefix(line, "-MASTERDOWN"):
		return nil
	case strings.HasPrefix(line, "-"):
		return errors.New(line[1:])
	}
	return fmt.Errorf("unexpected reply %q", line)
}

// newLineReader reads CRLF-terminated lines (simple and error replies).
func newLineReader(r io.Reader) func() (string, error) {
	var buf []byte
	one := make([]byte, 1)
	return func() (string, error) {
		buf = buf[:0]
		for len(buf) < 4096 {
			if _, err := r.Read(one); err != nil {
				return "", err
			}
			if one[0] == '\n' {
				return strings.TrimSuffix(string(buf), "\r"), nil
			}
			buf = append(buf, one[0])
		}
		return "", errors.New("reply line too long")
	}
}

func handoverCommand() *cli.Command {
	return &cli.Command{
		Name:  "handover",
		Usage: "preStop hook: when the local node is the master, hand over with SENTINEL FAILOVER <m> COORDINATED and wait",
		Description: "Does nothing (exit 0) when the node at --addr is a replica. Otherwise asks the sentinels for a\n" +
			"coordinated failover (writes pause until the chosen replica caught up, no acknowledged write lost)\n" +
			"and waits until the sentinels report another master, or --timeout.",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "addr", Value: "127.0.0.1:6379", Usage: "host:port of the local node"},
			&cli.StringSliceFlag{Name: "sentinel", Required: true, Usage: "a sentinel's host:port (repeatable)"},
			&cli.StringFlag{Name: "master", Value: "mymaster", Usage: "the master's name"},
			&cli.StringFlag{Name: "password", EnvVars: []string{"VIGIL_PROBE_PASSWORD"}, Usage: "AUTH password of the local node"},
			&cli.DurationFlag{Name: "timeout", Value: time.Minute, Usage: "how long the hand-over may take"},
		},
		Action: func(c *cli.Context) error {
			ctx, cancel := context.WithTimeout(c.Context, c.Duration("timeout"))
			defer cancel()
			local := redis.NewClient(&redis.Options{Addr: c.String("addr"), Password: c.String("password"),
				DialTimeout: 2 * time.Second, MaxRetries: -1, Protocol: 2})
			defer local.Close()
			role, err := local.Do(ctx, "ROLE").Slice()
			if err != nil {
				return cli.Exit("handover: ROLE: "+err.Error(), 1)
			}
			if len(role) == 0 || role[0] != "master" {
				fmt.Fprintln(c.App.Writer, "handover: not the master, nothing to do")
				return nil
			}
			sentinels, name := c.StringSlice("sentinel"), c.String("master")
			current := func(ctx context.Context) (string, error) {
				var errs []error
				for _, s := range sentinels {
					cl := redis.NewSentinelClient(&redis.Options{Addr: s, DialTimeout: 2 * time.Second, MaxRetries: -1})
					a, err := cl.GetMasterAddrByName(ctx, name).Result()
					cl.Close()
					if err == nil && len(a) == 2 {
						return net.JoinHostPort(a[0], a[1]), nil
					}
					errs = append(errs, err)
				}
				return "", errors.Join(errs...)
			}
			old, err := current(ctx)
			if err != nil {
				return cli.Exit("handover: asking the sentinels for the master: "+err.Error(), 1)
			}
			nu, err := deploy.HandOverVia(ctx, sentinels, name, old, current)
			if err != nil {
				return cli.Exit("handover: "+err.Error(), 1)
			}
			fmt.Fprintf(c.App.Writer, "handover: %s -> %s\n", old, nu)
			// The old master follows the new one in memory; persist that so
			// the pod restarts as a replica instead of as a second master.
			for {
				if r, err := local.Do(ctx, "ROLE").Slice(); err == nil && len(r) > 0 && r[0] == "slave" {
					if err := local.Do(ctx, "CONFIG", "REWRITE").Err(); err != nil {
						fmt.Fprintln(c.App.ErrWriter, "handover: CONFIG REWRITE:", err)
					}
					return nil
				}
				select {
				case <-ctx.Done():
					fmt.Fprintln(c.App.ErrWriter, "handover: the local node did not report role slave; config not rewritten")
					return nil
				case <-time.After(100 * time.Millisecond):
				}
			}
		},
	}
}

func installConfigCommand() *cli.Command {
	return &cli.Command{
		Name:      "install-config",
		Usage:     "init step: copy a config file to a writable place unless it is there already",
		ArgsUsage: "<from> <to>",
		Description: "Servers and sentinels rewrite their config file (CONFIG REWRITE after a failover, the\n" +
			"sentinel's state); a Kubernetes ConfigMap is read-only. The copy is written to a temporary\n" +
			"name and renamed; an existing <to> (the state of a previous run) is left alone.",
		Action: func(c *cli.Context) error {
			if c.NArg() != 2 {
				return cli.Exit("install-config: want <from> <to>", 2)
			}
			installed, err := installConfig(c.Args().Get(0), c.Args().Get(1))
			if err != nil {
				return cli.Exit("install-config: "+err.Error(), 1)
			}
			if installed {
				fmt.Fprintf(c.App.Writer, "installed %s\n", c.Args().Get(1))
			} else {
				fmt.Fprintf(c.App.Writer, "kept the existing %s\n", c.Args().Get(1))
			}
			return nil
		},
	}
}

func installConfig(from, to string) (bool, error) {
	if _, err := os.Stat(to); err == nil {
		return false, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return false, err
	}
	data, err := os.ReadFile(from)
	if err != nil {
		return false, err
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return false, err
	}
	tmp := to + ".tmp"
	if err := os.WriteFile(tmp, data, 0o644); err != nil {
		return false, err
	}
	return true, os.Rename(tmp, to)
}
