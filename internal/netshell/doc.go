// Package netshell is the network and command shell both binaries
// (vigil-server and vigil-sentinel) serve through:
//
//   - listen.go: the listeners (one tcp4/tcp6 rule per bind address, the
//     unix socket), the accept loop and the admission of a new connection
//     (maxclients, protected mode, TCP keepalive);
//   - loop.go: the per-connection loop (read, run the batch, write the
//     replies) with each binary's hooks, the server's raw-read fast path as
//     an option (RawLoopConn), and Batch, the run of every buffered command;
//   - cmdtable.go: the command table type (Command[H]: name, arity, the
//     Flag set, key range, ACL categories, subcommands, the binary's
//     handler type) with its index (NewTable), rename-command (Renamed),
//     the case-insensitive lookup and Resolve (subcommand, arity,
//     "parent|sub"), and ACL DRYRUN's LookupArgv;
//   - commands.go, client.go, hello.go: the rows both declare (ACL's,
//     CLIENT's and COMMAND's subcommands), AUTH, HELLO and the CLIENT
//     subcommands over a small Session interface of the binary's client,
//     the parsers of the CLIENT subcommands whose effect differs per
//     binary, and the CLIENT LIST/INFO line (ClientLine);
//   - replies.go: CLIENT REPLY's emulation over a reply buffer (Replies);
//   - pubsub.go, queue.go: the pub/sub hub and the bounded output queue
//     the sentinel writes through.
//
// The server's hot path calls Loop once per connection, Batch once per
// batch and Lookup/Resolve once per command; what is per binary (the
// execution lock, blocking, output limits, the client line) stays there.
//
// It imports the configuration, the RESP codec, the reply texts and the
// Redis string routines; never server or sentinel/daemon
// (internal/archtest), which depend on it.
package netshell
