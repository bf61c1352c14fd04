// Package aof implements Redis 7.0's multi-part append-only file: the
// manifest, the writer with its fsync policies, the loader with
// truncated-tail repair, and the rewrite protocol. It imports
// internal/resp, server/keyspace and the standard library; the server
// (server/persist_aof.go) wires it to the write path and the keyspace.
//
// # Files (aof.c)
//
// The directory dir/appenddirname holds a base file, incremental files
// and the manifest "<appendfilename>.manifest" that lists them:
//
//	file appendonly.aof.2.base.rdb seq 2 type b
//	file appendonly.aof.1.incr.aof seq 1 type h
//	file appendonly.aof.3.incr.aof seq 3 type i
//
// Names are "<appendfilename>.<seq>.base.rdb|aof" and
// "<appendfilename>.<seq>.incr.aof". ParseManifest validates as
// aofLoadManifestFromFile (same messages: "Invalid AOF manifest file
// format", "Found duplicate base file information", "Found a
// non-monotonic sequence number", "Unknown AOF file type", ...);
// Manifest.Bytes writes getAofManifestAsString's format. WriteManifest
// writes temp-<name>, fsyncs it, renames it over the manifest and fsyncs
// the directory, so a crash leaves one whole manifest.
//
// # Writing (feedAppendOnlyFile, flushAppendOnlyFile)
//
// Writer.Append encodes a command with resp.CommandStream (SELECT when the
// database changes, exactly as the replication stream and Redis's AOF) into
// a buffer, under the server's execution lock. The server calls Flush
// before it releases the lock and writes the replies of a batch, as Redis's
// beforeSleep flushes before handleClientsWithPendingWrites:
//
//   - always: write and fsync; a failure is fatal for the server.
//   - everysec: write; once a second a goroutine (Redis's bio thread)
//     fsyncs, so the command path never waits for the disk. While that
//     fsync runs, writes are postponed up to two seconds, then done anyway
//     and counted (aof_delayed_fsync).
//   - no: write only.
//
// no-appendfsync-on-rewrite skips the fsync while a rewrite runs.
//
// # Loading (loadAppendOnlyFiles, loadSingleAppendOnlyFile)
//
// Manager.Load reads the manifest, upgrades an old single appendonly file
// (aofUpgradePrepare: it becomes the base, keeping its name, and moves into
// the directory), then replays the base and every incremental file through
// Options.Apply (the server's fake client). A file starting with "REDIS" is
// an RDB preamble, handed to Options.RDB (the server's RDB loader; without
// one it is refused). A command cut by the end of the last file (power
// loss) is dropped with aof-load-truncated yes: the file is truncated to
// the last complete command, or to before an unterminated MULTI, with
// Redis's "!!! Warning: short read while loading the AOF file ...!!!"
// warnings. Otherwise, and for any format error, loading stops with a
// CorruptError naming the file, the offset and redis-check-aof. The
// Scanner never allocates more than the bytes it actually read, whatever a
// length field claims (FuzzLoadAOF).
//
// # Rewrite (rewriteAppendOnlyFileBackground, backgroundRewriteDoneHandler)
//
// Go cannot fork; the rewrite stops no world either:
//
//  1. StartRewrite (under the lock) flushes the buffer, opens the next
//     incremental file and persists the manifest naming it: every write
//     from now on goes there. The server begins a keyspace Snapshot in the
//     same locked section, so snapshot + new incr file = the dataset.
//  2. WriteBaseFile serialises the snapshot into a temporary file
//     (temp-rewriteaof-bg-<pid>-<n>.aof in the directory), locking only for
//     each Snapshot.Step; the format is the server's BaseFormat: the RDB
//     encoder with aof-use-rdb-preamble yes, else CommandBase
//     (rewriteAppendOnlyFileRio: SELECT, SET, RPUSH/SADD/ZADD/HMSET by
//     ItemsPerCmd = 64, PEXPIREAT). It is fsynced and closed.
//  3. FinishRewrite (under the lock) renames it to the next base name, turns
//     the old base and the incr files before step 1's into history,
//     persists the manifest and deletes the history files
//     (aofDelHistoryFiles; with aof-disable-auto-gc yes they stay, listed
//     as type h, until it is set back to no). A crash at any point leaves
//     a manifest that describes complete files; start-up removes leftover
//     temp files.
//
// With the AOF off, CONFIG SET appendonly yes starts the same rewrite with
// the writer on temp-<appendfilename>.incr (AOF_WAIT_REWRITE), renamed to
// the new incr file when the base is in place. A failed attempt drops the
// buffer and removes the temporary file (aofDelTempIncrAofFile); nothing is
// kept until the server's next attempt opens it again.
package aof
