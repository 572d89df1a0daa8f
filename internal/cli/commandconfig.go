// This file reads --command-config: a Kafka client properties file, as
// Kafka's own tools take it, translated to the kafka target's options. It
// takes the connection and security properties sharebench can honour and
// refuses any other with one error naming the file, the line and the
// property, so a setting is never silently dropped.

package cli

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strings"

	"github.com/sharebench/sharebench/loadgen/targets/kafkatarget"
)

// commandConfig is what a properties file sets.
type commandConfig struct {
	brokers []string
	opts    kafkatarget.Options // SASL and TLS fields only
}

// readProperties parses Java properties text: key=value, key:value or
// key value lines, # and ! comments, a trailing backslash continuing the
// line, and the usual escapes. It returns the keys in file order with the
// line each starts on.
func readProperties(data []byte) (keys []string, vals map[string]string, lines map[string]int, err error) {
	vals, lines = map[string]string{}, map[string]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64*1024), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		start := n
		line := strings.TrimLeft(sc.Text(), " \t\f")
		if line == "" || line[0] == '#' || line[0] == '!' {
			continue
		}
		for continues(line) && sc.Scan() {
			n++
			line = line[:len(line)-1] + strings.TrimLeft(sc.Text(), " \t\f")
		}
		key, val := splitProperty(line)
		if key == "" {
			return nil, nil, nil, fmt.Errorf("line %d: no property name before the value", start)
		}
		if _, dup := vals[key]; !dup {
			keys = append(keys, key)
		}
		vals[key], lines[key] = val, start
	}
	return keys, vals, lines, sc.Err()
}

// continues reports whether a line ends in an odd number of backslashes.
func continues(line string) bool {
	n := 0
	for i := len(line) - 1; i >= 0 && line[i] == '\\'; i-- {
		n++
	}
	return n%2 == 1
}

// splitProperty splits at the first unescaped '=', ':' or whitespace.
func splitProperty(line string) (key, val string) {
	var k strings.Builder
	i := 0
	for ; i < len(line); i++ {
		c := line[i]
		if c == '\\' && i+1 < len(line) {
			i++
			k.WriteByte(unescape(line[i]))
			continue
		}
		if c == '=' || c == ':' || c == ' ' || c == '\t' || c == '\f' {
			break
		}
		k.WriteByte(c)
	}
	rest := strings.TrimLeft(line[i:], " \t\f")
	if rest != "" && (rest[0] == '=' || rest[0] == ':') {
		rest = strings.TrimLeft(rest[1:], " \t\f")
	}
	var v strings.Builder
	for j := 0; j < len(rest); j++ {
		if rest[j] == '\\' && j+1 < len(rest) {
			j++
			v.WriteByte(unescape(rest[j]))
			continue
		}
		v.WriteByte(rest[j])
	}
	return k.String(), v.String()
}

func unescape(c byte) byte {
	switch c {
	case 't':
		return '\t'
	case 'n':
		return '\n'
	case 'r':
		return '\r'
	case 'f':
		return '\f'
	}
	return c
}

// jaasOption matches one key="value" option of a JAAS login module line.
var jaasOption = regexp.MustCompile(`(\w+)\s*=\s*"((?:[^"\\]|\\.)*)"`)

// loadCommandConfig reads and translates a --command-config file.
func loadCommandConfig(path string) (*commandConfig, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, usageErr("--command-config %s: %v", path, unwrapPathErr(err))
	}
	return parseCommandConfig(path, data)
}

// parseCommandConfig translates properties text; file names it in errors.
func parseCommandConfig(file string, data []byte) (*commandConfig, error) {
	keys, vals, lines, err := readProperties(data)
	if err != nil {
		return nil, usageErr("--command-config %s: %v", file, err)
	}
	bad := func(key, format string, args ...any) error {
		return usageErr("--command-config %s:%d: %s: %s", file, lines[key], key, fmt.Sprintf(format, args...))
	}
	cc := &commandConfig{}
	protocol := "PLAINTEXT"
	trustType, keyType := "JKS", "JKS" // Kafka's defaults
	for _, k := range keys {
		v := strings.TrimSpace(vals[k])
		switch k {
		case "bootstrap.servers":
			for _, b := range strings.Split(v, ",") {
				if b = strings.TrimSpace(b); b != "" {
					cc.brokers = append(cc.brokers, b)
				}
			}
		case "security.protocol":
			protocol = strings.ToUpper(v)
			switch protocol {
			case "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
			default:
				return nil, bad(k, "%q is not a security protocol; use PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", v)
			}
		case "sasl.mechanism":
			switch strings.ToUpper(v) {
			case "PLAIN":
				cc.opts.SASLMechanism = kafkatarget.SASLPlain
			case "SCRAM-SHA-256":
				cc.opts.SASLMechanism = kafkatarget.SASLScramSHA256
			case "SCRAM-SHA-512":
				cc.opts.SASLMechanism = kafkatarget.SASLScramSHA512
			default:
				return nil, bad(k, "%q is not supported; use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", v)
			}
		case "sasl.jaas.config":
			if !strings.Contains(v, "PlainLoginModule") && !strings.Contains(v, "ScramLoginModule") {
				return nil, bad(k, "only PlainLoginModule and ScramLoginModule with username and password are supported")
			}
			for _, m := range jaasOption.FindAllStringSubmatch(v, -1) {
				val := strings.ReplaceAll(strings.ReplaceAll(m[2], `\"`, `"`), `\\`, `\`)
				switch m[1] {
				case "username":
					cc.opts.SASLUser = val
				case "password":
					cc.opts.SASLPassword = val
				}
			}
			if cc.opts.SASLUser == "" || cc.opts.SASLPassword == "" {
				return nil, bad(k, `needs username="..." and password="..."`)
			}
		case "ssl.truststore.type":
			trustType = strings.ToUpper(v)
		case "ssl.keystore.type":
			keyType = strings.ToUpper(v)
		case "ssl.truststore.location":
			cc.opts.TLSCAFile = v
		case "ssl.keystore.location":
			// A PEM key store holds the private key and the certificate
			// chain in one file.
			cc.opts.TLSCertFile, cc.opts.TLSKeyFile = v, v
		case "ssl.endpoint.identification.algorithm":
			if !strings.EqualFold(v, "https") {
				return nil, bad(k, "%q is not supported: sharebench always verifies the broker's host name (remove the line, or set it to https)", v)
			}
		default:
			return nil, bad(k, "not supported by sharebench; it takes bootstrap.servers, security.protocol, sasl.mechanism, sasl.jaas.config (PLAIN, SCRAM), ssl.truststore.location and ssl.keystore.location (type PEM), ssl.truststore.type, ssl.keystore.type; remove the line")
		}
	}
	if cc.opts.TLSCAFile != "" && trustType != "PEM" {
		return nil, bad("ssl.truststore.location", "a %s trust store is not supported; convert it to PEM and set ssl.truststore.type=PEM", trustType)
	}
	if cc.opts.TLSCertFile != "" && keyType != "PEM" {
		return nil, bad("ssl.keystore.location", "a %s key store is not supported; convert it to PEM (key and certificate chain in one file) and set ssl.keystore.type=PEM", keyType)
	}
	tls := protocol == "SSL" || protocol == "SASL_SSL"
	sasl := protocol == "SASL_PLAINTEXT" || protocol == "SASL_SSL"
	if !tls && (cc.opts.TLSCAFile != "" || cc.opts.TLSCertFile != "") {
		return nil, bad("security.protocol", "is %s, yet the file sets a trust or key store; use SSL or SASL_SSL", protocol)
	}
	if sasl && cc.opts.SASLMechanism == "" {
		// Kafka's default mechanism.
		cc.opts.SASLMechanism = kafkatarget.SASLPlain
	}
	if sasl && cc.opts.SASLUser == "" {
		return nil, bad("security.protocol", "is %s but no sasl.jaas.config gives the username and password", protocol)
	}
	if !sasl && cc.opts.SASLUser != "" {
		return nil, bad("sasl.jaas.config", "is set but security.protocol is %s; use SASL_PLAINTEXT or SASL_SSL", protocol)
	}
	if !sasl {
		cc.opts.SASLMechanism = ""
	}
	cc.opts.TLS = tls
	return cc, nil
}

// unwrapPathErr drops the path an *os.PathError repeats.
func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
