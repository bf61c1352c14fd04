package rdb

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// Check is redis-check-rdb's redis_check_rdb on one RDB stream (a file,
// or an AOF's RDB preamble followed by an AOF tail): it loads the whole
// stream (every value parsed, the CRC-64 checksum verified), prints the
// checker's trace to out and returns whether the stream is valid. end,
// when not nil, gets the RDB's length. Offsets are printed relative to
// base. `vigil check-rdb` prints it, and the server after a corrupt
// dbfilename, as rdbReportError runs redis_check_rdb_main.
func Check(r io.Reader, base int64, out io.Writer, end *int64) bool {
	var keys, expires, expired int
	now := time.Now().UnixMilli()
	var pending []AuxField
	var lastOff int64
	doing := "start"
	opts := LoadOptions{
		VerifyChecksum: true,
		OnAux: func(a AuxField) error {
			pending = append(pending, a)
			return nil
		},
		OnOp: func(op byte, off int64, arg uint64) {
			lastOff = off
			switch op {
			case OpAux:
				for _, a := range pending {
					fmt.Fprintf(out, "[offset %d] AUX FIELD %s = '%s'\n", base+off, a.Key, a.Value)
				}
				pending = pending[:0]
				doing = "read-aux"
			case OpSelectDB:
				fmt.Fprintf(out, "[offset %d] Selecting DB ID %d\n", base+off, arg)
				doing = "read-type"
			case OpEOF:
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
	info, err := Load(r, opts, func(rec Record) error {
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
		var re *Error
		if errors.As(err, &re) {
			off, reason = re.Offset, re.Reason
			switch {
			case reason == ShortRead || re.Line == -1:
				reason = "Unexpected EOF reading RDB file"
			case strings.HasPrefix(reason, "Wrong RDB checksum"):
				reason = "RDB CRC error"
				doing = "check-sum"
			case re.Line != 0:
				// rdbCheckError gets rdbReportError's whole message.
				reason = re.Report(0)
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
