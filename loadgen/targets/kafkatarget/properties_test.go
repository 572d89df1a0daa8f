// This file tests the client properties translator: Kafka client
// properties files for PLAIN and SCRAM over SASL_SSL and SASL_PLAINTEXT,
// PEM trust and key stores, the properties syntax (comments, separators,
// continuations, escapes), and one clear error for anything sharebench
// cannot honour.

package kafkatarget

import (
	"errors"
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
		{"jks-truststore", "security.protocol=SSL\nssl.truststore.location=/k/ts.jks\n", []string{"client.properties:2: ssl.truststore.location", "JKS", "PEM"}},
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
