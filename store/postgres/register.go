package postgres

import "github.com/agenteval/agenteval/store"

// Importing the package makes postgres:// and postgresql:// URLs open
// PostgreSQL stores.
func init() {
	store.Register(store.Backend{Name: "postgres", Claims: IsURL, Display: Name, Open: func(url string, readOnly bool) (store.Store, error) {
		db, err := Open(url, Options{ReadOnly: readOnly})
		if err != nil {
			return nil, err
		}
		return db, nil
	}})
}
