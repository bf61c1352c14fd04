package client

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"time"
)

// ReadFrom says where read-only commands go.
type ReadFrom int

const (
	// Master sends every command to the master (the default): reads see
	// every acknowledged write.
	Master ReadFrom = iota
	// Replica sends read-only commands to a healthy replica (chosen at
	// random), falling back to the master when no replica is usable. Reads
	// may be stale by the replication lag.
	Replica
	// Nearest sends read-only commands to the node (master or healthy
	// replica) with the lowest measured PING latency.
	Nearest
)

func (r ReadFrom) String() string {
	switch r {
	case Master:
		return "master"
	case Replica:
		return "replica"
	case Nearest:
		return "nearest"
	}
	return "unknown"
}

// Options configure a Client.
type Options struct {
	// MasterName is the name the sentinels monitor the master under.
	MasterName string
	// SentinelAddrs are the initial sentinels ("host:port"). The list grows
	// with what SENTINEL SENTINELS reports.
	SentinelAddrs []string
	// SentinelUsername and SentinelPassword authenticate to the sentinels.
	SentinelUsername string
	SentinelPassword string

	// Username, Password and DB are for the data nodes.
	Username string
	Password string
	DB       int
	// ClientName is sent with CLIENT SETNAME / HELLO SETNAME.
	ClientName string
	// Protocol is the RESP version for data connections (2 or 3, default 3).
	Protocol int

	// TLSConfig, when set, makes every connection to a data node TLS (the
	// servers' tls-port). SentinelTLSConfig is the sentinels' (their
	// tls-port); when nil, TLSConfig is used for them too, as go-redis's
	// FailoverClient does. A configuration without ServerName verifies the
	// node's certificate for the host it dials.
	TLSConfig         *tls.Config
	SentinelTLSConfig *tls.Config

	// ReadFrom routes read-only commands (see ReadOnlyCommand).
	ReadFrom ReadFrom
	// RetryWrites lets the client retry commands that are not in the
	// read-only set after a connection error, -READONLY, -MASTERDOWN or
	// -LOADING. A retried write may be applied twice (the first attempt
	// may have reached the old master), so it is off by default.
	RetryWrites bool
	// MaxRetries is how often a failed command is retried after rediscovery
	// (default 5; -1 disables retries).
	MaxRetries int
	// MinRetryBackoff and MaxRetryBackoff bound the sleep between retries
	// (defaults 50 ms and 1 s); the backoff doubles per attempt.
	MinRetryBackoff time.Duration
	MaxRetryBackoff time.Duration

	// DialTimeout bounds a TCP connect to a node or a sentinel (default 2 s).
	DialTimeout time.Duration
	// MasterWait bounds how long a new master connection waits for a
	// reachable master whose ROLE is master (default 10 s; the command's
	// context bounds it too). During a failover, commands wait for the new
	// master instead of failing at once, and wake as soon as +switch-master
	// arrives.
	MasterWait time.Duration
	// SentinelTimeout bounds one sentinel query (default 1 s). Sentinels
	// are asked in parallel, so one that never answers costs nothing once
	// another one has answered.
	SentinelTimeout time.Duration
	// ReadTimeout and WriteTimeout are passed to go-redis (defaults 3 s).
	ReadTimeout  time.Duration
	WriteTimeout time.Duration
	// PoolSize per node (go-redis default when 0).
	PoolSize int

	// OnMasterChange, when set, is called (from the goroutine that noticed)
	// after the client switched to a new master address, before any write
	// goes there. source is "+switch-master" or "discovery".
	OnMasterChange func(oldAddr, newAddr, source string)
}

func (o *Options) init() error {
	if o.MasterName == "" {
		return errors.New("client: Options.MasterName is required")
	}
	if len(o.SentinelAddrs) == 0 {
		return errors.New("client: Options.SentinelAddrs is empty")
	}
	if o.MaxRetries == 0 {
		o.MaxRetries = 5
	} else if o.MaxRetries < 0 {
		o.MaxRetries = 0
	}
	if o.MinRetryBackoff <= 0 {
		o.MinRetryBackoff = 50 * time.Millisecond
	}
	if o.MaxRetryBackoff <= 0 {
		o.MaxRetryBackoff = time.Second
	}
	if o.DialTimeout <= 0 {
		o.DialTimeout = 2 * time.Second
	}
	if o.MasterWait <= 0 {
		o.MasterWait = 10 * time.Second
	}
	if o.MasterWait < o.DialTimeout {
		o.MasterWait = o.DialTimeout
	}
	if o.SentinelTimeout <= 0 {
		o.SentinelTimeout = time.Second
	}
	if o.ReadTimeout == 0 {
		o.ReadTimeout = 3 * time.Second
	}
	if o.WriteTimeout == 0 {
		o.WriteTimeout = o.ReadTimeout
	}
	if o.Protocol == 0 {
		o.Protocol = 3
	}
	if o.SentinelTLSConfig == nil {
		o.SentinelTLSConfig = o.TLSConfig
	}
	return nil
}

// dialTLS dials addr, then makes the connection a TLS client of cfg when cfg
// is set (the handshake bounded by ctx and timeout).
func dialTLS(ctx context.Context, timeout time.Duration, network, addr string, cfg *tls.Config) (net.Conn, error) {
	d := net.Dialer{Timeout: timeout}
	nc, err := d.DialContext(ctx, network, addr)
	if err != nil || cfg == nil {
		return nc, err
	}
	c := cfg.Clone()
	if c.ServerName == "" && !c.InsecureSkipVerify {
		if host, _, err := net.SplitHostPort(addr); err == nil {
			c.ServerName = host
		}
	}
	hctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	tc := tls.Client(nc, c)
	if err := tc.HandshakeContext(hctx); err != nil {
		_ = nc.Close()
		return nil, err
	}
	return tc, nil
}
