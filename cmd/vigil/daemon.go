package main

import (
	"os"

	"github.com/urfave/cli/v2"

	"github.com/vigil-kv/vigil/internal/sentinelmain"
	"github.com/vigil-kv/vigil/internal/servermain"
)

// serverCommand is `vigil server <redis-server args>`: exactly
// vigil-server, so `vigil up` needs no other binary. Hidden from help.
func serverCommand() *cli.Command {
	return &cli.Command{
		Name:            "server",
		Usage:           "run vigil-server (same arguments as redis-server)",
		Hidden:          true,
		SkipFlagParsing: true,
		HideHelp:        true,
		Action: func(c *cli.Context) error {
			os.Exit(servermain.Run(c.Args().Slice(), os.Stdin, os.Stdout, os.Stderr))
			return nil
		},
	}
}

// sentinelCommand is `vigil sentinel <redis-sentinel args>`: exactly
// vigil-sentinel. Hidden from help.
func sentinelCommand() *cli.Command {
	return &cli.Command{
		Name:            "sentinel",
		Usage:           "run vigil-sentinel (same arguments as redis-sentinel)",
		Hidden:          true,
		SkipFlagParsing: true,
		HideHelp:        true,
		Action: func(c *cli.Context) error {
			os.Exit(sentinelmain.Run(c.Args().Slice(), os.Stdout, os.Stderr))
			return nil
		},
	}
}
