//go:build ignore

// gencommand records redis-sentinel 7.0.15's raw RESP3 replies to COMMAND
// and COMMAND DOCS into command_info.resp and command_docs.resp, the data
// behind the daemon's COMMAND (command_cmd.go). Run it through
//
//	go generate ./sentinel/daemon
//
// with Debian's redis-sentinel on PATH, or pass -redis-sentinel. It starts
// a sentinel with an empty configuration on a free loopback port in a
// temporary directory, sends HELLO 3, COMMAND and COMMAND DOCS, and writes
// the two replies as received. Redis lists commands in its dict's order,
// which is random per process: a new recording may order the entries
// differently (the daemon keeps the recorded order for COMMAND).
package main

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/vigil-kv/vigil/internal/resp"
)

const wantVersion = "7.0.15"

func main() {
	bin := flag.String("redis-sentinel", "redis-sentinel", "redis-sentinel binary to record")
	info := flag.String("info", "command_info.resp", "output file for COMMAND")
	docs := flag.String("docs", "command_docs.resp", "output file for COMMAND DOCS")
	anyVersion := flag.Bool("any-version", false, "record a redis-sentinel other than "+wantVersion)
	flag.Parse()
	if err := run(*bin, *info, *docs, *anyVersion); err != nil {
		fmt.Fprintln(os.Stderr, "gencommand:", err)
		os.Exit(1)
	}
}

func run(bin, infoOut, docsOut string, anyVersion bool) error {
	dir, err := os.MkdirTemp("", "vigil-gencommand-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	conf := filepath.Join(dir, "sentinel.conf")
	if err := os.WriteFile(conf, []byte("port "+strconv.Itoa(port)+"\nbind 127.0.0.1\ndir "+dir+"\n"), 0o644); err != nil {
		return err
	}
	cmd := exec.Command(bin, conf)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		return err
	}
	defer func() { cmd.Process.Kill(); cmd.Wait() }()
	var c net.Conn
	for deadline := time.Now().Add(10 * time.Second); ; {
		if c, err = net.Dial("tcp4", "127.0.0.1:"+strconv.Itoa(port)); err == nil {
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s did not start: %w", bin, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer c.Close()
	br := bufio.NewReader(c)
	hello, err := do(c, br, "HELLO", "3")
	if err != nil {
		return err
	}
	if !anyVersion && !bytes.Contains(hello, []byte("\r\n$7\r\nversion\r\n$6\r\n"+wantVersion+"\r\n")) {
		return fmt.Errorf("%s is not redis-sentinel %s (use -any-version)", bin, wantVersion)
	}
	for _, out := range []struct {
		file string
		args []string
	}{{infoOut, []string{"COMMAND"}}, {docsOut, []string{"COMMAND", "DOCS"}}} {
		raw, err := do(c, br, out.args...)
		if err != nil {
			return err
		}
		if err := os.WriteFile(out.file, raw, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// do sends one command and returns its raw reply.
func do(c net.Conn, br *bufio.Reader, args ...string) ([]byte, error) {
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.Write(resp.AppendCommandStrings(nil, args...)); err != nil {
		return nil, err
	}
	var raw bytes.Buffer
	tee := bufio.NewReader(readerFunc(func(p []byte) (int, error) {
		n, err := br.Read(p)
		raw.Write(p[:n])
		return n, err
	}))
	lim := resp.ReplyLimits{MaxBulk: 1 << 20, MaxElems: 1 << 16, MaxDepth: 32}
	if _, err := resp.ReadValue(tee, lim); err != nil {
		return nil, fmt.Errorf("%s: %w", strings.Join(args, " "), err)
	}
	if tee.Buffered() != 0 || br.Buffered() != 0 {
		return nil, fmt.Errorf("%s: more than one reply", strings.Join(args, " "))
	}
	return raw.Bytes(), nil
}

type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }
