package main

import (
	"os"

	"github.com/vigil-kv/vigil/internal/sentinelmain"
)

func main() {
	os.Exit(sentinelmain.Run(os.Args[1:], os.Stdout, os.Stderr))
}
