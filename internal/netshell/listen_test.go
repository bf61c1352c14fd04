package netshell

import (
	"fmt"
	"net"
	"testing"

	"github.com/vigil-kv/vigil/configs"
)

func TestBindNetwork(t *testing.T) {
	for _, tc := range []struct{ bind, network, host string }{
		{"*", "tcp4", "0.0.0.0"},
		{"::*", "tcp6", "::"},
		{"127.0.0.1", "tcp4", "127.0.0.1"},
		{"::1", "tcp6", "::1"},
		{"localhost", "tcp4", "localhost"},
	} {
		n, h := BindNetwork(tc.bind)
		if n != tc.network || h != tc.host {
			t.Errorf("BindNetwork(%q) = %s %s, want %s %s", tc.bind, n, h, tc.network, tc.host)
		}
	}
}

func TestListenOptional(t *testing.T) {
	probe, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := probe.Addr().(*net.TCPAddr).Port
	probe.Close()
	cfg := &configs.Config{Port: port, Bind: []string{"127.0.0.1", "-192.0.2.1"}}
	ls, err := Listen(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	if len(ls.List) != 1 || ls.Port != port || ls.List[0].Addr().Network() != "tcp" {
		t.Fatalf("listeners %v port %d", ls.List, ls.Port)
	}
	cfg = &configs.Config{Port: port, Bind: []string{"-192.0.2.1"}}
	if _, err := Listen(cfg, nil); err == nil || err.Error() != fmt.Sprintf("Failed listening on port %d (tcp), aborting.", port) {
		t.Fatalf("only optional unbindable addresses: err %v", err)
	}
	cfg = &configs.Config{Port: port, Bind: []string{"192.0.2.1"}}
	if _, err := Listen(cfg, nil); err == nil {
		t.Fatal("an unbindable address is an error")
	}
}

func TestAdmit(t *testing.T) {
	remote := &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 1}
	local := &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 1}
	if r := Admit(Conn{}, local, 10, 10, false); r != ErrMaxClients {
		t.Errorf("at maxclients: %q", r)
	}
	if r := Admit(Conn{}, remote, 10, 10, true); r != ErrMaxClients {
		t.Errorf("maxclients is checked first: %q", r)
	}
	if r := Admit(Conn{}, remote, 1, 10, true); r == "" {
		t.Error("protected mode admits a remote peer")
	}
	if r := Admit(Conn{Unix: true}, remote, 1, 10, true); r != "" {
		t.Errorf("unix socket refused: %q", r)
	}
	if r := Admit(Conn{}, local, 1, 10, true); r != "" {
		t.Errorf("loopback refused: %q", r)
	}
}

// TestListenEmptyBind is networking.tcl's "Default bind address
// configuration handling": bind "" (configs makes it an empty list, not
// nil) opens no TCP listener, so a server with a unix socket serves only
// that, and one without any is Redis's "Configured to not listen anywhere,
// exiting.".
func TestListenEmptyBind(t *testing.T) {
	probe, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := probe.Addr().(*net.TCPAddr).Port
	probe.Close()
	sock := t.TempDir() + "/s.sock"
	ls, err := Listen(&configs.Config{Port: port, Bind: []string{}, UnixSocket: sock}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ls.Close()
	if len(ls.List) != 1 || ls.List[0].Addr().Network() != "unix" {
		t.Fatalf("listeners %v, want the unix socket alone", ls.List)
	}
	if c, err := net.Dial("tcp4", fmt.Sprintf("127.0.0.1:%d", port)); err == nil {
		c.Close()
		t.Fatal("a TCP connection was accepted with bind \"\"")
	}
	_, err = Listen(&configs.Config{Port: port, Bind: []string{}}, nil)
	if err == nil || err.Error() != "Configured to not listen anywhere, exiting." {
		t.Fatalf("no listener at all: %v", err)
	}
}
