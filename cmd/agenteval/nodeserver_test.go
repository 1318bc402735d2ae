package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// urlRE finds the URL a test agent prints when it is ready.
var urlRE = regexp.MustCompile(`https?://[^\s"']+`)

// nodeServerCmd starts one of the JS agents of testdata/agents in the
// background for a script, and waits until it is ready:
//
//	nodeserver [KEY=VALUE...] VAR NAME [ARGS...]
//
// runs `node testdata/agents/NAME/server.mjs ARGS...` in the script's work
// folder, with KEY=VALUE added to its environment, waits (20s at most) for
// the first URL it prints on stdout, sets VAR to it, and stops the agent
// when the script ends. Without node or the agent's npm packages it fails,
// saying what to install; a script skips first with the condition
// [node:NAME] (nodeAgentCondition).
func nodeServerCmd(ts *testscript.TestScript, neg bool, args []string) {
	var env []string
	for len(args) > 0 && strings.Contains(args[0], "=") {
		env, args = append(env, args[0]), args[1:]
	}
	if neg || len(args) < 2 {
		ts.Fatalf("usage: nodeserver [KEY=VALUE...] VAR NAME [ARGS...]")
	}
	name, dir := args[1], filepath.Join("..", "..", "testdata", "agents", args[1])
	dir, err := filepath.Abs(dir)
	ts.Check(err)
	node, err := exec.LookPath("node")
	if err != nil {
		ts.Fatalf("node is not installed")
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules")); err != nil {
		ts.Fatalf("%s has no node_modules: run npm ci --prefix testdata/agents/%s", dir, name)
	}
	cmd := exec.Command(node, append([]string{filepath.Join(dir, "server.mjs")}, args[2:]...)...)
	cmd.Dir = ts.MkAbs(".")
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	var mu sync.Mutex
	cmd.Stderr = writerFunc(func(p []byte) (int, error) {
		mu.Lock()
		defer mu.Unlock()
		return stderr.Write(p)
	})
	out, err := cmd.StdoutPipe()
	ts.Check(err)
	ts.Check(cmd.Start())
	ts.Defer(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u := urlRE.FindString(sc.Text()); u != "" {
				found <- u
				break
			}
		}
		close(found)
		// Keep draining, so that the agent never blocks on a full pipe.
		for sc.Scan() {
		}
	}()
	select {
	case u, ok := <-found:
		if !ok {
			mu.Lock()
			defer mu.Unlock()
			ts.Fatalf("agent %s exited before it printed its URL:\n%s", name, stderr.String())
		}
		ts.Setenv(args[0], u)
	case <-time.After(20 * time.Second):
		mu.Lock()
		defer mu.Unlock()
		ts.Fatalf("agent %s printed no URL within 20s:\n%s", name, stderr.String())
	}
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

// nodeAgentCondition is the scripts' condition [node:NAME]: node is
// installed, and so are the npm packages of testdata/agents/NAME. A script
// skips without them ([!node:NAME] skip), except under CI=true, where the
// condition holds so that the script fails: CI installs them (npm ci
// --prefix testdata/agents/NAME).
func nodeAgentCondition(cond string) (bool, error) {
	name, ok := strings.CutPrefix(cond, "node:")
	if !ok {
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	if os.Getenv("CI") == "true" {
		return true, nil
	}
	if _, err := exec.LookPath("node"); err != nil {
		return false, nil
	}
	_, err := os.Stat(filepath.Join("..", "..", "testdata", "agents", name, "node_modules"))
	return err == nil, nil
}
