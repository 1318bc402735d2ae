// Package pgtest starts a real PostgreSQL server for tests: Debian's
// postgresql package (or the folder of binaries $AGENTEVAL_PG_BIN names),
// on a temporary data folder, a loopback port and a socket folder of its
// own, with password authentication over TCP. Run as root, it runs the
// server as the unprivileged postgres (or nobody) user, since PostgreSQL
// refuses root. Where PostgreSQL is not installed, tests skip with a
// message; in CI ($CI set) they fail, since CI must run them.
//
// It imports pgx and the standard library; only tests use it.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// User and Password are the server's superuser. The password is long
// enough to be redacted, and odd enough to be found if it leaks.
const (
	User     = "agenteval"
	Password = "pg-Secret-4u7h"
)

// Server is a running PostgreSQL server.
type Server struct {
	// Port is its loopback TCP port.
	Port int
	dir  string
	cmd  *exec.Cmd
	done chan error
	n    atomic.Int64
}

// Bin finds PostgreSQL's server binaries: $AGENTEVAL_PG_BIN, else the
// newest /usr/lib/postgresql/*/bin that has initdb.
func Bin() (string, error) {
	if d := os.Getenv("AGENTEVAL_PG_BIN"); d != "" {
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("PostgreSQL is not installed: no /usr/lib/postgresql/*/bin/initdb (apt-get install postgresql, or set AGENTEVAL_PG_BIN)")
}

func version(dir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return v
}

func inCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v != "" && v != "false" && v != "0"
}

var (
	sharedMu  sync.Mutex
	shared    *Server
	sharedErr error
)

// Shared returns the test binary's server, starting it on first use. It
// skips the test when PostgreSQL is missing (fails in CI). Stop it from
// TestMain with Stop.
func Shared(t testing.TB) *Server {
	t.Helper()
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared == nil && sharedErr == nil {
		shared, sharedErr = Start()
	}
	if sharedErr != nil {
		skipOrFail(t, sharedErr)
	}
	return shared
}

// skipOrFail ends a test whose server did not start: skipped where
// PostgreSQL is not installed, failed in CI or for any other reason.
func skipOrFail(t testing.TB, err error) {
	t.Helper()
	var missing *missingError
	if errors.As(err, &missing) && !inCI() {
		t.Skipf("skipping the PostgreSQL test: %v", err)
	}
	t.Fatalf("start PostgreSQL: %v", err)
}

// New starts a server of the test's own, stopped when the test ends: for
// packages without a TestMain to stop a shared one. It skips the test when
// PostgreSQL is missing (fails in CI).
func New(t testing.TB) *Server {
	t.Helper()
	s, err := Start()
	if err != nil {
		skipOrFail(t, err)
	}
	t.Cleanup(s.Close)
	return s
}

// Stop stops the shared server, if it was started.
func Stop() {
	sharedMu.Lock()
	defer sharedMu.Unlock()
	if shared != nil {
		shared.Close()
		shared = nil
	}
}

// TestingM is what TestMain gets (testing.M), and what testscript.Main
// takes.
type TestingM interface{ Run() int }

type stopping struct{ m TestingM }

func (s stopping) Run() int {
	defer Stop()
	return s.m.Run()
}

// Main wraps m so that the shared server stops when the tests end:
// os.Exit(pgtest.Main(m).Run()), or testscript.Main(pgtest.Main(m), ...).
func Main(m TestingM) TestingM { return stopping{m} }

type missingError struct{ err error }

func (e *missingError) Error() string { return e.err.Error() }

// Start initialises a cluster in a new temporary folder and starts a
// server on it.
func Start() (*Server, error) {
	bin, err := Bin()
	if err != nil {
		return nil, &missingError{err}
	}
	cred, uid, gid, err := runAs()
	if err != nil {
		return nil, err
	}
	removeAbandoned()
	dir, err := os.MkdirTemp("", dirPrefix)
	if err != nil {
		return nil, err
	}
	fail := func(err error) (*Server, error) {
		os.RemoveAll(dir)
		return nil, err
	}
	if cred != nil {
		if err := os.Chown(dir, uid, gid); err != nil {
			return fail(err)
		}
	}
	pw := filepath.Join(dir, "pw")
	if err := os.WriteFile(pw, []byte(Password+"\n"), 0o600); err != nil {
		return fail(err)
	}
	if cred != nil {
		os.Chown(pw, uid, gid)
	}
	data := filepath.Join(dir, "data")
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", User, "--pwfile", pw,
		"--auth-host=scram-sha-256", "--auth-local=trust", "--no-locale", "-E", "UTF8", "--no-sync")
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		return fail(fmt.Errorf("initdb: %v\n%s", err, out))
	}
	var last error
	for range 3 { // a free port can be taken before the server binds it
		s, err := startServer(bin, dir, data, cred)
		if err == nil {
			return s, nil
		}
		last = err
	}
	return fail(last)
}

const dirPrefix = "agenteval-pg-"

// removeAbandoned removes the folders of servers whose test process was
// killed (the server died with it, by Pdeathsig, but its folder stays):
// those a minute old whose server is not running.
func removeAbandoned() {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), dirPrefix+"*"))
	for _, d := range dirs {
		st, err := os.Stat(d)
		if err != nil || time.Since(st.ModTime()) < time.Minute {
			continue
		}
		if pid, err := os.ReadFile(filepath.Join(d, "data", "postmaster.pid")); err == nil {
			first, _, _ := strings.Cut(string(pid), "\n")
			if n, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && !errors.Is(syscall.Kill(n, 0), syscall.ESRCH) {
				continue // its server runs
			}
		}
		os.RemoveAll(d)
	}
}

// runAs is the user to run the server as: none (this one), unless this
// is root.
func runAs() (*syscall.Credential, int, int, error) {
	if os.Geteuid() != 0 {
		return nil, -1, -1, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, uid, gid, nil
	}
	return nil, 0, 0, errors.New("PostgreSQL refuses to run as root, and there is no postgres or nobody user to run it as")
}

func freePort() (int, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port, nil
}

func startServer(bin, dir, data string, cred *syscall.Credential) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(dir, "server.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	if cred != nil {
		os.Chown(logPath, int(cred.Uid), int(cred.Gid))
	}
	cmd := exec.Command(filepath.Join(bin, "postgres"), "-D", data, "-p", strconv.Itoa(port),
		"-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories="+dir,
		// A test server keeps nothing across a crash: no syncing.
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "max_connections=200", "-c", "shared_buffers=32MB")
	cmd.Stdout, cmd.Stderr = logf, logf
	// The server dies with the test process, even one that is killed.
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
	s := &Server{Port: port, dir: dir, cmd: cmd, done: make(chan error, 1)}
	started := make(chan error, 1)
	go func() {
		// Pdeathsig fires when the thread that started the child ends:
		// this goroutine keeps its thread until the server exits.
		runtime.LockOSThread()
		if err := cmd.Start(); err != nil {
			started <- err
			return
		}
		started <- nil
		s.done <- cmd.Wait()
	}()
	if err := <-started; err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		conn, err := pgx.Connect(ctx, s.URL("postgres"))
		if err == nil {
			conn.Close(ctx)
			return s, nil
		}
		select {
		case werr := <-s.done:
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("postgres exited (%v):\n%s", werr, log)
		case <-ctx.Done():
			s.Close()
			log, _ := os.ReadFile(logPath)
			return nil, fmt.Errorf("postgres did not accept connections within 30 s: %v\n%s", err, log)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// URL is the address of a database on the server, with the password.
func (s *Server) URL(db string) string {
	return fmt.Sprintf("postgres://%s:%s@127.0.0.1:%d/%s?sslmode=disable", User, Password, s.Port, db)
}

// NewDatabase creates an empty database and returns its URL. It is
// dropped with the server.
func (s *Server) NewDatabase(t testing.TB) string {
	t.Helper()
	name := fmt.Sprintf("t%d_%d", os.Getpid(), s.n.Add(1))
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, s.URL("postgres"))
	if err != nil {
		t.Fatalf("connect to PostgreSQL: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create database: %v", err)
	}
	return s.URL(name)
}

// Close stops the server and removes its folder.
func (s *Server) Close() {
	if s.cmd.Process != nil {
		// SIGQUIT is PostgreSQL's immediate shutdown: the data is thrown
		// away anyway.
		s.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-s.done:
		case <-time.After(10 * time.Second):
			s.cmd.Process.Kill()
			<-s.done
		}
	}
	os.RemoveAll(s.dir)
}
