package testutil

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// TLSFiles are the PEM files TLSCerts wrote: a CA, a server certificate
// and a client certificate it signed (both valid for 127.0.0.1 and
// localhost, and for client and server use), and a second CA that signed
// neither.
type TLSFiles struct {
	Dir                   string
	CACert, CAKey         string
	Cert, Key             string // the server's
	ClientCert, ClientKey string
	OtherCACert           string
	OtherCert, OtherKey   string // signed by the other CA
	caPool                *x509.CertPool
	client, other         tls.Certificate
}

// TB is what TLSCerts needs of a test: testing.TB, or Ginkgo's GinkgoT().
type TB interface {
	Helper()
	Fatal(args ...any)
	TempDir() string
}

// TLSCerts writes a CA and certificates signed by it into a temporary
// directory (ECDSA P-256 keys, in the formats redis-server reads).
func TLSCerts(t TB) TLSFiles {
	t.Helper()
	dir := t.TempDir()
	f := TLSFiles{Dir: dir}
	caKey, caCert := newCA(t, "Vigil Test CA")
	otherKey, otherCert := newCA(t, "Other CA")
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	writeKey := func(name string, k *ecdsa.PrivateKey) string {
		der, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return write(name, "EC PRIVATE KEY", der)
	}
	f.CACert = write("ca.crt", "CERTIFICATE", caCert.Raw)
	f.CAKey = writeKey("ca.key", caKey)
	f.OtherCACert = write("other-ca.crt", "CERTIFICATE", otherCert.Raw)
	sk, sder := leaf(t, "Server", caCert, caKey)
	f.Cert, f.Key = write("server.crt", "CERTIFICATE", sder), writeKey("server.key", sk)
	ck, cder := leaf(t, "Client", caCert, caKey)
	f.ClientCert, f.ClientKey = write("client.crt", "CERTIFICATE", cder), writeKey("client.key", ck)
	ok, oder := leaf(t, "Other", otherCert, otherKey)
	f.OtherCert, f.OtherKey = write("other.crt", "CERTIFICATE", oder), writeKey("other.key", ok)
	f.caPool = x509.NewCertPool()
	f.caPool.AddCert(caCert)
	f.client = tls.Certificate{Certificate: [][]byte{cder}, PrivateKey: ck}
	f.other = tls.Certificate{Certificate: [][]byte{oder}, PrivateKey: ok}
	return f
}

// ClientConfig is a client configuration trusting the CA, presenting the
// client certificate (none when cert is false).
func (f TLSFiles) ClientConfig(cert bool) *tls.Config {
	c := &tls.Config{RootCAs: f.caPool, ServerName: "localhost"}
	if cert {
		c.Certificates = []tls.Certificate{f.client}
	}
	return c
}

// CAPool is a pool holding the CA (for a server's ClientCAs).
func (f TLSFiles) CAPool() *x509.CertPool { return f.caPool }

// OtherClientConfig presents the certificate the other CA signed, even
// to a server that names only its own CA (as OpenSSL clients do; Go's
// would send none).
func (f TLSFiles) OtherClientConfig() *tls.Config {
	other := f.other
	return &tls.Config{RootCAs: f.caPool, ServerName: "localhost",
		GetClientCertificate: func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &other, nil }}
}

// ServerArgs are the directives of a TLS server with these files.
func (f TLSFiles) ServerArgs(tlsPort int) []string {
	return []string{"--tls-port", strconv.Itoa(tlsPort), "--tls-cert-file", f.Cert, "--tls-key-file", f.Key, "--tls-ca-cert-file", f.CACert}
}

func newCA(t TB, cn string) (*ecdsa.PrivateKey, *x509.Certificate) {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: serial(t), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	k, der := newCert(t, tmpl, nil, nil)
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return k, c
}

func leaf(t TB, cn string, ca *x509.Certificate, caKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, []byte) {
	t.Helper()
	tmpl := &x509.Certificate{
		SerialNumber: serial(t), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:    []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	return newCert(t, tmpl, ca, caKey)
}

// newCert makes a key and tmpl's certificate for it, signed by parent with
// parentKey (self-signed when parent is nil).
func newCert(t TB, tmpl, parent *x509.Certificate, parentKey *ecdsa.PrivateKey) (*ecdsa.PrivateKey, []byte) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if parent == nil {
		parent, parentKey = tmpl, k
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &k.PublicKey, parentKey)
	if err != nil {
		t.Fatal(err)
	}
	return k, der
}

func serial(t TB) *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		t.Fatal(err)
	}
	return n
}
