package netshell

import (
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vigil-kv/vigil/internal/testutil"
)

// TestBuildTLSRefusals: tlsConfigure's refusals, with the lines Redis
// logs.
func TestBuildTLSRefusals(t *testing.T) {
	f := testutil.TLSCerts(t)
	ok := TLSSettings{Port: 1, CertFile: f.Cert, KeyFile: f.Key, CAFile: f.CACert, AuthClients: TLSAuthYes}
	missing := filepath.Join(f.Dir, "missing.pem")
	for _, c := range []struct {
		name string
		mod  func(*TLSSettings)
		want string
	}{
		{"no cert", func(t *TLSSettings) { t.CertFile = "" }, "No tls-cert-file configured!"},
		{"no key", func(t *TLSSettings) { t.KeyFile = "" }, "No tls-key-file configured!"},
		{"no CA with auth", func(t *TLSSettings) { t.CAFile = "" }, "Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!"},
		{"no CA with replication", func(t *TLSSettings) { t.CAFile, t.AuthClients, t.Replication = "", TLSAuthNo, true }, "Either tls-ca-cert-file"},
		{"bad protocols", func(t *TLSSettings) { t.Protocols = "TLSv1.2 SSLv3" }, "Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'."},
		{"missing cert", func(t *TLSSettings) { t.CertFile = missing }, "Failed to load certificate: " + missing + ": No such file or directory"},
		{"missing key", func(t *TLSSettings) { t.KeyFile = missing }, "Failed to load private key: " + missing + ": No such file or directory"},
		{"key of another cert", func(t *TLSSettings) { t.KeyFile = f.ClientKey }, "Failed to load private key: " + f.ClientKey},
		{"missing CA", func(t *TLSSettings) { t.CAFile = missing }, "Failed to configure CA certificate(s) file/directory: " + missing},
		{"CA not PEM", func(t *TLSSettings) { t.CAFile = f.Key }, "Failed to configure CA certificate(s) file/directory: " + f.Key + ": no certificate found"},
		{"missing dh params", func(t *TLSSettings) { t.DHParamsFile = missing }, "Failed to load " + missing + ": No such file or directory"},
	} {
		s := ok
		c.mod(&s)
		_, err := BuildTLS(s)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if _, err := BuildTLS(ok); err != nil {
		t.Fatal(err)
	}
	// tls-auth-clients no needs no CA.
	noCA := ok
	noCA.CAFile, noCA.AuthClients = "", TLSAuthNo
	if _, err := BuildTLS(noCA); err != nil {
		t.Errorf("auth no, no CA: %v", err)
	}
}

// TestTLSProtocols: tls-protocols maps to Go's version range; the default
// is TLSv1.2 and TLSv1.3, as Redis's REDIS_TLS_PROTO_DEFAULT.
func TestTLSProtocols(t *testing.T) {
	for in, want := range map[string][2]uint16{
		"":                {tls.VersionTLS12, tls.VersionTLS13},
		"TLSv1.2":         {tls.VersionTLS12, tls.VersionTLS12},
		"tlsv1.3":         {tls.VersionTLS13, tls.VersionTLS13},
		"TLSv1 TLSv1.1":   {tls.VersionTLS10, tls.VersionTLS11},
		"TLSv1.3 TLSv1.2": {tls.VersionTLS12, tls.VersionTLS13},
	} {
		lo, hi, err := parseTLSProtocols(in)
		if err != nil || lo != want[0] || hi != want[1] {
			t.Errorf("%q: %x-%x %v, want %x-%x", in, lo, hi, err, want[0], want[1])
		}
	}
}

// TestTLSCiphers: exact OpenSSL or IANA names apply; what Go cannot
// apply (aliases, TLS 1.3 suites, DH parameters) is a warning, not a
// silent default.
func TestTLSCiphers(t *testing.T) {
	ids, warn := parseCiphers("ECDHE-RSA-AES256-GCM-SHA384:TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256")
	if warn != "" || len(ids) != 2 || ids[0] != tls.TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384 || ids[1] != tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256 {
		t.Errorf("exact names: %v %q", ids, warn)
	}
	if ids, warn := parseCiphers("HIGH:!aNULL"); ids != nil || !strings.Contains(warn, `"HIGH"`) {
		t.Errorf("alias: %v %q", ids, warn)
	}
	f := testutil.TLSCerts(t)
	ctx, err := BuildTLS(TLSSettings{CertFile: f.Cert, KeyFile: f.Key, CAFile: f.CACert, Ciphers: "DEFAULT", Ciphersuites: "TLS_AES_128_GCM_SHA256", DHParamsFile: f.CACert})
	if err != nil {
		t.Fatal(err)
	}
	if len(ctx.Warnings) != 3 {
		t.Errorf("warnings: %q", ctx.Warnings)
	}
}

// TestTLSKeyFilePass: tls-key-file-pass decrypts a legacy encrypted PEM
// key; a wrong pass and an encrypted PKCS#8 key are refused.
func TestTLSKeyFilePass(t *testing.T) {
	f := testutil.TLSCerts(t)
	b, err := os.ReadFile(f.Key)
	if err != nil {
		t.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	//lint:ignore SA1019 the format tls-key-file-pass reads
	enc, err := x509.EncryptPEMBlock(rand.Reader, blk.Type, blk.Bytes, []byte("secret"), x509.PEMCipherAES256) //nolint:staticcheck
	if err != nil {
		t.Fatal(err)
	}
	encFile := filepath.Join(f.Dir, "enc.key")
	if err := os.WriteFile(encFile, pem.EncodeToMemory(enc), 0o600); err != nil {
		t.Fatal(err)
	}
	s := TLSSettings{CertFile: f.Cert, KeyFile: encFile, KeyFilePass: "secret", CAFile: f.CACert}
	if _, err := BuildTLS(s); err != nil {
		t.Errorf("right pass: %v", err)
	}
	s.KeyFilePass = "wrong"
	if _, err := BuildTLS(s); err == nil || !strings.HasPrefix(err.Error(), "Failed to load private key: "+encFile) {
		t.Errorf("wrong pass: %v", err)
	}
	s.KeyFilePass = ""
	if _, err := BuildTLS(s); err == nil {
		t.Error("encrypted key without a pass loaded")
	}
	p8 := filepath.Join(f.Dir, "p8.key")
	os.WriteFile(p8, pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: []byte{1}}), 0o600)
	s.KeyFile, s.KeyFilePass = p8, "secret"
	if _, err := BuildTLS(s); err == nil || !strings.Contains(err.Error(), "PKCS#8") {
		t.Errorf("PKCS#8: %v", err)
	}
}

// TestTLSListenerAuthClients: a TLS listener asks for client certificates
// as tls-auth-clients says when each connection is accepted, verifies them
// against the CA, and serves each new connection with the context current
// then.
func TestTLSListenerAuthClients(t *testing.T) {
	f := testutil.TLSCerts(t)
	var st TLSState
	ctx, err := BuildTLS(TLSSettings{CertFile: f.Cert, KeyFile: f.Key, CAFile: f.CACert})
	if err != nil {
		t.Fatal(err)
	}
	st.Set(ctx)
	l, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	tl := st.Listener(l)
	defer tl.Close()
	if !IsTLSListener(tl) || IsTLSListener(l) {
		t.Fatal("IsTLSListener")
	}
	go func() {
		for {
			c, err := tl.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				buf := make([]byte, 4)
				if _, err := c.Read(buf); err == nil {
					c.Write(buf)
				}
			}()
		}
	}()
	try := func(cfg *tls.Config) error {
		c, err := tls.Dial("tcp4", l.Addr().String(), cfg)
		if err != nil {
			return err
		}
		defer c.Close()
		if _, err := c.Write([]byte("ping")); err != nil {
			return err
		}
		buf := make([]byte, 4)
		_, err = c.Read(buf) // TLS 1.3: a refused certificate shows here
		return err
	}
	for _, c := range []struct {
		mode   int
		cfg    *tls.Config
		served bool
	}{
		{TLSAuthYes, f.ClientConfig(true), true},
		{TLSAuthYes, f.ClientConfig(false), false},
		{TLSAuthYes, f.OtherClientConfig(), false},
		{TLSAuthOptional, f.ClientConfig(false), true},
		{TLSAuthOptional, f.OtherClientConfig(), false},
		{TLSAuthNo, f.OtherClientConfig(), true},
	} {
		st.SetAuth(c.mode)
		if err := try(c.cfg); (err == nil) != c.served {
			t.Errorf("auth %d, cert %v: err %v, want served %v", c.mode, c.cfg.Certificates != nil || c.cfg.GetClientCertificate != nil, err, c.served)
		}
	}
	// The client side's configuration verifies the server against the CA
	// without a host name (Redis's SSL_VERIFY_PEER).
	st.SetAuth(TLSAuthYes)
	cli := st.Client()
	if err := try(cli); err != nil {
		t.Errorf("the process's own client configuration: %v", err)
	}
	// A server whose certificate another CA signed is refused.
	other, err := BuildTLS(TLSSettings{CertFile: f.OtherCert, KeyFile: f.OtherKey, CAFile: f.CACert})
	if err != nil {
		t.Fatal(err)
	}
	st.Set(other)
	if err := try(cli); err == nil {
		t.Error("a server certificate of another CA was accepted")
	}
}
