package main

import (
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"
)

func main() {
	os.Exit(run(os.Args, os.Stdout, os.Stderr))
}

// run is the program minus os.Exit.
func run(args []string, stdout, stderr io.Writer) int {
	code := 0
	app := &cli.App{
		Name:           "vigil",
		Usage:          "operate Vigil deployments and files",
		Writer:         stdout,
		ErrWriter:      stderr,
		Commands:       []*cli.Command{checkAOFCommand(&code)},
		ExitErrHandler: func(*cli.Context, error) {},
	}
	if err := app.Run(args); err != nil {
		fmt.Fprintln(stderr, err)
		if code == 0 {
			code = 1
		}
	}
	return code
}
