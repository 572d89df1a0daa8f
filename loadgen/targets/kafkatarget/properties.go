// This file translates a Kafka client properties file, as Kafka's own tools
// take it (--command-config) or as librdkafka users write it, to the
// target's Options. It takes the connection and security properties the
// target can honour and refuses any other with one error naming the file,
// the line and the property, so a setting is never silently dropped.

package kafkatarget

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"regexp"
	"strings"
)

// ClientProperties is what a client properties file sets.
type ClientProperties struct {
	// Brokers are bootstrap.servers, in file order.
	Brokers []string
	// Security holds the SASL and TLS fields of Options only.
	Security Options
	// PasswordProperty names the property that gave the SASL password
	// (sasl.jaas.config or sasl.password) and CAProperty the one that gave
	// the trusted CAs (ssl.truststore.location or ssl.ca.location); ""
	// when the file sets none. They are what to fix when the brokers
	// refuse the login or their certificate is not trusted.
	PasswordProperty, CAProperty string
}

// ApplyTo sets o's SASL and TLS settings to the file's, keeping o's
// TLSInsecureSkipVerify, and its seed brokers to the file's when o names
// none: brokers given to the caller directly win over bootstrap.servers,
// as --bootstrap-server does for Kafka's tools.
func (p *ClientProperties) ApplyTo(o *Options) {
	if len(o.Brokers) == 0 {
		o.Brokers = p.Brokers
	}
	s := p.Security
	o.SASLMechanism, o.SASLUser, o.SASLPassword = s.SASLMechanism, s.SASLUser, s.SASLPassword
	o.TLS, o.TLSCAFile, o.TLSCACerts, o.TLSCertFile, o.TLSKeyFile = s.TLS, s.TLSCAFile, s.TLSCACerts, s.TLSCertFile, s.TLSKeyFile
}

// PropertiesError is a client properties file the target cannot use: the
// file, and the property (with the line it starts on) or the line the
// problem is on. Its text never holds a secret the file sets.
type PropertiesError struct {
	File string
	Line int    // 0: the file as a whole
	Key  string // "": no one property
	Err  error
}

func (e *PropertiesError) Error() string { return "kafka: " + e.Where() + ": " + e.Err.Error() }
func (e *PropertiesError) Unwrap() error { return e.Err }

// Where names the file and the property or line: "FILE:LINE: KEY",
// "FILE: line LINE" or "FILE".
func (e *PropertiesError) Where() string {
	switch {
	case e.Key != "":
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Key)
	case e.Line > 0:
		return fmt.Sprintf("%s: line %d", e.File, e.Line)
	}
	return e.File
}

// errNoPropertyName is a line with a value and no name before it.
var errNoPropertyName = errors.New("no property name before the value")

// readProperties parses Java properties text: key=value, key:value or
// key value lines, # and ! comments, a trailing backslash continuing the
// line, and the usual escapes. It returns the keys in file order with the
// line each starts on; a line without a name is a *PropertiesError with
// its Line set, File left to the caller.
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
			return nil, nil, nil, &PropertiesError{Line: start, Err: errNoPropertyName}
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

// ReadClientProperties reads and translates a client properties file; its
// errors are *PropertiesError.
func ReadClientProperties(path string) (*ClientProperties, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, &PropertiesError{File: path, Err: unwrapPathErr(err)}
	}
	return parseClientProperties(path, data)
}

// parseClientProperties translates properties text; file names it in
// errors.
func parseClientProperties(file string, data []byte) (*ClientProperties, error) {
	keys, vals, lines, err := readProperties(data)
	if err != nil {
		var pe *PropertiesError
		if errors.As(err, &pe) {
			pe.File = file
			return nil, pe
		}
		return nil, &PropertiesError{File: file, Err: err}
	}
	t := propertiesTranslation{file: file, lines: lines, protocol: "PLAINTEXT", trustType: "JKS", keyType: "JKS"}
	for _, k := range keys {
		if err := t.set(k, strings.TrimSpace(vals[k])); err != nil {
			return nil, err
		}
	}
	if err := t.finish(); err != nil {
		return nil, err
	}
	return &t.props, nil
}

// propertiesTranslation is one file's translation under way: what its
// properties set so far, and what the checks across properties need.
type propertiesTranslation struct {
	file               string
	lines              map[string]int
	props              ClientProperties
	protocol           string // security.protocol, upper case; Kafka's default PLAINTEXT
	trustType, keyType string // ssl.truststore.type, ssl.keystore.type; Kafka's default JKS
	trustStore         string // ssl.truststore.location
	trustPassword      string // ssl.truststore.password
	mechanismKey       string // sasl.mechanism, or librdkafka's sasl.mechanisms
	userKey            string // sasl.jaas.config, or librdkafka's sasl.username
}

// bad is the error about property key.
func (t *propertiesTranslation) bad(key, format string, args ...any) error {
	return &PropertiesError{File: t.file, Line: t.lines[key], Key: key, Err: fmt.Errorf(format, args...)}
}

// set translates one property.
func (t *propertiesTranslation) set(k, v string) error {
	o := &t.props.Security
	switch k {
	case "bootstrap.servers":
		for _, b := range strings.Split(v, ",") {
			if b = strings.TrimSpace(b); b != "" {
				t.props.Brokers = append(t.props.Brokers, b)
			}
		}
	case "security.protocol":
		t.protocol = strings.ToUpper(v)
		switch t.protocol {
		case "PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL":
		default:
			return t.bad(k, "%q is not a security protocol; use PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL", v)
		}
	case "sasl.mechanism", "sasl.mechanisms":
		// librdkafka spells it sasl.mechanisms and takes one value.
		if err := t.once(k, &t.mechanismKey); err != nil {
			return err
		}
		m, ok := map[string]string{"PLAIN": SASLPlain, "SCRAM-SHA-256": SASLScramSHA256, "SCRAM-SHA-512": SASLScramSHA512}[strings.ToUpper(v)]
		if !ok {
			return t.bad(k, "%q is not supported; use PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512", v)
		}
		o.SASLMechanism = m
	case "sasl.jaas.config":
		if err := t.once(k, &t.userKey); err != nil {
			return err
		}
		if err := t.once(k, &t.props.PasswordProperty); err != nil {
			return err
		}
		return t.setJAAS(k, v)
	case "sasl.username":
		if err := t.once(k, &t.userKey); err != nil {
			return err
		}
		o.SASLUser = v
	case "sasl.password":
		if err := t.once(k, &t.props.PasswordProperty); err != nil {
			return err
		}
		o.SASLPassword = v
	case "ssl.truststore.type":
		t.trustType = strings.ToUpper(v)
	case "ssl.keystore.type":
		t.keyType = strings.ToUpper(v)
	case "ssl.truststore.location", "ssl.ca.location":
		// librdkafka's ssl.ca.location is a PEM file of CA certificates.
		if err := t.once(k, &t.props.CAProperty); err != nil {
			return err
		}
		if k == "ssl.ca.location" {
			o.TLSCAFile = v
		} else {
			t.trustStore = v
		}
	case "ssl.truststore.password":
		t.trustPassword = v
	case "ssl.keystore.location":
		// A PEM key store holds the private key and the certificate
		// chain in one file.
		o.TLSCertFile, o.TLSKeyFile = v, v
	case "ssl.certificate.location":
		o.TLSCertFile = v
	case "ssl.key.location":
		o.TLSKeyFile = v
	case "ssl.endpoint.identification.algorithm":
		if !strings.EqualFold(v, "https") {
			return t.bad(k, "%q is not supported: sharebench always verifies the broker's host name (remove the line, or set it to https)", v)
		}
	default:
		return t.bad(k, "not supported by sharebench; it takes bootstrap.servers, security.protocol, sasl.mechanism, sasl.jaas.config (PLAIN, SCRAM), ssl.truststore.location (JKS, PKCS12 or PEM) with ssl.truststore.type and ssl.truststore.password, ssl.keystore.location (type PEM) with ssl.keystore.type, and librdkafka's sasl.mechanisms, sasl.username, sasl.password, ssl.ca.location, ssl.certificate.location, ssl.key.location; remove the line")
	}
	return nil
}

// once records in *seen that key set what *seen stands for, refusing a
// second property that sets the same thing another way.
func (t *propertiesTranslation) once(key string, seen *string) error {
	if *seen != "" && *seen != key {
		return t.bad(key, "and %s both set the same thing; keep one", *seen)
	}
	*seen = key
	return nil
}

// setJAAS takes the username and password of a PLAIN or SCRAM login
// module line.
func (t *propertiesTranslation) setJAAS(k, v string) error {
	o := &t.props.Security
	if !strings.Contains(v, "PlainLoginModule") && !strings.Contains(v, "ScramLoginModule") {
		return t.bad(k, "only PlainLoginModule and ScramLoginModule with username and password are supported")
	}
	for _, m := range jaasOption.FindAllStringSubmatch(v, -1) {
		val := strings.ReplaceAll(strings.ReplaceAll(m[2], `\"`, `"`), `\\`, `\`)
		switch m[1] {
		case "username":
			o.SASLUser = val
		case "password":
			o.SASLPassword = val
		}
	}
	if o.SASLUser == "" || o.SASLPassword == "" {
		return t.bad(k, `needs username="..." and password="..."`)
	}
	return nil
}

// finish checks the properties against each other (store types, the
// protocol against the stores and the credentials) and settles SASL and
// TLS from the protocol.
func (t *propertiesTranslation) finish() error {
	o := &t.props.Security
	if err := t.readTrustStore(); err != nil {
		return err
	}
	if _, ok := t.lines["ssl.keystore.location"]; ok && t.keyType != "PEM" {
		return t.bad("ssl.keystore.location", "a %s key store is not supported; convert it to PEM (key and certificate chain in one file) and set ssl.keystore.type=PEM", t.keyType)
	}
	if (o.TLSCertFile == "") != (o.TLSKeyFile == "") {
		if o.TLSKeyFile == "" {
			return t.bad("ssl.certificate.location", "needs ssl.key.location, the PEM file of its private key")
		}
		return t.bad("ssl.key.location", "needs ssl.certificate.location, the PEM file of its certificate")
	}
	if t.userKey == "sasl.username" && o.SASLPassword == "" {
		return t.bad("sasl.username", "needs sasl.password")
	}
	if t.props.PasswordProperty == "sasl.password" && o.SASLUser == "" {
		return t.bad("sasl.password", "needs sasl.username")
	}
	tls := t.protocol == "SSL" || t.protocol == "SASL_SSL"
	sasl := t.protocol == "SASL_PLAINTEXT" || t.protocol == "SASL_SSL"
	if !tls && (o.TLSCAFile != "" || len(o.TLSCACerts) > 0 || o.TLSCertFile != "") {
		return t.bad("security.protocol", "is %s, yet the file sets a trust or key store; use SSL or SASL_SSL", t.protocol)
	}
	if sasl && o.SASLMechanism == "" {
		// Kafka's default mechanism.
		o.SASLMechanism = SASLPlain
	}
	if sasl && o.SASLUser == "" {
		return t.bad("security.protocol", "is %s but no sasl.jaas.config (or sasl.username and sasl.password) gives the username and password", t.protocol)
	}
	if !sasl && o.SASLUser != "" {
		return t.bad(t.userKey, "is set but security.protocol is %s; use SASL_PLAINTEXT or SASL_SSL", t.protocol)
	}
	if !sasl {
		o.SASLMechanism = ""
	}
	o.TLS = tls
	return nil
}

// readTrustStore settles ssl.truststore.location: a PEM file stays a path
// the target reads when it dials; a JKS or PKCS12 store is read here, with
// ssl.truststore.password, into the certificates it trusts.
func (t *propertiesTranslation) readTrustStore() error {
	const key = "ssl.truststore.location"
	if t.trustStore == "" {
		return nil
	}
	o := &t.props.Security
	switch t.trustType {
	case "PEM":
		o.TLSCAFile = t.trustStore
		return nil
	case "JKS", "PKCS12":
	default:
		return t.bad("ssl.truststore.type", "%q is not a trust store type; use JKS, PKCS12 or PEM", t.trustType)
	}
	data, err := os.ReadFile(t.trustStore)
	if err != nil {
		return t.bad(key, "%v", err)
	}
	if t.trustPassword == "" {
		return t.bad(key, "%s needs ssl.truststore.password to check it", t.trustStore)
	}
	certs, err := readTrustStore(data, t.trustPassword)
	switch {
	case errors.Is(err, errNotTrustStore) || errors.Is(err, errNoTrustedCerts):
		return t.bad(key, "%s %v", t.trustStore, err)
	case err != nil:
		return t.bad(key, "%s: %v (is ssl.truststore.password right?)", t.trustStore, err)
	}
	o.TLSCACerts = certs
	return nil
}

// unwrapPathErr drops the path an *os.PathError repeats.
func unwrapPathErr(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}
