// This file tests the client properties translator: Kafka client
// properties files for PLAIN and SCRAM over SASL_SSL and SASL_PLAINTEXT,
// PEM trust and key stores, JKS and PKCS12 trust stores as keytool writes
// them, librdkafka's spellings, the properties syntax (comments,
// separators, continuations, escapes), and one clear error for anything
// sharebench cannot honour.

package kafkatarget

import (
	"crypto/x509"
	"encoding/pem"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestParseClientProperties(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		text string
		want Options
		bs   []string
	}{
		{"plain-sasl-ssl", `# a comment
! another
bootstrap.servers=b1:9093, b2:9093
security.protocol=SASL_SSL
sasl.mechanism=PLAIN
sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required \
    username="alice" \
    password="s3cr=et";
ssl.truststore.type=PEM
ssl.truststore.location=/etc/kafka/ca.pem
`, Options{SASLMechanism: SASLPlain, SASLUser: "alice", SASLPassword: "s3cr=et", TLS: true, TLSCAFile: "/etc/kafka/ca.pem"},
			[]string{"b1:9093", "b2:9093"}},
		{"scram-512-plaintext", `security.protocol: SASL_PLAINTEXT
sasl.mechanism: SCRAM-SHA-512
sasl.jaas.config: org.apache.kafka.common.security.scram.ScramLoginModule required username="bob" password="pw";
`, Options{SASLMechanism: SASLScramSHA512, SASLUser: "bob", SASLPassword: "pw"}, nil},
		{"scram-256", "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-256\nsasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"u\" password=\"p\";\n",
			Options{SASLMechanism: SASLScramSHA256, SASLUser: "u", SASLPassword: "p", TLS: true}, nil},
		{"default-mechanism-plain", "security.protocol=SASL_PLAINTEXT\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"p\";\n",
			Options{SASLMechanism: SASLPlain, SASLUser: "u", SASLPassword: "p"}, nil},
		{"mtls-pem", "security.protocol SSL\nssl.keystore.type=PEM\nssl.keystore.location=/k/client.pem\nssl.truststore.type=PEM\nssl.truststore.location=/k/ca.pem\nssl.endpoint.identification.algorithm=https\n",
			Options{TLS: true, TLSCAFile: "/k/ca.pem", TLSCertFile: "/k/client.pem", TLSKeyFile: "/k/client.pem"}, nil},
		{"librdkafka-scram", "bootstrap.servers=b:9094\nsecurity.protocol=sasl_ssl\nsasl.mechanisms=SCRAM-SHA-512\nsasl.username=bob\nsasl.password=pw\nssl.ca.location=/k/ca.pem\n",
			Options{SASLMechanism: SASLScramSHA512, SASLUser: "bob", SASLPassword: "pw", TLS: true, TLSCAFile: "/k/ca.pem"}, []string{"b:9094"}},
		{"librdkafka-mtls", "security.protocol=ssl\nssl.certificate.location=/k/client.pem\nssl.key.location=/k/client.key\nssl.ca.location=/k/ca.pem\n",
			Options{TLS: true, TLSCAFile: "/k/ca.pem", TLSCertFile: "/k/client.pem", TLSKeyFile: "/k/client.key"}, nil},
		{"plaintext", "security.protocol=PLAINTEXT\n", Options{}, nil},
		{"empty", "", Options{}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cc, err := parseClientProperties("client.properties", []byte(tc.text))
			if err != nil {
				t.Fatalf("parseClientProperties: %v", err)
			}
			if !reflect.DeepEqual(cc.Security, tc.want) {
				t.Errorf("options\n got %+v\nwant %+v", cc.Security, tc.want)
			}
			if strings.Join(cc.Brokers, ",") != strings.Join(tc.bs, ",") {
				t.Errorf("brokers %v, want %v", cc.Brokers, tc.bs)
			}
		})
	}
}

func TestParseClientPropertiesErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, text string
		want       []string // all in the one error line
	}{
		{"unsupported-property", "security.protocol=SASL_SSL\nclient.id=x\n", []string{"client.properties:2: client.id: not supported", "remove the line"}},
		{"missing-truststore", "security.protocol=SSL\nssl.truststore.location=/k/ts.jks\n", []string{"client.properties:2: ssl.truststore.location", "/k/ts.jks", "no such file"}},
		{"truststore-type", "security.protocol=SSL\nssl.truststore.type=BKS\nssl.truststore.location=/k/ts.bks\n", []string{"client.properties:2: ssl.truststore.type", `"BKS"`, "JKS, PKCS12 or PEM"}},
		{"two-ca-properties", "security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location=/k/ca.pem\nssl.ca.location=/k/ca.pem\n", []string{"client.properties:4: ssl.ca.location", "ssl.truststore.location", "keep one"}},
		{"jaas-and-username", "security.protocol=SASL_SSL\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"s3cr\";\nsasl.username=u\n", []string{"client.properties:3: sasl.username", "sasl.jaas.config", "keep one"}},
		{"jaas-and-password", "security.protocol=SASL_SSL\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"s3cr\";\nsasl.password=s3cr\n", []string{"client.properties:3: sasl.password", "sasl.jaas.config", "keep one"}},
		{"password-and-jaas", "security.protocol=SASL_SSL\nsasl.password=s3cr\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\" password=\"s3cr\";\n", []string{"client.properties:3: sasl.jaas.config", "sasl.password", "keep one"}},
		{"username-without-password", "security.protocol=SASL_SSL\nsasl.username=u\n", []string{"client.properties:2: sasl.username", "needs sasl.password"}},
		{"password-without-username", "security.protocol=SASL_SSL\nsasl.password=s3cr\n", []string{"client.properties:2: sasl.password", "needs sasl.username"}},
		{"two-mechanism-spellings", "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\nsasl.mechanisms=PLAIN\n", []string{"client.properties:3: sasl.mechanisms", "sasl.mechanism", "keep one"}},
		{"certificate-without-key", "security.protocol=SSL\nssl.certificate.location=/k/c.pem\n", []string{"ssl.certificate.location", "needs ssl.key.location"}},
		{"librdkafka-username-plaintext", "sasl.username=u\nsasl.password=s3cr\n", []string{"client.properties:1: sasl.username", "SASL_PLAINTEXT or SASL_SSL"}},
		{"pkcs12-keystore", "security.protocol=SSL\nssl.keystore.type=PKCS12\nssl.keystore.location=/k/ks.p12\n", []string{"ssl.keystore.location", "PKCS12"}},
		{"gssapi", "security.protocol=SASL_SSL\nsasl.mechanism=GSSAPI\n", []string{"sasl.mechanism", "GSSAPI", "PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512"}},
		{"oauth-module", "security.protocol=SASL_SSL\nsasl.jaas.config=org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required;\n", []string{"sasl.jaas.config", "PlainLoginModule"}},
		{"no-password", "security.protocol=SASL_SSL\nsasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username=\"u\";\n", []string{"password"}},
		{"sasl-without-jaas", "security.protocol=SASL_SSL\nsasl.mechanism=PLAIN\n", []string{"security.protocol", "sasl.jaas.config"}},
		{"bad-protocol", "security.protocol=TLS\n", []string{"security.protocol", "\"TLS\""}},
		{"no-hostname-check", "security.protocol=SSL\nssl.endpoint.identification.algorithm=\n", []string{"ssl.endpoint.identification.algorithm"}},
		{"no-name", "security.protocol=SSL\n=x\n", []string{"client.properties: line 2: no property name before the value"}},
		{"store-without-ssl", "ssl.truststore.type=PEM\nssl.truststore.location=/k/ca.pem\n", []string{"security.protocol", "SSL or SASL_SSL"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseClientProperties("client.properties", []byte(tc.text))
			if err == nil {
				t.Fatal("accepted")
			}
			var pe *PropertiesError
			if !errors.As(err, &pe) {
				t.Fatalf("error %q (%T) is no *PropertiesError", err, err)
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "kafka: client.properties") {
				t.Errorf("want one line naming the file, got %q", msg)
			}
			for _, w := range tc.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
			if strings.Contains(msg, "s3cr") {
				t.Errorf("error echoes a secret: %q", msg)
			}
		})
	}
}

// TestClientPropertiesApplyTo: the file's security replaces the options',
// brokers given directly win over bootstrap.servers, and the rest stays.
func TestClientPropertiesApplyTo(t *testing.T) {
	t.Parallel()
	p := &ClientProperties{Brokers: []string{"file:9093"},
		Security: Options{SASLMechanism: SASLPlain, SASLUser: "u", SASLPassword: "p", TLS: true, TLSCAFile: "/ca.pem"}}
	o := Options{TLSInsecureSkipVerify: true, Keep: true}
	p.ApplyTo(&o)
	want := Options{Brokers: []string{"file:9093"}, SASLMechanism: SASLPlain, SASLUser: "u", SASLPassword: "p", TLS: true, TLSCAFile: "/ca.pem", TLSInsecureSkipVerify: true, Keep: true}
	if !reflect.DeepEqual(o, want) {
		t.Errorf("no brokers given:\n got %+v\nwant %+v", o, want)
	}
	o = Options{Brokers: []string{"flag:9092"}}
	p.ApplyTo(&o)
	if len(o.Brokers) != 1 || o.Brokers[0] != "flag:9092" {
		t.Errorf("brokers given: %v, want [flag:9092]", o.Brokers)
	}
}

// TestParseClientPropertiesTrustStores reads the trust stores of
// testdata/truststore (written by keytool; see its README.md): JKS and
// PKCS12 give the CA they hold whichever of the two types the file
// declares (as a Java 9+ client reads them), PEM stays a path, and a
// wrong or missing password or a file that is no trust store is one error
// naming the property.
func TestParseClientPropertiesTrustStores(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("testdata", "truststore"))
	if err != nil {
		t.Fatal(err)
	}
	pemData, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(pemData)
	if block == nil {
		t.Fatal("testdata/truststore/ca.pem holds no PEM block")
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	const head = "security.protocol=SASL_SSL\nsasl.mechanism=SCRAM-SHA-512\n" +
		"sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username=\"bob\" password=\"pw\";\n"
	for _, tc := range []struct {
		name, props string
		certs       bool   // the CA is in TLSCACerts
		caFile      string // TLSCAFile
		err         []string
	}{
		{name: "jks-default-type", props: "ssl.truststore.location=$DIR/truststore.jks\nssl.truststore.password=changeit\n", certs: true},
		{name: "jks", props: "ssl.truststore.type=JKS\nssl.truststore.location=$DIR/truststore.jks\nssl.truststore.password=changeit\n", certs: true},
		{name: "pkcs12", props: "ssl.truststore.type=PKCS12\nssl.truststore.location=$DIR/truststore.p12\nssl.truststore.password=changeit\n", certs: true},
		{name: "pkcs12-declared-jks", props: "ssl.truststore.location=$DIR/truststore.p12\nssl.truststore.password=changeit\n", certs: true},
		{name: "jks-declared-pkcs12", props: "ssl.truststore.type=pkcs12\nssl.truststore.location=$DIR/truststore.jks\nssl.truststore.password=changeit\n", certs: true},
		{name: "pem", props: "ssl.truststore.type=PEM\nssl.truststore.location=$DIR/ca.pem\n", caFile: "$DIR/ca.pem"},
		{name: "librdkafka-pem", props: "ssl.ca.location=$DIR/ca.pem\n", caFile: "$DIR/ca.pem"},
		{name: "jks-wrong-password", props: "ssl.truststore.location=$DIR/truststore.jks\nssl.truststore.password=s3cr\n",
			err: []string{"client.properties:4: ssl.truststore.location", "truststore.jks", "is ssl.truststore.password right?"}},
		{name: "pkcs12-wrong-password", props: "ssl.truststore.type=PKCS12\nssl.truststore.location=$DIR/truststore.p12\nssl.truststore.password=s3cr\n",
			err: []string{"client.properties:5: ssl.truststore.location", "truststore.p12", "is ssl.truststore.password right?"}},
		{name: "no-password", props: "ssl.truststore.location=$DIR/truststore.jks\n",
			err: []string{"client.properties:4: ssl.truststore.location", "needs ssl.truststore.password"}},
		{name: "pem-declared-jks", props: "ssl.truststore.location=$DIR/ca.pem\nssl.truststore.password=changeit\n",
			err: []string{"client.properties:4: ssl.truststore.location", "ca.pem is neither a JKS nor a PKCS12 trust store"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cc, err := parseClientProperties("client.properties", []byte(head+strings.ReplaceAll(tc.props, "$DIR", dir)))
			if tc.err != nil {
				if err == nil {
					t.Fatal("accepted")
				}
				for _, w := range tc.err {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if strings.Contains(err.Error(), "s3cr") || strings.Contains(err.Error(), "changeit") {
					t.Errorf("error echoes a secret: %q", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("parseClientProperties: %v", err)
			}
			o := cc.Security
			if got := len(o.TLSCACerts) == 1 && o.TLSCACerts[0].Equal(ca); got != tc.certs {
				t.Errorf("TLSCACerts %d certificates, holding the test CA: %v; want %v", len(o.TLSCACerts), got, tc.certs)
			}
			if want := strings.ReplaceAll(tc.caFile, "$DIR", dir); o.TLSCAFile != want {
				t.Errorf("TLSCAFile %q, want %q", o.TLSCAFile, want)
			}
			if !o.TLS || cc.CAProperty == "" || cc.PasswordProperty != "sasl.jaas.config" {
				t.Errorf("TLS %v, CAProperty %q, PasswordProperty %q; want TLS, the CA's property and sasl.jaas.config", o.TLS, cc.CAProperty, cc.PasswordProperty)
			}
			// The pool the dialer trusts holds the CA.
			cfg, err := o.tlsConfig()
			if err != nil {
				t.Fatalf("tlsConfig: %v", err)
			}
			if _, err := ca.Verify(x509.VerifyOptions{Roots: cfg.RootCAs}); err != nil {
				t.Errorf("the TLS config does not trust the test CA: %v", err)
			}
		})
	}
}
