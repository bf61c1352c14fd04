package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/urfave/cli/v2"

	"github.com/vigil-kv/vigil/server/aof"
)

// checkAOFCommand is redis-check-aof: `vigil check-aof [--fix |
// --truncate-to-timestamp <unix seconds>] <file.manifest|file.aof>`. A
// manifest is checked file by file (the base, then the incremental
// files); only the last file may be truncated, by --fix at the first bad
// command or by --truncate-to-timestamp at the first "#TS:" annotation
// later than the timestamp, as Redis's tool. An RDB-preamble base is
// validated in full by the RDB checker (check-rdb), then its AOF tail.
func checkAOFCommand(code *int) *cli.Command {
	return &cli.Command{
		Name:      "check-aof",
		Usage:     "validate (and with --fix, repair) an append-only file or manifest, as redis-check-aof",
		ArgsUsage: "<file.manifest|file.aof>",
		Flags: []cli.Flag{
			&cli.BoolFlag{Name: "fix", Usage: "truncate the file at the last valid command"},
			&cli.Int64Flag{Name: "truncate-to-timestamp", Usage: "truncate the last file at its first #TS: annotation later than this Unix time"},
		},
		Action: func(ctx *cli.Context) error {
			toTS := ctx.Int64("truncate-to-timestamp")
			if ctx.NArg() != 1 || (ctx.IsSet("truncate-to-timestamp") && (toTS <= 0 || ctx.Bool("fix"))) {
				*code = 1
				return errors.New("Usage: vigil check-aof [--fix|--truncate-to-timestamp $timestamp] <file.manifest|file.aof>")
			}
			ok := checkAOF(ctx.Args().First(), ctx.Bool("fix"), toTS, ctx.App.Writer)
			if !ok {
				*code = 1
				return cli.Exit("", 1)
			}
			return nil
		},
	}
}

// checkAOF prints redis-check-aof's report and returns whether the files
// are valid (after a fix).
// toTS is --truncate-to-timestamp's Unix time, 0 when not given.
func checkAOF(path string, fix bool, toTS int64, out io.Writer) bool {
	if strings.HasSuffix(path, ".manifest") {
		return checkManifest(path, fix, toTS, out)
	}
	fmt.Fprintf(out, "Start checking Old-Style AOF\n")
	ok, cut := checkOneFile(path, fix, toTS, true, out)
	if cut {
		timestampCut(out, path, toTS)
	}
	return ok
}

// fileVerdict is a checked file's last line in a manifest's report: its
// cut at the timestamp, or "<kind> AOF <name> is valid".
func fileVerdict(out io.Writer, kind, name string, cut bool, toTS int64) {
	if cut {
		timestampCut(out, name, toTS)
	} else {
		fmt.Fprintf(out, "%s AOF %s is valid\n", kind, name)
	}
}

func timestampCut(out io.Writer, name string, toTS int64) {
	fmt.Fprintf(out, "Successfully truncated AOF %s to timestamp %d\n", name, toTS)
}

func checkManifest(path string, fix bool, toTS int64, out io.Writer) bool {
	fmt.Fprintf(out, "Start checking Multi Part AOF\n")
	f, err := os.Open(path)
	if err != nil {
		fmt.Fprintf(out, "Cannot open file: %s\n", path)
		return false
	}
	m, err := aof.ParseManifest(bufio.NewReader(f))
	f.Close()
	if err != nil {
		fmt.Fprintf(out, "%v\n", err)
		return false
	}
	dir := filepath.Dir(path)
	files := m.Files()
	if len(files) == 0 {
		fmt.Fprintf(out, "The AOF manifest file is invalid (no base and no incr files)\n")
		return false
	}
	if m.Base != nil {
		fmt.Fprintf(out, "Start to check BASE AOF (%s format).\n", baseFormat(filepath.Join(dir, m.Base.Name)))
		ok, cut := checkOneFile(filepath.Join(dir, m.Base.Name), fix, toTS, len(m.Incr) == 0, out)
		if !ok {
			return false
		}
		fileVerdict(out, "BASE", m.Base.Name, cut, toTS)
	}
	for i, ai := range m.Incr {
		fmt.Fprintf(out, "Start to check INCR files.\n")
		ok, cut := checkOneFile(filepath.Join(dir, ai.Name), fix, toTS, i == len(m.Incr)-1, out)
		if !ok {
			return false
		}
		fileVerdict(out, "INCR", ai.Name, cut, toTS)
	}
	fmt.Fprintf(out, "All AOF files and manifest are valid\n")
	return true
}

func baseFormat(p string) string {
	f, err := os.Open(p)
	if err != nil {
		return "AOF"
	}
	defer f.Close()
	var sig [5]byte
	if n, _ := io.ReadFull(f, sig[:]); n == 5 && string(sig[:]) == "REDIS" {
		return "RDB"
	}
	return "AOF"
}

// checkOneFile is checkSingleAof/process: scan every command; on a cut
// or bad command report the offset and, with fix on the last file,
// truncate there. With toTS, the first "#TS:" annotation later than toTS
// ends the scan and, in the last file, the file (processAnnotations): cut
// says the file was truncated there.
func checkOneFile(p string, fix bool, toTS int64, last bool, out io.Writer) (ok, cut bool) {
	name := filepath.Base(p)
	f, err := os.Open(p)
	if err != nil {
		fmt.Fprintf(out, "Cannot open file %s: %v, aborting...\n", name, err)
		return false, false
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		fmt.Fprintf(out, "Cannot stat file: %s, aborting...\n", name)
		return false, false
	}
	size := fi.Size()
	pr := newProgress(f, size, name)
	defer pr.done()
	var start int64
	var sig [5]byte
	if n, _ := io.ReadFull(f, sig[:]); n == 5 && string(sig[:]) == "REDIS" {
		// An RDB preamble: checked in full by the RDB checker, then the
		// AOF tail after it (redis-check-aof's checkSingleAof).
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return false, false
		}
		fmt.Fprintf(out, "The AOF appears to start with an RDB preamble.\nChecking the RDB preamble to start:\n")
		if !checkRDBStream(pr, 0, out, &start) {
			fmt.Fprintf(out, "RDB preamble of AOF file is not sane, aborting.\n")
			return false, false
		}
		fmt.Fprintf(out, "RDB preamble is OK, proceeding with AOF tail...\n")
	}
	if _, err := f.Seek(start, io.SeekStart); err != nil {
		return false, false
	}
	pr.n = start
	sc := aof.NewScanner(pr, start)
	tsAt, badTS := int64(-1), false
	if toTS > 0 {
		sc.OnAnnotation(func(line []byte, off int64) {
			if tsAt >= 0 || badTS || !strings.HasPrefix(string(line), "#TS:") {
				return
			}
			ts, err := strconv.ParseInt(string(line[4:]), 10, 64)
			if err != nil {
				badTS = true
			} else if ts > toTS {
				tsAt = off
			}
		})
	}
	var multi bool
	var beforeMulti int64
	for {
		off := sc.Offset()
		argv, err := sc.Next()
		if badTS {
			fmt.Fprintf(out, "Invalid timestamp annotation\n")
			return false, false
		}
		if tsAt >= 0 {
			return truncateAtTimestamp(p, name, tsAt, toTS, last, out)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			if multi {
				off = beforeMulti
			}
			return report(p, name, off, size, err, fix, last, out), false
		}
		if strings.EqualFold(string(argv[0]), "multi") {
			if multi {
				return report(p, name, off, size, errors.New("Unexpected MULTI"), fix, last, out), false
			}
			multi, beforeMulti = true, off
		} else if strings.EqualFold(string(argv[0]), "exec") {
			if !multi {
				return report(p, name, off, size, errors.New("Unexpected EXEC"), fix, last, out), false
			}
			multi = false
		}
	}
	if multi {
		return report(p, name, beforeMulti, size, errors.New("Reached EOF before reading EXEC for MULTI"), fix, last, out), false
	}
	if toTS > 0 {
		fmt.Fprintf(out, "Truncate nothing in AOF %s to timestamp %d\n", name, toTS)
		return true, false
	}
	fmt.Fprintf(out, "AOF analyzed: filename=%s, size=%d, ok_up_to=%d, diff=0\n", name, size, sc.Offset())
	return true, false
}

// truncateAtTimestamp is processAnnotations' cut at the first annotation
// later than toTS, found at offset at: refused when nothing comes before
// it or when the file is not the last one (those messages name the file by
// its path, the others by its name, as Redis's).
func truncateAtTimestamp(p, name string, at, toTS int64, last bool, out io.Writer) (ok, cut bool) {
	if at == 0 {
		fmt.Fprintf(out, "AOF %s has nothing before timestamp %d, aborting...\n", p, toTS)
		return false, false
	}
	if !last {
		fmt.Fprintf(out, "Failed to truncate AOF %s to timestamp %d to offset %d because it is not the last file.\n", p, toTS, at)
		fmt.Fprintf(out, "If you insist, please delete all files after this file according to the manifest "+
			"file and delete the corresponding records in manifest file manually. Then re-run redis-check-aof.\n")
		return false, false
	}
	if err := os.Truncate(p, at); err != nil {
		fmt.Fprintf(out, "Failed to truncate AOF %s to timestamp %d\n", p, toTS)
		return false, false
	}
	return true, true
}

func report(p, name string, pos, size int64, cause error, fix, last bool, out io.Writer) bool {
	fmt.Fprintf(out, "0x%16x: %v\n", pos, cause)
	fmt.Fprintf(out, "AOF analyzed: filename=%s, size=%d, ok_up_to=%d, diff=%d\n", name, size, pos, size-pos)
	if !fix {
		fmt.Fprintf(out, "AOF %s is not valid. Use the --fix option to try fixing it.\n", name)
		return false
	}
	if !last {
		fmt.Fprintf(out, "Only the last file can be truncated: %s is not the last AOF file\n", name)
		return false
	}
	if err := os.Truncate(p, pos); err != nil {
		fmt.Fprintf(out, "Failed to truncate AOF %s: %v\n", name, err)
		return false
	}
	fmt.Fprintf(out, "Successfully truncated AOF %s\n", name)
	return true
}
