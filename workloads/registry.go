// This file holds the registry of named workloads and the built-ins that
// fill it at init from the embedded builtin/*.yaml files.

package workloads

import (
	"embed"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
)

//go:embed builtin/*.yaml
var builtinFS embed.FS

// registry holds the named workloads. Register runs mostly at init, but
// tests and embedders may call it later, so a mutex guards the map.
var registry struct {
	mu    sync.RWMutex
	specs map[string]*Spec // by name; each entry is private to the registry
}

func init() {
	registry.specs = map[string]*Spec{}
	entries, err := builtinFS.ReadDir("builtin")
	if err != nil {
		panic("workloads: read embedded built-ins: " + err.Error())
	}
	for _, e := range entries {
		file := path.Join("builtin", e.Name())
		data, err := builtinFS.ReadFile(file)
		if err != nil {
			panic("workloads: read embedded built-in: " + err.Error())
		}
		// A built-in that does not parse is a bug in this package, caught
		// by its tests.
		s, err := Parse(file, data)
		if err != nil {
			panic(err.Error())
		}
		if want := strings.TrimSuffix(e.Name(), ".yaml"); s.Name != want {
			panic("workloads: built-in " + file + " is named " + s.Name + "; name it " + want)
		}
		Register(s)
	}
}

// Register adds s under s.Name, after Defaults and Validate on a copy of it.
// It panics when the name is taken or s is nil or invalid: registering is
// done by code (usually at init), so these are programming errors. Bad user
// input goes through Parse or Load, which return errors instead.
func Register(s *Spec) {
	if s == nil {
		panic("workloads: Register of a nil Spec")
	}
	c := s.Clone()
	c.Defaults()
	if err := c.Validate(); err != nil {
		panic(fmt.Sprintf("%v (in Register of workload %q)", err, c.Name))
	}
	registry.mu.Lock()
	defer registry.mu.Unlock()
	if _, dup := registry.specs[c.Name]; dup {
		panic("workloads: Register of a duplicate workload name " + c.Name)
	}
	registry.specs[c.Name] = c
}

// Lookup returns a copy of the workload registered under name, which the
// caller may change freely.
func Lookup(name string) (*Spec, bool) {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	s, ok := registry.specs[name]
	if !ok {
		return nil, false
	}
	return s.Clone(), true
}

// Names returns the registered workload names, sorted.
func Names() []string {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	names := make([]string, 0, len(registry.specs))
	for n := range registry.specs {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// All returns copies of the registered workloads, sorted by name.
func All() []*Spec {
	registry.mu.RLock()
	defer registry.mu.RUnlock()
	out := make([]*Spec, 0, len(registry.specs))
	for _, s := range registry.specs {
		out = append(out, s.Clone())
	}
	slices.SortFunc(out, func(a, b *Spec) int { return strings.Compare(a.Name, b.Name) })
	return out
}
