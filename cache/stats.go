package cache

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Stats describes what a store holds.
type Stats struct {
	Dir     string
	Entries int
	Bytes   int64
	// Bad counts entries that do not parse or whose MAC does not check;
	// they are never served. NoKey says the user has no key yet, so none
	// of the entries (if any) are theirs. Key is the key's file.
	Bad   int
	NoKey bool
	Key   string
	// ProjectKey says the cache folder holds a key of its own, which is
	// not used.
	ProjectKey     bool
	Oldest, Newest time.Time
}

// entries calls f on every entry file (a 64-hex-digit name in the folder
// of its first two digits) with its request key. Nothing else in the
// folder is touched, even if the folder is not a cache at all.
func (s *Store) entries(f func(path, key string, info fs.FileInfo) error) error {
	subs, err := os.ReadDir(s.Dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("cache %s: %w", s.Dir, err)
	}
	for _, sub := range subs {
		if !sub.IsDir() || len(sub.Name()) != 2 {
			continue
		}
		files, err := os.ReadDir(filepath.Join(s.Dir, sub.Name()))
		if err != nil {
			return fmt.Errorf("cache %s: %w", s.Dir, err)
		}
		for _, fe := range files {
			name := fe.Name()
			if fe.IsDir() || !entryName.MatchString(name) || name[:2] != sub.Name() {
				continue
			}
			info, err := fe.Info()
			if err != nil {
				return fmt.Errorf("cache %s: %w", s.Dir, err)
			}
			if err := f(filepath.Join(s.Dir, sub.Name(), name), name[:64], info); err != nil {
				return fmt.Errorf("cache %s: %w", s.Dir, err)
			}
		}
	}
	return nil
}

// Stats counts the store's entries and checks each one. It changes
// nothing: a store without a key keeps having none.
func (s *Store) Stats() (Stats, error) {
	st := Stats{Dir: s.Dir, ProjectKey: s.ProjectKey()}
	st.Key, _ = s.KeyPath()
	secret, kerr := s.readKey()
	if errors.Is(kerr, fs.ErrNotExist) {
		st.NoKey = true
	} else if kerr != nil {
		return st, kerr
	}
	err := s.entries(func(p, key string, info fs.FileInfo) error {
		st.Entries++
		st.Bytes += info.Size()
		if t := info.ModTime(); st.Oldest.IsZero() || t.Before(st.Oldest) {
			st.Oldest = t
		}
		if t := info.ModTime(); t.After(st.Newest) {
			st.Newest = t
		}
		if secret == nil {
			st.Bad++
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if _, err := verify(secret, key, data); err != nil {
			st.Bad++
		}
		return nil
	})
	return st, err
}

// Clear removes entries last written before cutoff (every entry, for the
// zero time), and returns how many. Only entry files are removed, and,
// when everything is, a key kept in the cache folder, which is not used.
// The user's key stays: it signs their other caches too.
func (s *Store) Clear(cutoff time.Time) (n int, err error) {
	if cutoff.IsZero() {
		defer func() {
			if err == nil {
				if rerr := os.Remove(filepath.Join(s.Dir, projectKeyFile)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
					err = rerr
				}
			}
		}()
	}
	err = s.entries(func(p, _ string, info fs.FileInfo) error {
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
