package main

import (
	"os"

	"github.com/vigil-kv/vigil/internal/proctitle"
	"github.com/vigil-kv/vigil/internal/savechild"
	"github.com/vigil-kv/vigil/internal/servermain"
	"github.com/vigil-kv/vigil/server"
)

func main() {
	savechild.MaybeRunChild() // a background save's writer child exits here
	server.MaybeRunLdbChild() // a forked Lua debugging session's child too
	proctitle.Init()          // before anything reads os.Args or the environment
	savechild.Enable()
	server.EnableLdbFork()
	os.Exit(servermain.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
