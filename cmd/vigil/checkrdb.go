package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/urfave/cli/v2"

	"github.com/vigil-kv/vigil/server/rdb"
)

// checkRDBCommand is redis-check-rdb: `vigil check-rdb <file.rdb>` loads
// the whole file through the server's decoder (every value is parsed and
// the CRC-64 checksum verified) and prints redis-check-rdb's trace.
func checkRDBCommand(code *int) *cli.Command {
	return &cli.Command{
		Name:      "check-rdb",
		Usage:     "validate an RDB file, as redis-check-rdb",
		ArgsUsage: "<file.rdb>",
		Action: func(ctx *cli.Context) error {
			if ctx.NArg() != 1 {
				*code = 1
				return errors.New("Usage: vigil check-rdb <rdb-file-name>")
			}
			if !checkRDB(ctx.Args().First(), ctx.App.Writer) {
				*code = 1
				return cli.Exit("", 1)
			}
			return nil
		},
	}
}

// checkRDB prints redis-check-rdb's report of the file at path and
// returns whether it is valid.
func checkRDB(path string, out io.Writer) bool {
	fmt.Fprintf(out, "[offset 0] Checking RDB file %s\n", path)
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(out, "--- RDB ERROR DETECTED ---\n[offset 0] Cannot open file %s: %v\n", path, err)
		return false
	}
	defer f.Close()
	var size int64
	if fi, err := f.Stat(); err == nil {
		size = fi.Size()
	}
	pr := newProgress(f, size, path)
	ok := checkRDBStream(pr, 0, out, nil)
	pr.done()
	return ok
}

// checkRDBStream validates one RDB stream: rdb.Check.
func checkRDBStream(r io.Reader, base int64, out io.Writer, end *int64) bool {
	return rdb.Check(r, base, out, end)
}
