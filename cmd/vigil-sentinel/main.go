package main

import (
	"os"

	"github.com/vigil-kv/vigil/internal/proctitle"
	"github.com/vigil-kv/vigil/internal/sentinelmain"
)

func main() {
	proctitle.Init() // before anything reads os.Args or the environment
	os.Exit(sentinelmain.Run(os.Args[1:], os.Stdout, os.Stderr))
}
