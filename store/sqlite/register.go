package sqlite

import "github.com/agenteval/agenteval/store"

// Importing the package makes SQLite files the store of any spec that no
// other backend claims.
func init() {
	store.Register(store.Backend{Name: "sqlite", Open: func(path string, readOnly bool) (store.Store, error) {
		db, err := Open(path, Options{ReadOnly: readOnly})
		if err != nil {
			return nil, err
		}
		return db, nil
	}})
}
