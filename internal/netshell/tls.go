package netshell

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vigil-kv/vigil/configs"
)

// # TLS (tls.c)
//
// The tls-* directives configure one context, as Redis's tlsConfigure:
// the server's certificate and key (tls-cert-file, tls-key-file), the CAs
// that verify peers (tls-ca-cert-file, tls-ca-cert-dir), the protocol
// versions (tls-protocols) and, for the connections the process opens
// (a replica's link to its master with tls-replication, a sentinel's
// links), tls-client-cert-file and tls-client-key-file when both are set,
// else the server's pair. Peers are verified against the CAs without a
// host name check, as OpenSSL's SSL_VERIFY_PEER in Redis. Accepted
// connections ask for a client certificate per tls-auth-clients (yes:
// required, optional: verified when given, no: not asked), read when the
// connection is accepted.
//
// What Go's crypto/tls cannot do as OpenSSL: tls-ciphers and
// tls-ciphersuites take OpenSSL cipher strings; a list of exact TLS 1.2
// suite names (OpenSSL's or IANA's) is applied, anything else (aliases
// such as HIGH, exclusions) is logged and Go's defaults stay. TLS 1.3
// suites are not configurable in Go (tls-ciphersuites is logged and
// ignored). tls-dh-params-file is logged and ignored: Go offers ECDHE
// only. tls-key-file-pass decrypts a legacy encrypted PEM key
// (Proc-Type: 4,ENCRYPTED) or an encrypted PKCS#8 one (PBES2 with PBKDF2
// and AES-CBC or DES-EDE3-CBC: what OpenSSL 3 writes). tls-prefer-server-ciphers is Go's behaviour always; session
// caching maps to session tickets (tls-session-caching no turns them off).

// TLS client authentication modes (tls-auth-clients).
const (
	TLSAuthNo       = 0
	TLSAuthYes      = 1
	TLSAuthOptional = 2
)

// TLSSettings are the tls-* directives' values.
type TLSSettings struct {
	Port                                      int
	CertFile, KeyFile, KeyFilePass            string
	ClientCertFile, ClientKeyFile, ClientPass string
	CAFile, CADir                             string
	DHParamsFile                              string
	Protocols, Ciphers, Ciphersuites          string
	AuthClients                               int
	SessionCaching                            bool
	Replication, Cluster                      bool
}

// TLSSettingsOf reads cfg's tls-* directives.
func TLSSettingsOf(cfg *configs.Config) TLSSettings {
	v := func(name string) string { s, _ := cfg.Value(name); return s }
	t := TLSSettings{
		CertFile: v("tls-cert-file"), KeyFile: v("tls-key-file"), KeyFilePass: v("tls-key-file-pass"),
		ClientCertFile: v("tls-client-cert-file"), ClientKeyFile: v("tls-client-key-file"), ClientPass: v("tls-client-key-file-pass"),
		CAFile: v("tls-ca-cert-file"), CADir: v("tls-ca-cert-dir"), DHParamsFile: v("tls-dh-params-file"),
		Protocols: v("tls-protocols"), Ciphers: v("tls-ciphers"), Ciphersuites: v("tls-ciphersuites"),
		SessionCaching: v("tls-session-caching") == "yes",
		Replication:    v("tls-replication") == "yes",
		Cluster:        v("tls-cluster") == "yes",
	}
	t.Port, _ = strconv.Atoi(v("tls-port"))
	switch v("tls-auth-clients") {
	case "no":
		t.AuthClients = TLSAuthNo
	case "optional":
		t.AuthClients = TLSAuthOptional
	default:
		t.AuthClients = TLSAuthYes
	}
	return t
}

// Enabled reports whether the settings ask for TLS anywhere (initServer's
// condition for tlsConfigure).
func (t TLSSettings) Enabled() bool { return t.Port != 0 || t.Replication || t.Cluster }

// TLSContext is one configured context: the server side's and the client
// side's configurations.
type TLSContext struct {
	server *tls.Config
	client *tls.Config
	// Warnings are what the configuration could not apply as OpenSSL
	// would (see the package notes), for the log.
	Warnings []string
}

// BuildTLS is tlsConfigure: the context of t, or an error whose text is
// the line Redis logs.
func BuildTLS(t TLSSettings) (*TLSContext, error) {
	if t.CertFile == "" {
		return nil, errors.New("No tls-cert-file configured!")
	}
	if t.KeyFile == "" {
		return nil, errors.New("No tls-key-file configured!")
	}
	if (t.AuthClients != TLSAuthNo || t.Cluster || t.Replication) && t.CAFile == "" && t.CADir == "" {
		return nil, errors.New("Either tls-ca-cert-file or tls-ca-cert-dir must be specified when tls-cluster, tls-replication or tls-auth-clients are enabled!")
	}
	minV, maxV, err := parseTLSProtocols(t.Protocols)
	if err != nil {
		return nil, err
	}
	ctx := &TLSContext{}
	cert, err := loadKeyPair(t.CertFile, t.KeyFile, t.KeyFilePass)
	if err != nil {
		return nil, err
	}
	var pool *x509.CertPool
	if t.CAFile != "" || t.CADir != "" {
		if pool, err = loadCAs(t.CAFile, t.CADir); err != nil {
			return nil, err
		}
	}
	suites, warn := parseCiphers(t.Ciphers)
	if warn != "" {
		ctx.Warnings = append(ctx.Warnings, warn)
	}
	if t.Ciphersuites != "" {
		ctx.Warnings = append(ctx.Warnings, "tls-ciphersuites is not applied: TLS 1.3 cipher suites are not configurable in Go's TLS; its defaults are used")
	}
	if t.DHParamsFile != "" {
		if _, err := os.Stat(t.DHParamsFile); err != nil {
			return nil, fmt.Errorf("Failed to load %s: %s", t.DHParamsFile, errnoText(err))
		}
		ctx.Warnings = append(ctx.Warnings, "tls-dh-params-file is not applied: only ECDHE key exchanges are offered")
	}
	base := &tls.Config{
		MinVersion:             minV,
		MaxVersion:             maxV,
		CipherSuites:           suites,
		SessionTicketsDisabled: !t.SessionCaching,
		Renegotiation:          tls.RenegotiateNever,
	}
	srv := base.Clone()
	srv.Certificates = []tls.Certificate{cert}
	srv.ClientCAs = pool
	ctx.server = srv

	cli := base.Clone()
	cli.Certificates = []tls.Certificate{cert}
	if t.ClientCertFile != "" && t.ClientKeyFile != "" {
		ccert, err := loadKeyPair(t.ClientCertFile, t.ClientKeyFile, t.ClientPass)
		if err != nil {
			return nil, err
		}
		cli.Certificates = []tls.Certificate{ccert}
	}
	// SSL_VERIFY_PEER against the CAs, with no host name check (Redis
	// sets no expected host): Go's own verification is replaced by a
	// chain check alone.
	cli.InsecureSkipVerify = true
	cli.VerifyPeerCertificate = VerifyChain(pool)
	ctx.client = cli
	return ctx, nil
}

// ServerConfig is the configuration for a connection accepted with the
// given tls-auth-clients mode.
func (c *TLSContext) ServerConfig(auth int) *tls.Config {
	cfg := c.server.Clone()
	switch auth {
	case TLSAuthNo:
		cfg.ClientAuth = tls.NoClientCert
	case TLSAuthOptional:
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	default:
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg
}

// ClientConfig is the configuration for a connection the process opens.
func (c *TLSContext) ClientConfig() *tls.Config { return c.client.Clone() }

// TLSState holds the process's current context and tls-auth-clients mode:
// listeners made by Listener serve each new connection with the context
// current when it is accepted, so CONFIG SET of a certificate applies to
// the next connections (tlsConfigure swaps redis_tls_ctx).
type TLSState struct {
	ctx  atomic.Pointer[TLSContext]
	auth atomic.Int32
}

// Set makes ctx the current context (nil: not configured).
func (s *TLSState) Set(ctx *TLSContext) { s.ctx.Store(ctx) }

// Configured reports whether a context was set (isTlsConfigured).
func (s *TLSState) Configured() bool { return s.ctx.Load() != nil }

// SetAuth sets the tls-auth-clients mode for the next connections.
func (s *TLSState) SetAuth(mode int) { s.auth.Store(int32(mode)) }

// Client is the configuration for an outgoing connection, nil when TLS
// is not configured.
func (s *TLSState) Client() *tls.Config {
	if c := s.ctx.Load(); c != nil {
		return c.ClientConfig()
	}
	return nil
}

// TLSClient makes conn a TLS client connection of cfg (a replica's link
// to its master, a sentinel's links), its handshake done within timeout
// (none for 0); conn is closed on failure.
func TLSClient(conn net.Conn, cfg *tls.Config, timeout time.Duration) (net.Conn, error) {
	tc := tls.Client(conn, cfg)
	if timeout > 0 {
		_ = tc.SetDeadline(time.Now().Add(timeout))
	}
	if err := tc.Handshake(); err != nil {
		conn.Close()
		return nil, err
	}
	_ = tc.SetDeadline(time.Time{})
	return tc, nil
}

// Listener wraps a TCP listener: each accepted connection is a server-side
// TLS connection (its handshake runs on its first read or write, in the
// connection's own goroutine, so a peer that never completes it holds
// only its connection).
func (s *TLSState) Listener(l net.Listener) net.Listener { return &tlsListener{Listener: l, st: s} }

type tlsListener struct {
	net.Listener
	st *TLSState
}

func (l *tlsListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	ctx := l.st.ctx.Load()
	if ctx == nil { // cannot happen: a TLS listener opens after a context is set
		c.Close()
		return nil, errors.New("TLS is not configured")
	}
	return tls.Server(c, ctx.ServerConfig(int(l.st.auth.Load()))), nil
}

// IsTLSListener reports whether l was made by TLSState.Listener.
func IsTLSListener(l net.Listener) bool { _, ok := l.(*tlsListener); return ok }

// parseTLSProtocols is parseProtocolsConfig: "" is TLSv1.2 and TLSv1.3;
// tokens separated by spaces, case-insensitive.
func parseTLSProtocols(s string) (minV, maxV uint16, err error) {
	if s == "" {
		return tls.VersionTLS12, tls.VersionTLS13, nil
	}
	var set [4]bool // 1.0 .. 1.3
	for _, tok := range strings.Split(s, " ") {
		switch strings.ToLower(tok) {
		case "tlsv1":
			set[0] = true
		case "tlsv1.1":
			set[1] = true
		case "tlsv1.2":
			set[2] = true
		case "tlsv1.3":
			set[3] = true
		default:
			return 0, 0, errors.New("Invalid tls-protocols specified. Use a combination of 'TLSv1', 'TLSv1.1', 'TLSv1.2' and 'TLSv1.3'.")
		}
	}
	versions := [4]uint16{tls.VersionTLS10, tls.VersionTLS11, tls.VersionTLS12, tls.VersionTLS13}
	for i, on := range set {
		if on {
			if minV == 0 {
				minV = versions[i]
			}
			maxV = versions[i]
		}
	}
	// Go takes a range: a gap (TLSv1 TLSv1.3) allows the versions between.
	return minV, maxV, nil
}

// loadKeyPair reads a certificate chain and its key, the key decrypted
// with pass when it is a legacy encrypted PEM block.
func loadKeyPair(certFile, keyFile, pass string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("Failed to load certificate: %s: %s", certFile, errnoText(err))
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("Failed to load private key: %s: %s", keyFile, errnoText(err))
	}
	if pass != "" {
		keyPEM, err = decryptKeyPEM(keyPEM, pass)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("Failed to load private key: %s: %v", keyFile, err)
		}
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		if strings.Contains(err.Error(), "certificate") && !strings.Contains(err.Error(), "private key") {
			return tls.Certificate{}, fmt.Errorf("Failed to load certificate: %s: %v", certFile, err)
		}
		return tls.Certificate{}, fmt.Errorf("Failed to load private key: %s: %v", keyFile, err)
	}
	return cert, nil
}

// decryptKeyPEM decrypts the legacy encrypted PEM blocks of keyPEM.
func decryptKeyPEM(keyPEM []byte, pass string) ([]byte, error) {
	var out []byte
	rest := keyPEM
	for {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			break
		}
		if b.Type == "ENCRYPTED PRIVATE KEY" { // PKCS#8, OpenSSL 3's default
			der, err := decryptPKCS8(b.Bytes, pass)
			if err != nil {
				return nil, err
			}
			b = &pem.Block{Type: "PRIVATE KEY", Bytes: der}
		}
		//lint:ignore SA1019 Redis's tls-key-file-pass decrypts these
		if x509.IsEncryptedPEMBlock(b) { //nolint:staticcheck
			der, err := x509.DecryptPEMBlock(b, []byte(pass)) //nolint:staticcheck
			if err != nil {
				return nil, err
			}
			b = &pem.Block{Type: b.Type, Bytes: der}
		}
		out = append(out, pem.EncodeToMemory(b)...)
	}
	return out, nil
}

// loadCAs is SSL_CTX_load_verify_locations: the certificates of file and
// of every file in dir.
func loadCAs(file, dir string) (*x509.CertPool, error) {
	pool := x509.NewCertPool()
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return nil, fmt.Errorf("Failed to configure CA certificate(s) file/directory: %s: %s", file, errnoText(err))
		}
		if !pool.AppendCertsFromPEM(b) {
			return nil, fmt.Errorf("Failed to configure CA certificate(s) file/directory: %s: no certificate found", file)
		}
	}
	if dir != "" {
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("Failed to configure CA certificate(s) file/directory: %s: %s", dir, errnoText(err))
		}
		for _, e := range ents {
			if e.IsDir() {
				continue
			}
			if b, err := os.ReadFile(filepath.Join(dir, e.Name())); err == nil {
				pool.AppendCertsFromPEM(b)
			}
		}
	}
	return pool, nil
}

// VerifyChain verifies a peer's chain against pool (nil: the system's),
// without a host name: a tls.Config's VerifyPeerCertificate, with
// InsecureSkipVerify set to skip Go's own check.
func VerifyChain(pool *x509.CertPool) func([][]byte, [][]*x509.Certificate) error {
	return func(raw [][]byte, _ [][]*x509.Certificate) error {
		if len(raw) == 0 {
			return errors.New("the peer sent no certificate")
		}
		certs := make([]*x509.Certificate, len(raw))
		for i, r := range raw {
			c, err := x509.ParseCertificate(r)
			if err != nil {
				return err
			}
			certs[i] = c
		}
		inter := x509.NewCertPool()
		for _, c := range certs[1:] {
			inter.AddCert(c)
		}
		_, err := certs[0].Verify(x509.VerifyOptions{Roots: pool, Intermediates: inter, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}})
		return err
	}
}

// parseCiphers maps an OpenSSL tls-ciphers list of exact suite names
// (OpenSSL's or IANA's, separated by colons) to Go's suites. Anything it
// cannot map leaves Go's defaults and returns a warning.
func parseCiphers(s string) ([]uint16, string) {
	if s == "" || s == "DEFAULT" { // OpenSSL's default list: Go's is its counterpart
		return nil, ""
	}
	byName := map[string]uint16{}
	for _, cs := range append(tls.CipherSuites(), tls.InsecureCipherSuites()...) {
		byName[cs.Name] = cs.ID
	}
	for name, iana := range opensslCipherNames {
		if id, ok := byName[iana]; ok {
			byName[name] = id
		}
	}
	var ids []uint16
	for _, tok := range strings.FieldsFunc(s, func(r rune) bool { return r == ':' || r == ',' || r == ' ' }) {
		id, ok := byName[tok]
		if !ok {
			return nil, fmt.Sprintf("tls-ciphers %q is not applied: %q is not a TLS 1.2 cipher suite name Go's TLS knows (OpenSSL aliases and exclusions are not supported); its defaults are used", s, tok)
		}
		ids = append(ids, id)
	}
	return ids, ""
}

// opensslCipherNames maps OpenSSL's names of the TLS 1.2 suites Go
// implements to their IANA names.
var opensslCipherNames = map[string]string{
	"ECDHE-ECDSA-AES128-GCM-SHA256": "TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256",
	"ECDHE-RSA-AES128-GCM-SHA256":   "TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256",
	"ECDHE-ECDSA-AES256-GCM-SHA384": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384",
	"ECDHE-RSA-AES256-GCM-SHA384":   "TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384",
	"ECDHE-ECDSA-CHACHA20-POLY1305": "TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256",
	"ECDHE-RSA-CHACHA20-POLY1305":   "TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256",
	"ECDHE-ECDSA-AES128-SHA":        "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA",
	"ECDHE-RSA-AES128-SHA":          "TLS_ECDHE_RSA_WITH_AES_128_CBC_SHA",
	"ECDHE-ECDSA-AES256-SHA":        "TLS_ECDHE_ECDSA_WITH_AES_256_CBC_SHA",
	"ECDHE-RSA-AES256-SHA":          "TLS_ECDHE_RSA_WITH_AES_256_CBC_SHA",
	"AES128-GCM-SHA256":             "TLS_RSA_WITH_AES_128_GCM_SHA256",
	"AES256-GCM-SHA384":             "TLS_RSA_WITH_AES_256_GCM_SHA384",
	"AES128-SHA":                    "TLS_RSA_WITH_AES_128_CBC_SHA",
	"AES256-SHA":                    "TLS_RSA_WITH_AES_256_CBC_SHA",
}

// errnoText is an *os.PathError's errno text, as strerror.
func errnoText(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		s := pe.Err.Error()
		if s != "" {
			return strings.ToUpper(s[:1]) + s[1:]
		}
	}
	return err.Error()
}
