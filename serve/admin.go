// This file holds the admin endpoint: an HTTP listener on loopback that
// applies control actions (control.go) and serves Go's profiles, so a
// broker-control command and a profiler reach a running server.

package serve

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"strings"
	"time"
)

// Admin is the admin endpoint of a server:
//
//	POST /control/ACTION[?group=G&topic=T&partition=P]   apply one action (Actions); the
//	                                                     answer comes once it is done
//	GET  /control/status                                 running or stopped
//	GET  /control/pid                                    the server's process id (for SIGSTOP)
//	GET  /debug/pprof/...                                Go's profiles (net/http/pprof)
//
// An action answers 200 with what it did, 400 for a bad request
// (ErrControl), 500 when the engine failed it.
type Admin struct {
	ln  net.Listener
	srv *http.Server
}

// NewAdmin listens on addr, which must be a loopback address: the
// endpoint has no authentication and restarts the engine.
func NewAdmin(addr string, c *Control, logf func(format string, args ...any)) (*Admin, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: admin address %q: %v (want host:port, for example 127.0.0.1:9093)", ErrConfig, addr, err)
	}
	if !loopback(host) {
		return nil, fmt.Errorf("%w: admin address %q is not a loopback address (the endpoint has no authentication)", ErrConfig, addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve: admin listening on %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/control/", func(w http.ResponseWriter, r *http.Request) {
		action := strings.TrimPrefix(r.URL.Path, "/control/")
		if action == "pid" {
			fmt.Fprintln(w, os.Getpid())
			return
		}
		if action != ActionStatus && r.Method != http.MethodPost {
			http.Error(w, fmt.Sprintf("%s changes the engine: use POST", action), http.StatusMethodNotAllowed)
			return
		}
		params := map[string]string{}
		for k, v := range r.URL.Query() {
			params[k] = v[len(v)-1]
		}
		msg, err := c.Apply(action, params)
		switch {
		case errors.Is(err, ErrControl):
			http.Error(w, err.Error(), http.StatusBadRequest)
		case err != nil:
			http.Error(w, err.Error(), http.StatusInternalServerError)
		default:
			fmt.Fprintln(w, msg)
		}
		if action != ActionStatus && logf != nil {
			if err != nil {
				logf("control %s: %v", action, err)
			} else {
				logf("control %s", msg)
			}
		}
	})
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	a := &Admin{ln: ln, srv: &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}}
	go a.srv.Serve(ln)
	return a, nil
}

// Addr returns the address the endpoint listens on.
func (a *Admin) Addr() string { return a.ln.Addr().String() }

// Close stops the endpoint.
func (a *Admin) Close() error { return a.srv.Close() }
