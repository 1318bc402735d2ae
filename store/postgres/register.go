package postgres

import "github.com/agenteval/agenteval/store"

// Importing the package makes postgres:// and postgresql:// URLs open
// PostgreSQL stores.
func init() {
	// Claiming a URL is the first the program sees of it: its password
	// becomes a secret then, before any message can quote it.
	claims := func(spec string) bool {
		if !IsURL(spec) {
			return false
		}
		hideSecrets(spec)
		return true
	}
	store.Register(store.Backend{Name: "postgres", Claims: claims, Display: Name, Open: func(url string, readOnly bool) (store.Store, error) {
		db, err := Open(url, Options{ReadOnly: readOnly})
		if err != nil {
			return nil, err
		}
		return db, nil
	}})
}
