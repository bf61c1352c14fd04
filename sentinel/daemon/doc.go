// Package daemon is the shell around the sentinel core (package sentinel):
// the process side of vigil-sentinel, behaving like redis-sentinel 7.0.15 on
// the wire.
//
//   - config.go: LoadConfig reads sentinel.conf and the --directive
//     arguments (server directives through configs.Load, sentinel lines in
//     sentinel.c's three passes with its error texts and line numbers);
//     RewriteContent/Settings.Rewrite is rewriteConfig in sentinel mode,
//     written atomically (temp file, fsync, rename).
//   - daemon.go: Daemon owns one sentinel.Core on a single event-loop
//     goroutine (Run): a timer delivers Ticked every Core.TickDelay() ms,
//     links and clients hand facts to the loop through an unbounded inbox,
//     and the loop executes the core's actions (Connect, SendPing, SendInfo,
//     PublishHello, AskMasterDown, the SLAVEOF transaction, RewriteConfig,
//     Notify, RunScript, Crash). Connections are keyed by Ref.Link; events of
//     a connection that was replaced or closed are dropped, as the core's
//     contract requires.
//   - link.go: the asynchronous pipelined RESP2 link to an instance (hiredis
//     async context); as hiredis, an error reply no command waits for (the
//     -NOAUTH answering SUBSCRIBE) closes it.
//   - server.go, commands.go, sentinel_cmds.go, command_cmd.go, acl.go,
//     info.go, pubsub.go: the client side: the 15 commands of sentinel mode
//     (SENTINEL, INFO, ROLE, HELLO, AUTH, CLIENT, COMMAND, ACL, SUBSCRIBE,
//     PUBLISH of hellos...) over RESP2/RESP3, and the event channels
//     clients subscribe to (+switch-master...). COMMAND's replies are
//     redis-sentinel 7.0.15's, recorded in command_*.resp. The listeners,
//     the connection loop, the command table type and its lookup, AUTH,
//     HELLO and the CLIENT subcommands are internal/netshell's, shared
//     with vigil-server; what is the sentinel's here is its client line,
//     its table rows and handlers, and the hooks of netshell.Loop.
//   - acl.go: the ACL of acl.c, internal/acl's (shared with vigil-server),
//     and its glue: users from the "user" lines
//     (requirepass is the default user's password), AUTH/HELLO AUTH of
//     named users, the permission check of every command (NOPERM, channel
//     patterns of SUBSCRIBE/PSUBSCRIBE/PUBLISH), ACL SETUSER/GETUSER/
//     DELUSER/LIST/USERS/WHOAMI/CAT/GENPASS/DRYRUN/LOG, users written back
//     by the config rewrite as ACL LIST shows them.
//   - scripts.go: notification and client-reconfig scripts (16 running, 256
//     queued, SCRIPT-MAX-RUNTIME, retries with a doubling delay).
//
// Tests: testdata/replies.txt and testdata/acl_replies.txt replay replies
// recorded from redis-sentinel 7.0.15; testdata/rewrite holds config rewrite golden files (go test
// -run TestRewriteGolden -update records them; check them against
// redis-sentinel); the loopback tests run Debian's redis-server and skip
// without it.
//
// It may import sentinel, internal/resp, internal/clock, configs,
// internal/redistext (the reply texts it shares with vigil-server) and the
// chosen libraries.
package daemon
