package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

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

// checkRDBStream validates one RDB stream (a file, or an AOF's RDB
// preamble followed by an AOF tail); end, when not nil, gets the RDB's
// length. Offsets are printed relative to base.
func checkRDBStream(r io.Reader, base int64, out io.Writer, end *int64) bool {
	var keys, expires, expired int
	now := time.Now().UnixMilli()
	var pending []rdb.AuxField
	var lastOff int64
	doing := "start"
	opts := rdb.LoadOptions{
		VerifyChecksum: true,
		OnAux: func(a rdb.AuxField) error {
			pending = append(pending, a)
			return nil
		},
		OnOp: func(op byte, off int64, arg uint64) {
			lastOff = off
			switch op {
			case rdb.OpAux:
				for _, a := range pending {
					fmt.Fprintf(out, "[offset %d] AUX FIELD %s = '%s'\n", base+off, a.Key, a.Value)
				}
				pending = pending[:0]
				doing = "read-aux"
			case rdb.OpSelectDB:
				fmt.Fprintf(out, "[offset %d] Selecting DB ID %d\n", base+off, arg)
				doing = "read-type"
			case rdb.OpEOF:
				if arg == 0 {
					fmt.Fprintf(out, "[offset %d] RDB file was saved with checksum disabled: no check performed.\n", base+off)
				} else {
					fmt.Fprintf(out, "[offset %d] Checksum OK\n", base+off)
				}
			default:
				doing = "read-object-value"
			}
		},
	}
	info, err := rdb.Load(r, opts, func(rec rdb.Record) error {
		keys++
		if rec.ExpireAt != 0 {
			expires++
			if rec.ExpireAt < now {
				expired++
			}
		}
		return nil
	})
	if end != nil {
		*end = info.Bytes
	}
	if err != nil {
		fmt.Fprintf(out, "--- RDB ERROR DETECTED ---\n")
		off, reason := lastOff, err.Error()
		var re *rdb.Error
		if errors.As(err, &re) {
			off, reason = re.Offset, re.Reason
			switch {
			case reason == rdb.ShortRead:
				reason = "Unexpected EOF reading RDB file"
			case strings.HasPrefix(reason, "Wrong RDB checksum"):
				reason = "RDB CRC error"
				doing = "check-sum"
			}
		}
		fmt.Fprintf(out, "[offset %d] %s\n", base+off, reason)
		fmt.Fprintf(out, "[additional info] While doing: %s\n", doing)
	} else {
		fmt.Fprintf(out, "[offset %d] \\o/ RDB looks OK! \\o/\n", base+info.Bytes)
	}
	fmt.Fprintf(out, "[info] %d keys read\n[info] %d expires\n[info] %d already expired\n", keys, expires, expired)
	return err == nil
}
