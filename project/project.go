// Package project finds and applies the project file, agenteval.yaml: the
// targets, mock tools, judge, simulated-user model and run defaults that a
// project's eval files and data files share, so a JSON data file with no
// targets of its own (agent_inspect samples) runs against the project's
// agent, and a team keeps its targets in one place. It also says where the
// project's root is, and where its state lives there: the run store and the
// cache (.agenteval), and the git commit a run starts from.
//
// It imports suite (which reads the file's keys, with
// the same rules and messages as an eval file's), internal/proc (through
// which the git that tells whether the tree is dirty is started, so that
// --no-exec refuses it), and the standard library.
package project

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/agenteval/agenteval/suite"
)

// FileName is the project file's name.
const FileName = "agenteval.yaml"

// Config is a loaded project file.
type Config = suite.ProjectFile

// Find looks for agenteval.yaml in start's directory (start may be a file
// or a directory) and each directory above it, and returns the first one's
// path, or "" when there is none.
func Find(start string) (string, error) {
	dir, err := dirOf(start)
	if err != nil {
		return "", err
	}
	for {
		p := filepath.Join(dir, FileName)
		if st, err := os.Stat(p); err == nil && !st.IsDir() {
			return p, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", nil
		}
		dir = parent
	}
}

func dirOf(start string) (string, error) {
	abs, err := filepath.Abs(start)
	if err != nil {
		return "", err
	}
	if st, err := os.Stat(abs); err == nil && st.IsDir() {
		return abs, nil
	}
	return filepath.Dir(abs), nil
}

// Load reads a project file. Its targets' relative paths start at its
// directory.
func Load(path string, opt suite.Options) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read project file: %w", err)
	}
	c, err := suite.ParseProject(path, data, opt)
	if c != nil {
		dir := filepath.Dir(path)
		for i := range c.Targets {
			c.Targets[i].BaseDir = dir
		}
	}
	return c, err
}

// For returns the project file that applies to an eval or data file: the
// one named explicitly (--config), else the nearest agenteval.yaml at or
// above the file. It returns nil, nil when there is none.
func For(file, explicit string, opt suite.Options) (*Config, error) {
	path := explicit
	if path == "" {
		var err error
		if path, err = Find(file); err != nil || path == "" {
			return nil, err
		}
	}
	return Load(path, opt)
}

// Apply gives a loaded eval file what the project file supplies and the
// eval file does not: a suite's own keys win. Targets and tools are merged
// by name (the suite's first); the judge, the default target and the
// threshold fill in when the suite has none; trials fill in for tests that
// do not set them.
func Apply(c *Config, s *suite.Suite) {
	if c == nil || s == nil {
		return
	}
	names := map[string]bool{}
	for _, t := range s.Targets {
		names[t.Name] = true
	}
	for _, t := range c.Targets {
		if !names[t.Name] {
			s.Targets = append(s.Targets, t)
		}
	}
	tools := map[string]bool{}
	for _, t := range s.Tools {
		tools[t.Name] = true
	}
	for _, t := range c.Tools {
		if !tools[t.Name] {
			s.Tools = append(s.Tools, t)
		}
	}
	s.MCPServers = append(s.MCPServers, c.MCPServers...)
	if c.Judge != nil && (s.Judge == nil || s.Judge.FromAgentV) {
		j := *c.Judge
		s.Judge = &j
	}
	if s.DefaultTarget == "" {
		s.DefaultTarget = c.Defaults.Target
	}
	if s.Threshold == nil && c.Defaults.Threshold != nil {
		th := *c.Defaults.Threshold
		s.Threshold = &th
	}
	if c.Defaults.Trials > 0 {
		for i := range s.Tests {
			if s.Tests[i].Trials == 0 {
				s.Tests[i].Trials = c.Defaults.Trials
			}
		}
	}
}

// Root is the project's root for a file or directory: the folder of the
// nearest agenteval.yaml, else the root of the git work tree it is in, else
// the working directory. The results store and the judge cache live under
// it.
func Root(start string) (string, error) {
	if p, err := Find(start); err != nil || p != "" {
		return filepath.Dir(p), err
	}
	dir, err := dirOf(start)
	if err != nil {
		return "", err
	}
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			return d, nil
		} else if !errors.Is(err, os.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	return os.Getwd()
}
