package postgres

import (
	"fmt"
	"testing"

	"github.com/agenteval/agenteval/internal/pgtest"
	"github.com/agenteval/agenteval/store"
	"github.com/agenteval/agenteval/store/storetest"
)

// BenchmarkAddResult stores results of a scored dataset row's size into a
// local PostgreSQL, from one process and from four at once (the shards of
// a run, each with its own connections).
func BenchmarkAddResult(b *testing.B) {
	srv := pgtest.Shared(b)
	for _, writers := range []int{1, 4} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			u := srv.NewDatabase(b)
			var stores []store.Store
			for range writers {
				db, err := Open(u, Options{})
				if err != nil {
					b.Fatal(err)
				}
				defer db.Close()
				stores = append(stores, db)
			}
			storetest.Bench(b, stores)
		})
	}
}
