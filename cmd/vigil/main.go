package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/vigil-kv/vigil/internal/savechild"
)

// commands are vigil's subcommands, one file each. code is set by the
// subcommands that exit with a specific status (check-aof).
func commands(code *int) []*cli.Command {
	return []*cli.Command{
		upCommand(),
		statusCommand(),
		rollingRestartCommand(),
		checkAOFCommand(code),
		checkRDBCommand(code),
		drillCommand(),
		serverCommand(),
		sentinelCommand(),
		probeCommand(),
		handoverCommand(),
		installConfigCommand(),
	}
}

func main() {
	savechild.MaybeRunChild() // `vigil server`'s background save writer child exits here
	savechild.Enable()
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// run is the program minus os.Exit.
func run(args []string, stdout, stderr io.Writer) int {
	code := 0
	app := &cli.App{
		Name:           "vigil",
		Usage:          "run, inspect and check Vigil (and Redis) deployments and files",
		Writer:         stdout,
		ErrWriter:      stderr,
		Commands:       commands(&code),
		ExitErrHandler: func(*cli.Context, error) {},
	}
	if err := app.Run(args); err != nil {
		if err.Error() != "" { // cli.Exit("", n): the report is already out
			fmt.Fprintln(stderr, "vigil:", err)
		}
		if ec, ok := err.(cli.ExitCoder); ok && code == 0 {
			code = ec.ExitCode() // drill --expect-no-loss: 3
		}
		if code == 0 {
			code = 1
		}
	}
	return code
}
