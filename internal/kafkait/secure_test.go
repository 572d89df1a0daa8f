// This file holds the secured-cluster runs: the kafka target against a
// broker's SASL_SSL listener (scripts/kafka/up --security sasl_ssl: PLAIN
// and SCRAM-SHA-512, a private CA) through --command-config files as Java
// clients and librdkafka users write them, a broker restart through
// --broker-control on it, and a wrong password or an untrusted CA failing
// at once with the property to fix.

package kafkait

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/sharebench/sharebench/loadgen/result"
	"github.com/sharebench/sharebench/reports"
)

// envSecure names the SASL_SSL bootstrap list scripts/kafka/up --security
// sasl_ssl prints, and envSecureDir its run directory (KAFKA_RUN_DIR),
// which holds the client property files and the private CA.
const (
	envSecure    = "SHAREBENCH_KAFKA_SECURE"
	envSecureDir = "SHAREBENCH_KAFKA_SECURE_DIR"
)

// secureCluster is the secured broker the tests run against.
type secureCluster struct {
	bootstrap string
	dir       string            // KAFKA_RUN_DIR of the secured broker
	secrets   map[string]string // secure/passwords: users, their passwords
}

// plainProps and scramProps are the client files up writes: PLAIN with
// the JKS trust store, SCRAM-SHA-512 with the PKCS12 one.
func (c secureCluster) plainProps() string { return filepath.Join(c.dir, "client-plain.properties") }
func (c secureCluster) scramProps() string { return filepath.Join(c.dir, "client-scram.properties") }
func (c secureCluster) caPEM() string      { return filepath.Join(c.dir, "secure", "ca.pem") }

// secure returns the secured broker from the environment, or skips with
// the commands that start one.
func secure(t *testing.T) secureCluster {
	t.Helper()
	c := secureCluster{bootstrap: os.Getenv(envSecure), dir: os.Getenv(envSecureDir)}
	if c.bootstrap == "" || c.dir == "" {
		t.Skipf("secured-cluster tier is off: start one with KAFKA_PORT=39192 KAFKA_CONTROLLER_PORT=39193 KAFKA_RUN_DIR=/tmp/kafka-secure scripts/kafka/up --security sasl_ssl, then set %s to the address it prints and %s=/tmp/kafka-secure", envSecure, envSecureDir)
	}
	f, err := os.Open(filepath.Join(c.dir, "secure", "passwords"))
	if err != nil {
		t.Fatalf("%s=%s: %v (is it the KAFKA_RUN_DIR of scripts/kafka/up --security sasl_ssl?)", envSecureDir, c.dir, err)
	}
	defer f.Close()
	c.secrets = map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if k, v, ok := strings.Cut(sc.Text(), "="); ok {
			c.secrets[k] = v
		}
	}
	for _, k := range []string{"plain_user", "plain_password", "scram_user", "scram_password"} {
		if c.secrets[k] == "" {
			t.Fatalf("%s has no %s", f.Name(), k)
		}
	}
	return c
}

// writeProps writes a client properties file into a temporary directory.
func writeProps(t *testing.T, name string, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSecureModes runs the quick workload in every supported mode through
// the secured listener, once with each client file up wrote (PLAIN over
// TLS with the JKS trust store, SCRAM-SHA-512 over TLS with the PKCS12
// one), and once as a librdkafka user writes SCRAM (sasl.mechanisms,
// sasl.username, sasl.password, ssl.ca.location with the CA's PEM) in one
// mode; every mode passes the verifier. The three runs go side by side.
func TestSecureModes(t *testing.T) {
	c := secure(t)
	librdkafka := func(t *testing.T) string {
		return writeProps(t, "librdkafka.properties",
			"security.protocol=sasl_ssl", "sasl.mechanisms=SCRAM-SHA-512",
			"sasl.username="+c.secrets["scram_user"], "sasl.password="+c.secrets["scram_password"],
			"ssl.ca.location="+c.caPEM())
	}
	for _, tc := range []struct {
		name  string
		props func(t *testing.T) string
		modes []string
	}{
		{"plain-jks", func(*testing.T) string { return c.plainProps() }, supportedModes},
		{"scram-sha-512-pkcs12", func(*testing.T) string { return c.scramProps() }, supportedModes},
		{"scram-sha-512-librdkafka-pem", librdkafka, []string{"explicit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			r := sharebenchRunAt(t, c.bootstrap, "--command-config", tc.props(t),
				"--workload", workload("quick-kafka.yaml"), "--modes", strings.Join(tc.modes, ","),
				"--seed", seedFor(t.Name()))
			for _, mode := range tc.modes {
				m := checkMode(t, r, mode)
				if mode == "classic-eos" {
					checkJudged(t, m)
				}
			}
		})
	}
}

// TestSecureBrokerRestart restarts the secured broker mid-load through
// --broker-control (scripts/kafka/control on the secured run directory):
// the clients log in again over TLS when it is back and explicit loses
// nothing committed.
func TestSecureBrokerRestart(t *testing.T) {
	c := secure(t)
	script, err := filepath.Abs(filepath.Join("..", "..", "scripts", "kafka", "control"))
	if err != nil {
		t.Fatal(err)
	}
	control := "KAFKA_RUN_DIR='" + c.dir + "' " + script + " {action}"
	r := sharebenchRunAt(t, c.bootstrap, "--command-config", c.scramProps(),
		"--workload", workload("broker-restart.yaml"), "--modes", "explicit",
		"--broker-control", control, "--seed", seedFor(t.Name()))
	m := checkMode(t, r, "explicit")
	var restart *result.FaultEvent
	for i, f := range m.Faults {
		t.Logf("  fault at %.2fs, back at %.2fs: %s %s", float64(f.AtNs)/1e9, float64(f.EndNs)/1e9, f.Kind, f.Detail)
		if f.Kind == "engine-restart" && !f.Failed && f.Broker != "" && f.EndNs > 0 {
			restart = &m.Faults[i]
		}
	}
	if restart == nil {
		t.Fatalf("the secured broker was not restarted (faults %+v)", m.Faults)
	}
	// The clients logged in again once the broker was back: records were
	// sent or processed after the control command returned.
	var after int64
	for _, s := range m.Series {
		if s.StartNs >= restart.EndNs {
			after += s.Inputs + s.Outputs
		}
	}
	t.Logf("inputs and outputs after the broker was back: %d", after)
	if after == 0 {
		t.Errorf("nothing was sent or processed after the broker was back at %.2fs: the clients did not reconnect over SASL_SSL", float64(restart.EndNs)/1e9)
	}
}

// TestSecureFailsFast: a wrong password and a CA that did not sign the
// brokers' certificate stop the run before anything is created, with exit
// code 2 and one line that names the file and the property to fix — the
// broker's refusal, never the ping timeout's "no broker answered".
func TestSecureFailsFast(t *testing.T) {
	c := secure(t)
	other := otherCA(t)
	wrongJAAS := func(t *testing.T) string {
		b, err := os.ReadFile(c.plainProps())
		if err != nil {
			t.Fatal(err)
		}
		text := regexp.MustCompile(`password="[^"]*"`).ReplaceAllString(string(b), `password="wrong-password"`)
		return writeProps(t, "wrong-jaas.properties", text)
	}
	for _, tc := range []struct {
		name  string
		props func(t *testing.T) string
		want  []string
	}{
		{"plain-wrong-password", wrongJAAS, []string{
			`the SASL PLAIN login of user "` + c.secrets["plain_user"] + `" was refused`, "SASL_AUTHENTICATION_FAILED",
			"fix the user name or password in --command-config", "wrong-jaas.properties: sasl.jaas.config"}},
		{"scram-wrong-password", func(t *testing.T) string {
			return writeProps(t, "wrong-scram.properties", "security.protocol=SASL_SSL", "sasl.mechanism=SCRAM-SHA-512",
				"sasl.username="+c.secrets["scram_user"], "sasl.password=wrong-password", "ssl.ca.location="+c.caPEM())
		}, []string{`the SASL SCRAM-SHA-512 login of user "` + c.secrets["scram_user"] + `" was refused`,
			"wrong-scram.properties: sasl.password"}},
		{"untrusted-ca-pem", func(t *testing.T) string {
			return writeProps(t, "other-ca.properties", "security.protocol=SASL_SSL", "sasl.mechanism=PLAIN",
				"sasl.username="+c.secrets["plain_user"], "sasl.password="+c.secrets["plain_password"], "ssl.ca.location="+other)
		}, []string{"the brokers' TLS certificate is not trusted", "certificate signed by unknown authority",
			"other-ca.properties: ssl.ca.location"}},
		{"untrusted-ca-jks", func(t *testing.T) string {
			// keytool's trust store of the kafkatarget tests: another CA.
			jks, err := filepath.Abs(filepath.Join("..", "..", "loadgen", "targets", "kafkatarget", "testdata", "truststore", "truststore.jks"))
			if err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(c.scramProps())
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
				if !strings.HasPrefix(l, "ssl.truststore.") {
					lines = append(lines, l)
				}
			}
			lines = append(lines, "ssl.truststore.location="+jks, "ssl.truststore.password=changeit")
			return writeProps(t, "other-truststore.properties", lines...)
		}, []string{"the brokers' TLS certificate is not trusted", "other-truststore.properties: ssl.truststore.location"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			start := time.Now()
			r := sharebenchRunAt(t, c.bootstrap, "--command-config", tc.props(t),
				"--workload", workload("quick-kafka.yaml"), "--modes", "explicit", "--seed", seedFor(t.Name()))
			t.Logf("refused after %v", time.Since(start).Round(time.Millisecond))
			if r.code != reports.ExitUsage {
				t.Errorf("exit code %d, want %d", r.code, reports.ExitUsage)
			}
			msg := strings.TrimSpace(r.stderr)
			if n := strings.Count(msg, "\n"); n != 0 {
				t.Errorf("stderr has %d lines, want the one error line:\n%s", n+1, msg)
			}
			for _, w := range append(tc.want, "kafka: brokers "+c.bootstrap+": ") {
				if !strings.Contains(msg, w) {
					t.Errorf("stderr does not say %q:\n%s", w, msg)
				}
			}
			for _, bad := range []string{"no broker answered", "cannot reach brokers", c.secrets["plain_password"], c.secrets["scram_password"]} {
				if strings.Contains(msg, bad) {
					t.Errorf("stderr holds %q:\n%s", bad, msg)
				}
			}
			if _, err := os.Stat(filepath.Join(r.out, result.FileName)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a %s was written (stat: %v): the run should have stopped before running anything", result.FileName, err)
			}
		})
	}
}

// otherCA writes the PEM certificate of a fresh CA that signed nothing the
// broker holds.
func otherCA(t *testing.T) string {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "not the broker's CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "other-ca.pem")
	if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
