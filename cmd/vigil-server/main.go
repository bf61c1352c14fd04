package main

import (
	"os"

	"github.com/vigil-kv/vigil/internal/proctitle"
	"github.com/vigil-kv/vigil/internal/servermain"
)

func main() {
	proctitle.Init() // before anything reads os.Args or the environment
	os.Exit(servermain.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
