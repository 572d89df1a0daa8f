// This file holds the TLS listener's configuration: the server's
// certificate and key, and the CA that client certificates must chain to
// when client authentication is on.

package serve

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// WithTLS serves TLS with the PEM certificate (chain) and key in certFile
// and keyFile (default: plaintext). With clientCAFile, every client must
// present a certificate that chains to a CA in that PEM file.
func WithTLS(certFile, keyFile, clientCAFile string) Option {
	return func(c *config) { c.tlsCert, c.tlsKey, c.tlsClientCA = certFile, keyFile, clientCAFile }
}

// loadTLS reads the TLS files; nil without WithTLS.
func (c *config) loadTLS() (*tls.Config, error) {
	if c.tlsCert == "" {
		return nil, nil
	}
	cert, err := tls.LoadX509KeyPair(c.tlsCert, c.tlsKey)
	if err != nil {
		return nil, fmt.Errorf("%w: --tls-cert %s, --tls-key %s: %v (want PEM files: the certificate chain, and its unencrypted private key)", ErrConfig, c.tlsCert, c.tlsKey, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if c.tlsClientCA != "" {
		pem, err := os.ReadFile(c.tlsClientCA)
		if err != nil {
			return nil, fmt.Errorf("%w: --tls-client-ca: %v", ErrConfig, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: --tls-client-ca %s: no PEM certificate in it", ErrConfig, c.tlsClientCA)
		}
		cfg.ClientCAs, cfg.ClientAuth = pool, tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}
