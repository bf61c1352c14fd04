package netshell

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"net"
	"os"
	"os/exec"
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
	if ids, warn := parseCiphers("DEFAULT"); ids != nil || warn != "" {
		t.Errorf("DEFAULT: %v %q", ids, warn)
	}
	f := testutil.TLSCerts(t)
	ctx, err := BuildTLS(TLSSettings{CertFile: f.Cert, KeyFile: f.Key, CAFile: f.CACert, Ciphers: "HIGH", Ciphersuites: "TLS_AES_128_GCM_SHA256", DHParamsFile: f.CACert})
	if err != nil {
		t.Fatal(err)
	}
	if len(ctx.Warnings) != 3 {
		t.Errorf("warnings: %q", ctx.Warnings)
	}
}

// TestTLSKeyFilePass: tls-key-file-pass decrypts a legacy encrypted PEM
// key and an encrypted PKCS#8 one (OpenSSL 3's); a wrong pass or none is
// refused.
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
	// PKCS#8 (PBES2), as OpenSSL 3 writes it: built here, and by the
	// openssl command when there is one.
	p8 := filepath.Join(f.Dir, "p8.key")
	if err := os.WriteFile(p8, encryptPKCS8ForTest(t, blk.Bytes, "secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, pass := range []string{"secret", "wrong"} {
		s.KeyFile, s.KeyFilePass = p8, pass
		if _, err := BuildTLS(s); (err == nil) != (pass == "secret") {
			t.Errorf("PKCS#8 with pass %q: %v", pass, err)
		}
	}
	if openssl, err := exec.LookPath("openssl"); err == nil {
		o8 := filepath.Join(f.Dir, "openssl8.key")
		if out, err := exec.Command(openssl, "pkey", "-in", f.Key, "-out", o8, "-aes256", "-passout", "pass:1234").CombinedOutput(); err != nil {
			t.Fatalf("openssl: %v: %s", err, out)
		}
		s.KeyFile, s.KeyFilePass = o8, "1234"
		if _, err := BuildTLS(s); err != nil {
			t.Errorf("openssl's encrypted key: %v", err)
		}
	}
}

// encryptPKCS8ForTest is PBES2 (PBKDF2-HMAC-SHA256, AES-256-CBC) of a
// key, in PEM.
func encryptPKCS8ForTest(t testing.TB, ecDER []byte, pass string) []byte {
	k, err := x509.ParseECPrivateKey(ecDER)
	if err != nil {
		t.Fatal(err)
	}
	plain, err := x509.MarshalPKCS8PrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	salt, iv := make([]byte, 16), make([]byte, 16)
	rand.Read(salt)
	rand.Read(iv)
	key, err := pbkdf2.Key(sha256.New, pass, salt, 2048, 32)
	if err != nil {
		t.Fatal(err)
	}
	n := aes.BlockSize - len(plain)%aes.BlockSize
	plain = append(plain, bytes.Repeat([]byte{byte(n)}, n)...)
	block, _ := aes.NewCipher(key)
	enc := make([]byte, len(plain))
	cipher.NewCBCEncrypter(block, iv).CryptBlocks(enc, plain)
	kdfParams, _ := asn1.Marshal(struct {
		Salt       []byte
		Iterations int
		PRF        algorithmIdentifier
	}{salt, 2048, algorithmIdentifier{Algorithm: oidHMACSHA256, Parameters: asn1.NullRawValue}})
	ivDER, _ := asn1.Marshal(iv)
	pbes2, _ := asn1.Marshal(pbes2Params{
		KDF:    algorithmIdentifier{Algorithm: oidPBKDF2, Parameters: asn1.RawValue{FullBytes: kdfParams}},
		Scheme: algorithmIdentifier{Algorithm: oidAES256CBC, Parameters: asn1.RawValue{FullBytes: ivDER}},
	})
	der, err := asn1.Marshal(encryptedPrivateKeyInfo{Algo: algorithmIdentifier{Algorithm: oidPBES2, Parameters: asn1.RawValue{FullBytes: pbes2}}, EncryptedData: enc})
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "ENCRYPTED PRIVATE KEY", Bytes: der})
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

// FuzzDecryptPKCS8: a hostile or truncated key file is an error, never a
// panic.
func FuzzDecryptPKCS8(f *testing.F) {
	files := testutil.TLSCerts(f)
	b, err := os.ReadFile(files.Key)
	if err != nil {
		f.Fatal(err)
	}
	blk, _ := pem.Decode(b)
	p, _ := pem.Decode(encryptPKCS8ForTest(f, blk.Bytes, "pw"))
	f.Add(p.Bytes, "pw")
	f.Add(p.Bytes[:len(p.Bytes)/2], "pw")
	f.Fuzz(func(t *testing.T, der []byte, pass string) {
		_, _ = decryptPKCS8(der, pass)
	})
}
