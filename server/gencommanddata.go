//go:build ignore

// gencommanddata records Redis's own COMMAND DOCS and COMMAND INFO replies
// into commanddata.resp, the data behind Vigil's COMMAND DOCS and the tips
// and key specs of COMMAND INFO (see commanddata.go). Run it through
//
//	go generate ./server
//
// with Redis 7.0.15's redis-server on PATH (Debian's /usr/bin/redis-server),
// or pass -redis-server. It starts the server on a unix socket in a
// temporary directory (no TCP port), asks for every command of COMMAND LIST
// in RESP3 and writes one RESP3 map, sorted by full name:
//
//	full name -> [docs map without "subcommands", COMMAND INFO entry without subcommands]
//
// Subcommands are dropped because Redis lists them in its dict's (per
// process random) order and Vigil builds them from its own table.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

const wantVersion = "7.0.15"

func main() {
	bin := flag.String("redis-server", "redis-server", "redis-server binary to record")
	out := flag.String("o", "commanddata.resp", "output file")
	anyVersion := flag.Bool("any-version", false, "record a redis-server other than "+wantVersion)
	flag.Parse()
	if err := run(*bin, *out, *anyVersion); err != nil {
		fmt.Fprintln(os.Stderr, "gencommanddata:", err)
		os.Exit(1)
	}
}

type conn struct {
	c  net.Conn
	br *bufio.Reader
}

func (c *conn) do(args ...string) (resp.Value, error) {
	if _, err := c.c.Write(resp.AppendCommandStrings(nil, args...)); err != nil {
		return resp.Value{}, err
	}
	v, err := resp.ReadValue(c.br, resp.DefaultReplyLimits)
	if err == nil && v.IsError() {
		err = fmt.Errorf("%s: %s", strings.Join(args, " "), v.Str)
	}
	return v, err
}

func run(bin, out string, anyVersion bool) error {
	dir, err := os.MkdirTemp("", "gencommanddata")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	sock := filepath.Join(dir, "redis.sock")
	srv := exec.Command(bin, "--port", "0", "--unixsocket", sock, "--save", "", "--appendonly", "no", "--dir", dir)
	if err := srv.Start(); err != nil {
		return fmt.Errorf("start %s: %w", bin, err)
	}
	defer func() {
		srv.Process.Kill()
		srv.Wait()
	}()
	var nc net.Conn
	for deadline := time.Now().Add(10 * time.Second); ; {
		if nc, err = net.Dial("unix", sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("connect to %s: %w", bin, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer nc.Close()
	c := &conn{c: nc, br: bufio.NewReader(nc)}
	if _, err := c.do("HELLO", "3"); err != nil {
		return err
	}
	info, err := c.do("INFO", "server")
	if err != nil {
		return err
	}
	if !strings.Contains(info.Str, "redis_version:"+wantVersion+"\r\n") && !anyVersion {
		return fmt.Errorf("%s is not Redis %s (use -any-version to record it anyway)", bin, wantVersion)
	}
	list, err := c.do("COMMAND", "LIST")
	if err != nil {
		return err
	}
	var names []string
	for _, e := range list.Elems {
		names = append(names, e.Str)
	}
	sort.Strings(names)

	w := &resp.Writer{Proto: 3}
	w.MapLen(len(names))
	for _, name := range names {
		docs, err := c.do("COMMAND", "DOCS", name)
		if err != nil {
			return err
		}
		if docs.Kind != resp.KindMap || len(docs.Elems) != 2 || docs.Elems[0].Str != name {
			return fmt.Errorf("COMMAND DOCS %s: unexpected reply %v", name, docs)
		}
		d := docs.Elems[1]
		var kept []resp.Value
		for i := 0; i+1 < len(d.Elems); i += 2 {
			if d.Elems[i].Str != "subcommands" {
				kept = append(kept, d.Elems[i], d.Elems[i+1])
			}
		}
		d.Elems = kept
		infos, err := c.do("COMMAND", "INFO", name)
		if err != nil {
			return err
		}
		if len(infos.Elems) != 1 || len(infos.Elems[0].Elems) != 10 || infos.Elems[0].Elems[0].Str != name {
			return fmt.Errorf("COMMAND INFO %s: unexpected reply %v", name, infos)
		}
		entry := infos.Elems[0]
		entry.Elems[9] = resp.Value{Kind: entry.Elems[9].Kind}
		w.BulkString(name)
		w.ArrayLen(2)
		writeValue(w, d)
		writeValue(w, entry)
	}
	return os.WriteFile(out, w.B, 0o644)
}

// writeValue writes a reply read by resp.ReadValue back in RESP3, refusing
// types the command docs never hold (a changed reply should be looked at).
func writeValue(w *resp.Writer, v resp.Value) {
	var check func(resp.Value)
	check = func(v resp.Value) {
		switch v.Kind {
		case resp.KindBulk, resp.KindSimple, resp.KindInt, resp.KindArray, resp.KindSet, resp.KindMap:
			for _, e := range v.Elems {
				check(e)
			}
		default:
			panic(fmt.Sprintf("gencommanddata: reply type %q not expected in command docs", v.Kind))
		}
	}
	check(v)
	w.Value(v)
}
