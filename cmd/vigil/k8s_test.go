package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// fakeNode answers every line it reads with the next of replies.
func fakeNode(t *testing.T, replies ...string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return serveFake(t, ln, replies...)
}

// serveFake is fakeNode's server on ln (closed when the test ends); it
// returns ln's address.
func serveFake(t *testing.T, ln net.Listener, replies ...string) string {
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				r := bufio.NewReader(c)
				for _, rep := range replies {
					// AUTH arrives as a multibulk (5 lines); PING inline.
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					if line[0] == '*' {
						for i := 0; i < 4; i++ {
							if _, err := r.ReadString('\n'); err != nil {
								return
							}
						}
					}
					c.Write([]byte(rep + "\r\n"))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

func TestProbeAcceptsWhatRedisProbesAccept(t *testing.T) {
	for _, tc := range []struct {
		reply string
		ok    bool
	}{
		{"+PONG", true},
		{"-LOADING Redis is loading the dataset in memory", true},
		{"-MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.", true},
		{"-NOAUTH Authentication required.", false},
		{"-ERR unknown command", false},
		{"+OK", false},
	} {
		addr := fakeNode(t, tc.reply)
		err := probe(context.Background(), addr, "", time.Second)
		if (err == nil) != tc.ok {
			t.Errorf("reply %q: probe error %v, want ok=%v", tc.reply, err, tc.ok)
		}
	}
}

func TestProbeAuth(t *testing.T) {
	if err := probe(context.Background(), fakeNode(t, "+OK", "+PONG"), "secret", time.Second); err != nil {
		t.Fatalf("AUTH ok then PONG: %v", err)
	}
	if err := probe(context.Background(), fakeNode(t, "-WRONGPASS invalid username-password pair", "+PONG"), "bad", time.Second); err == nil {
		t.Fatal("a refused AUTH passed the probe")
	}
}

func TestProbeUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	if err := probe(context.Background(), addr, "", time.Second); err == nil {
		t.Fatal("probe of a closed port passed")
	}
	var out, errb bytes.Buffer
	if code := run([]string{"vigil", "probe", "--addr", addr}, &out, &errb); code != 1 {
		t.Fatalf("vigil probe of a closed port: exit %d, want 1 (stderr %q)", code, errb.String())
	}
	if code := run([]string{"vigil", "probe", "--addr", fakeNode(t, "+PONG")}, &out, &errb); code != 0 {
		t.Fatalf("vigil probe of a PONG node: exit %d, want 0 (stderr %q)", code, errb.String())
	}
}

func TestInstallConfigKeepsExisting(t *testing.T) {
	dir := t.TempDir()
	from, to := filepath.Join(dir, "from.conf"), filepath.Join(dir, "data", "to.conf")
	os.WriteFile(from, []byte("port 6379\n"), 0o644)
	if ok, err := installConfig(from, to); err != nil || !ok {
		t.Fatalf("first install: %v %v", ok, err)
	}
	os.WriteFile(to, []byte("port 6379\nreplicaof a 1\n"), 0o644)
	if ok, err := installConfig(from, to); err != nil || ok {
		t.Fatalf("second install: %v %v, want kept", ok, err)
	}
	if b, _ := os.ReadFile(to); string(b) != "port 6379\nreplicaof a 1\n" {
		t.Fatalf("existing config overwritten: %q", b)
	}
}

// TestProbeTLS: with --tls the probe reaches a node on its TLS port,
// verifying its certificate against --cacert (not its host name) and
// presenting --cert/--key; a node whose certificate another CA signed
// fails, unless --insecure.
func TestProbeTLS(t *testing.T) {
	f := testutil.TLSCerts(t)
	node := func(certFile, keyFile string, wantClient bool) string {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			t.Fatal(err)
		}
		cfg := &tls.Config{Certificates: []tls.Certificate{cert}}
		if wantClient {
			cfg.ClientCAs, cfg.ClientAuth = f.CAPool(), tls.RequireAndVerifyClientCert
		}
		ln, err := tls.Listen("tcp", "127.0.0.1:0", cfg)
		if err != nil {
			t.Fatal(err)
		}
		return serveFake(t, ln, "+PONG")
	}
	ctx := context.Background()
	good := node(f.Cert, f.Key, true)
	tc, err := probeTLS(f.CACert, f.ClientCert, f.ClientKey, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := probeWith(ctx, good, "", time.Second, tc); err != nil {
		t.Errorf("TLS node with the CA's certificate: %v", err)
	}
	if err := probeWith(ctx, good, "", time.Second, nil); err == nil {
		t.Error("a plain probe passed on a TLS port")
	}
	noCert, _ := probeTLS(f.CACert, "", "", false)
	if err := probeWith(ctx, good, "", time.Second, noCert); err == nil {
		t.Error("a probe without a client certificate passed tls-auth-clients yes")
	}
	other := node(f.OtherCert, f.OtherKey, false)
	if err := probeWith(ctx, other, "", time.Second, noCert); err == nil {
		t.Error("a node certificate of another CA passed")
	}
	insecure, _ := probeTLS("", "", "", true)
	if err := probeWith(ctx, other, "", time.Second, insecure); err != nil {
		t.Errorf("--insecure: %v", err)
	}
}
