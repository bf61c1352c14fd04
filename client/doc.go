// Package client is a sentinel-aware Redis client built on go-redis v9. It
// imports only go-redis and the standard library (no server-side package;
// internal/archtest enforces it).
//
// New returns a *Client that embeds a *redis.Client (so it is a
// redis.UniversalClient with every go-redis command) whose connections always
// go to the current master of a sentinel-monitored deployment:
//
//   - Discovery asks every known sentinel in parallel for
//     SENTINEL GET-MASTER-ADDR-BY-NAME and takes the first good answer. A
//     sentinel that accepts connections but never answers costs nothing once
//     another one has answered (go-redis#3652: FailoverClient asked them in
//     turn, so one hung sentinel stalled every new connection for its whole
//     timeout).
//   - "Good" means verified: the client connects to the address and runs ROLE;
//     an address whose ROLE is not master (a stale sentinel naming a demoted
//     master or a replica) is rejected. Every new pooled connection is checked
//     with ROLE again (OnConnect), so a node demoted between discovery and
//     dial is never used. FailoverClient verifies nothing and only learns from
//     -READONLY or Sentinel's CLIENT KILL.
//   - The sentinel list grows from SENTINEL SENTINELS, and the sentinel that
//     answered moves to the front, so discovery survives the loss of the
//     sentinels the application was configured with.
//   - The client subscribes to +switch-master on every known sentinel (not just
//     one) and switches at once: the new address becomes current and every
//     pooled connection to the old master is closed. Writes are guarded at the
//     connection: a write on a connection whose address is no longer the
//     current master is refused before a byte is sent (ErrStaleMaster), so
//     nothing reaches the demoted master after the switch. Pub/sub is never
//     relied on alone: errors trigger rediscovery too.
//   - New connections wait for a verified master (Options.MasterWait, bounded
//     by the command's context) and wake the moment the master changes.
//     Failing dials quickly would trip go-redis's dial circuit breaker, which
//     then probes only once a second.
//   - -READONLY, -MASTERDOWN, -LOADING, ROLE mismatches and connection errors
//     trigger rediscovery. Commands in the read-only set (ReadOnlyCommand:
//     GET, MGET, EXISTS, TTL, HGET, ZRANGE, ...) are retried automatically
//     (Options.MaxRetries, with backoff); other commands are retried only
//     with Options.RetryWrites, because a write that failed with a connection
//     error may have been applied. go-redis's own retries are turned off so
//     that this decision is the client's. Pipelines and transactions are not
//     retried; their errors trigger rediscovery like single commands'.
//   - Options.ReadFrom routes read-only commands: Master (default), Replica
//     (a random healthy replica) or Nearest (the node with the lowest measured
//     PING latency, master included). Replicas come from SENTINEL REPLICAS,
//     minus those flagged s_down, o_down or disconnected or whose
//     master-link-status is not ok, and are checked with ROLE (a replica with
//     its link up). With no usable replica reads go to the master; a read
//     that fails on a replica is retried on the master.
//
// Sub-package lock is a distributed lock with a watchdog, reentrancy, WAIT for
// replicas and fencing tokens.
package client
