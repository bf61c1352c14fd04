package main

import (
	"fmt"
	"os"

	"github.com/urfave/cli/v2"
)

// commands are vigil's subcommands, one file each.
var commands = []*cli.Command{
	upCommand(),
	statusCommand(),
	serverCommand(),
	sentinelCommand(),
	drillCommand(),
}

func main() {
	app := &cli.App{
		Name:     "vigil",
		Usage:    "run and inspect Vigil (and Redis) deployments",
		Commands: commands,
	}
	if err := app.Run(os.Args); err != nil {
		fmt.Fprintln(os.Stderr, "vigil:", err)
		os.Exit(1)
	}
}
