package sqlite

import (
	"fmt"
	"path/filepath"
	"testing"

	"github.com/agenteval/agenteval/store"
	"github.com/agenteval/agenteval/store/storetest"
)

// BenchmarkAddResult stores results of a scored dataset row's size, from
// one process and from four at once (the shards of a run on one machine,
// each with its own handle on the file).
func BenchmarkAddResult(b *testing.B) {
	for _, writers := range []int{1, 4} {
		b.Run(fmt.Sprintf("writers=%d", writers), func(b *testing.B) {
			path := filepath.Join(b.TempDir(), "a.db")
			var stores []store.Store
			for range writers {
				db, err := Open(path, Options{})
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
