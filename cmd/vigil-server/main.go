package main

import (
	"os"

	"github.com/vigil-kv/vigil/internal/servermain"
)

func main() {
	os.Exit(servermain.Run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
