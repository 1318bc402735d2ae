package store

import (
	"fmt"
	"sync"
)

// Backend is a kind of store that a program can open by name: a SQLite
// file, a PostgreSQL URL. The backends register themselves when imported,
// as database/sql drivers do, so a program compiles in only the ones it
// imports (a go test binary, none).
type Backend struct {
	// Name is the backend's name in messages ("sqlite", "postgres").
	Name string
	// Claims reports whether a store spec is this backend's (a URL
	// scheme). The backend whose Claims is nil takes every other spec: a
	// file's path.
	Claims func(spec string) bool
	// Open opens a store, read-only or to record runs.
	Open func(spec string, readOnly bool) (Store, error)
	// Display is the spec as messages show it (no password); nil shows it
	// as it is.
	Display func(spec string) string
}

var (
	backendsMu sync.RWMutex
	backends   []Backend
)

// Register makes a backend available to BackendFor. It panics when a
// backend of that name is registered twice, which is a program's bug.
func Register(b Backend) {
	backendsMu.Lock()
	defer backendsMu.Unlock()
	for _, o := range backends {
		if o.Name == b.Name {
			panic(fmt.Sprintf("store: backend %s registered twice", b.Name))
		}
	}
	backends = append(backends, b)
}

// BackendFor is the backend a spec names: the one that claims it, else
// the backend of files. ok is false when no backend imported can open it.
func BackendFor(spec string) (b Backend, ok bool) {
	backendsMu.RLock()
	defer backendsMu.RUnlock()
	var files *Backend
	for i, o := range backends {
		if o.Claims == nil {
			files = &backends[i]
			continue
		}
		if o.Claims(spec) {
			return o, true
		}
	}
	if files != nil {
		return *files, true
	}
	return Backend{}, false
}
