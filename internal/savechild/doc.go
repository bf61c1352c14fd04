// Package savechild gives a background save (BGSAVE, the AOF rewrite) the
// child process Redis forks for it. Go cannot fork, so the server keeps
// serialising from its in-process copy-on-write snapshot and streams the
// bytes through a pipe to a child: the server's own executable
// (/proc/self/exe) re-executed in a hidden writer mode, which writes them
// to the temp file Redis's child writes (named after the CHILD's pid,
// temp-<pid>.rdb or temp-rewriteaof-bg-<pid>.aof, in the child's working
// directory), fsyncs it and exits 0. The parent renames the file and
// treats a child killed by a signal or exiting non-zero as Redis treats its
// fork child (rdb.c backgroundSaveDoneHandler, server.c checkChildrenDone).
//
// A Socket child (a diskless full sync's, "redis-rdb-to-slaves") writes
// no file: it copies stdin to fd 4, a pipe the parent reads and forwards
// to the replicas (Child.Out), closes it at EOF and waits on fd 3 for the
// parent's word that it may exit ('C': exit 0), as Redis's child waits on
// its safe-to-exit pipe.
//
// The child reads the data on stdin (fd 0) until EOF, then one byte on fd 3:
// 'C' commits (fsync, close, exit 0); anything else, or EOF (the parent
// aborted or died), removes the temp file and exits 1. SIGUSR1 (Redis's
// killRDBChild) removes the temp file and exits 255
// (SERVER_CHILD_NOERROR_RETVAL), which the parent reads as "killed by
// SIGUSR1", as Redis's sigKillChildHandler. The child's messages go to
// its stderr, which the parent logs.
//
// Nothing here needs a shell: the child is exec'ed directly, so it works
// in a FROM-scratch image. Only a main that calls MaybeRunChild first
// thing (and then Enable) re-executes itself: a test binary or an embedder
// never spawns itself by accident.
//
// It imports the standard library only.
package savechild
