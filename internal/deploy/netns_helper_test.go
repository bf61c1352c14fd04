package deploy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

// netnsHelper lets the test binary double as a helper run inside a namespace: with
// VIGIL_NETNS_ECHO=addr it echoes lines on addr; with VIGIL_NETNS_DIAL=addr
// it sends one line to addr and exits 0 when it comes back within 1 s.
func netnsHelper() {
	if addr := os.Getenv("VIGIL_NETNS_ECHO"); addr != "" {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println("ready")
		for {
			c, err := ln.Accept()
			if err != nil {
				os.Exit(2)
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}
	if addr := os.Getenv("VIGIL_NETNS_DIAL"); addr != "" {
		if err := echoOnce(addr, time.Second); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
}

// echoOnce dials addr and round-trips one line within wait.
func echoOnce(addr string, wait time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, wait)
	if err != nil {
		return err
	}
	defer c.Close()
	got, err := roundTrip(c, bufio.NewReader(c), "ping", wait)
	if err == nil && got != "ping\n" {
		err = fmt.Errorf("echo returned %q", got)
	}
	return err
}
