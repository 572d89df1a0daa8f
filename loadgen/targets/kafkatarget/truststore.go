// This file reads the trusted certificates of a Java trust store, JKS or
// PKCS12, as Kafka's Java clients take it in ssl.truststore.location.

package kafkatarget

import (
	"bytes"
	"crypto/x509"
	"encoding/binary"
	"errors"
	"fmt"

	"github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// jksMagic opens every JKS file.
const jksMagic = 0xFEEDFEED

// errNoTrustedCerts is a trust store that holds no trusted certificate.
var errNoTrustedCerts = errors.New("holds no trusted certificate")

// errNotTrustStore is a file that is neither JKS nor PKCS12.
var errNotTrustStore = errors.New("is neither a JKS nor a PKCS12 trust store")

// readTrustStore returns the trusted certificates of a JKS or PKCS12 trust
// store. The format is taken from the content, not the declared type: a
// Java 9+ client reads a PKCS12 file declared JKS and the other way round
// (keystore.type.compat), so a file that works there works here.
func readTrustStore(data []byte, password string) ([]*x509.Certificate, error) {
	switch {
	case len(data) >= 4 && binary.BigEndian.Uint32(data) == jksMagic:
		return readJKS(data, password)
	case len(data) > 0 && data[0] == 0x30: // a DER SEQUENCE: PKCS12
		certs, err := pkcs12.DecodeTrustStore(data, password)
		if err != nil {
			return nil, fmt.Errorf("reading it as PKCS12: %w", err)
		}
		if len(certs) == 0 {
			return nil, errNoTrustedCerts
		}
		return certs, nil
	}
	return nil, errNotTrustStore
}

// readJKS returns the trusted certificate entries of a JKS file, checking
// its integrity with password.
func readJKS(data []byte, password string) ([]*x509.Certificate, error) {
	ks := keystore.New(keystore.WithOrderedAliases())
	if err := ks.Load(bytes.NewReader(data), []byte(password)); err != nil {
		return nil, fmt.Errorf("reading it as JKS: %w", err)
	}
	var certs []*x509.Certificate
	for _, alias := range ks.Aliases() {
		if !ks.IsTrustedCertificateEntry(alias) {
			continue
		}
		e, err := ks.GetTrustedCertificateEntry(alias)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", alias, err)
		}
		c, err := x509.ParseCertificate(e.Certificate.Content)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", alias, err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, errNoTrustedCerts
	}
	return certs, nil
}
