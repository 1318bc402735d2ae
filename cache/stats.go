package cache

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Stats describes what a store holds.
type Stats struct {
	Dir     string
	Entries int
	Bytes   int64
	// Bad counts entries that do not parse or whose MAC does not check;
	// they are never served.
	Bad            int
	Oldest, Newest time.Time
}

// entries calls f on every entry file, with its request key.
func (s *Store) entries(f func(path, key string, info fs.FileInfo) error) error {
	err := filepath.WalkDir(s.Dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == s.Dir {
				return filepath.SkipAll
			}
			return err
		}
		if d.IsDir() || !strings.HasSuffix(d.Name(), ".json") || strings.HasPrefix(d.Name(), ".") {
			return nil
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		return f(p, strings.TrimSuffix(d.Name(), ".json"), info)
	})
	if err != nil {
		return fmt.Errorf("cache %s: %w", s.Dir, err)
	}
	return nil
}

// Stats counts the store's entries and checks each one.
func (s *Store) Stats() (Stats, error) {
	st := Stats{Dir: s.Dir}
	err := s.entries(func(p, key string, info fs.FileInfo) error {
		st.Entries++
		st.Bytes += info.Size()
		if t := info.ModTime(); st.Oldest.IsZero() || t.Before(st.Oldest) {
			st.Oldest = t
		}
		if t := info.ModTime(); t.After(st.Newest) {
			st.Newest = t
		}
		b, err := os.ReadFile(p)
		var e entry
		if err != nil || json.Unmarshal(b, &e) != nil {
			st.Bad++
			return nil
		}
		if want, err := s.mac(key, e); err != nil || want != e.MAC {
			st.Bad++
		}
		return nil
	})
	return st, err
}

// Clear removes entries last written before cutoff (every entry, for the
// zero time), and returns how many.
func (s *Store) Clear(cutoff time.Time) (int, error) {
	n := 0
	err := s.entries(func(p, _ string, info fs.FileInfo) error {
		if !cutoff.IsZero() && !info.ModTime().Before(cutoff) {
			return nil
		}
		if err := os.Remove(p); err != nil {
			return err
		}
		n++
		return nil
	})
	return n, err
}
