// Package browser runs headless Chromium for tests, through chromedp:
// starting it with flags that work offline, skipping (or, in CI, failing)
// when it is not installed, a hook that records any script an attacker
// got into a page, and screenshots for reviewers.
//
// It imports chromedp, cdproto and the standard library; only tests use it.
package browser

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
)

// Path finds Chromium: $AGENTEVAL_CHROMIUM, else chromium or Chrome on
// the PATH.
func Path() (string, error) {
	if p := os.Getenv("AGENTEVAL_CHROMIUM"); p != "" {
		return p, nil
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no chromium on the PATH")
}

// InCI reports whether the tests run in CI, where a missing browser is a
// failure rather than a reason to skip.
func InCI() bool {
	v := strings.ToLower(os.Getenv("CI"))
	return v != "" && v != "false" && v != "0"
}

// New starts a headless Chromium for the test with a window of the given
// size and returns a chromedp context for one tab. It skips the test when
// Chromium is missing, unless in CI, where it fails. The browser stops
// when the test ends.
func New(t testing.TB, width, height int) context.Context {
	t.Helper()
	path, err := Path()
	if err != nil {
		if InCI() {
			t.Fatalf("chromium is not installed, and CI must run the browser tests: install it (apt-get install chromium; .ci/run does) or set AGENTEVAL_CHROMIUM")
		}
		t.Skip("skipping the browser test: chromium is not installed (apt-get install chromium, or set AGENTEVAL_CHROMIUM)")
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Headless,
		chromedp.DisableGPU,
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(width, height),
		// Nothing may reach the network: the machines that run these
		// tests have none, and Chromium's own background traffic would
		// only fail and slow it down.
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-extensions", true),
		chromedp.Flag("disable-default-apps", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("force-color-profile", "srgb"),
		chromedp.Flag("lang", "en-US"),
	}
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // Chromium refuses to sandbox as root
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() {
		cancel()
		cancelAlloc()
	})
	// The first action starts the browser; it must not run under a
	// timeout, which would stop the browser with it.
	if err := chromedp.Do(ctx, chromedp.Navigate("about:blank")); err != nil {
		t.Fatalf("start chromium (%s): %v", path, err)
	}
	return ctx
}

// Timeout bounds a step, so a page that never shows an element fails the
// test instead of hanging it.
func Timeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, d)
}

// scriptHook runs before any script of a page. window.__pwn is what the
// test payloads call: if one ever runs, it is recorded. A blocked inline
// script or handler is recorded too, through the CSP violation it raises:
// the page's own escaping must keep payloads from becoming markup at all.
const scriptHook = `(function () {
  if (window.__hooked) return;
  window.__hooked = true;
  window.__ran = [];
  window.__pwn = function (what) { window.__ran.push("ran: " + what); };
  document.addEventListener("securitypolicyviolation", function (e) {
    window.__ran.push("blocked by CSP: " + e.violatedDirective + " " + (e.sample || ""));
  });
})();`

// HookScripts installs the recorder in every page the tab opens next.
func HookScripts(ctx context.Context) error {
	return chromedp.Do(ctx, chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := cdp.Call(ctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: scriptHook})
		return err
	}))
}

// RanScripts returns what the hook recorded on the current page.
func RanScripts(ctx context.Context) ([]string, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[[]string](`window.__ran || ["the hook is not installed"]`))
}

// startDir is the working directory the test binary started in (its
// package's folder), before any test changed it.
var startDir, startErr = os.Getwd()

// ScreenshotDir is testdata/screenshots at the module root.
func ScreenshotDir() (string, error) {
	dir, err := startDir, startErr
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return filepath.Join(dir, "testdata", "screenshots"), nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.mod above the working directory")
		}
		dir = parent
	}
}

// Screenshot saves what the tab shows as NAME.png, for a reviewer to look
// at: in testdata/screenshots, the committed ones the README shows, when
// AGENTEVAL_SCREENSHOTS=1 (so that a plain go test leaves the work tree
// alone), else in the test's temporary folder.
func Screenshot(t testing.TB, ctx context.Context, name string) string {
	t.Helper()
	png, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("screenshot %s: %v", name, err)
	}
	dir := t.TempDir()
	if os.Getenv("AGENTEVAL_SCREENSHOTS") != "" {
		if dir, err = ScreenshotDir(); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name+".png")
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", path)
	return path
}

// Text returns the text of the first element matching a CSS selector.
func Text(ctx context.Context, css string) (string, error) {
	return chromedp.Run(ctx, chromedp.Evaluate[string](fmt.Sprintf(`(function(){var e=document.querySelector(%q); return e ? e.innerText : "";})()`, css)))
}
