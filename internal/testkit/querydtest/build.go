package querydtest

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// modulePath is the main module's path, which Root looks for.
const modulePath = "github.com/queryd/queryd"

// Build is one way of building cmd/queryd. The zero value is a plain
// `go build`.
type Build struct {
	Race     bool   // -race: a data race in the daemon makes it exit non-zero
	Static   bool   // CGO_ENABLED=0, as CI, the packages and the container image build it
	TrimPath bool   // -trimpath, as the packages and the container image build it
	LDFlags  string // -ldflags, e.g. "-X main.version=v1.2.3"
}

// RaceBuild is the daemon the suites run by default: built with the race
// detector, which Stop's check of the exit status turns into a failure.
var RaceBuild = Build{Race: true}

var builds = struct {
	sync.Mutex
	dir  string
	done map[Build]*built
}{done: map[Build]*built{}}

// built is one Build's binary, made once.
type built struct {
	once sync.Once
	path string
	err  error
}

// Binary returns the path of cmd/queryd built as b, building it on the
// first call of the test process (later calls, from any test, share it);
// it fails t when the build fails.
func (b Build) Binary(t testing.TB) string {
	t.Helper()
	p, err := b.Path()
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// Path is Binary for a caller without a test (TestMain): it returns the
// build's error.
func (b Build) Path() (string, error) {
	builds.Lock()
	if builds.dir == "" {
		dir, err := os.MkdirTemp("", "queryd-bin-")
		if err != nil {
			builds.Unlock()
			return "", fmt.Errorf("a folder for the queryd binaries: %w", err)
		}
		builds.dir = dir
	}
	one := builds.done[b]
	if one == nil {
		one = &built{path: filepath.Join(builds.dir, fmt.Sprintf("queryd-%d", len(builds.done)))}
		builds.done[b] = one
	}
	builds.Unlock()
	one.once.Do(func() { one.err = b.run(one.path) })
	return one.path, one.err
}

// run builds cmd/queryd into out (within 5 minutes: the race build of a
// cold cache on a busy machine takes a while).
func (b Build) run(out string) error {
	root, err := Root()
	if err != nil {
		return err
	}
	args := []string{"build", "-o", out}
	if b.Race {
		args = append(args, "-race")
	}
	if b.TrimPath {
		args = append(args, "-trimpath")
	}
	if b.LDFlags != "" {
		args = append(args, "-ldflags", b.LDFlags)
	}
	args = append(args, "./cmd/queryd")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goTool(), args...)
	cmd.Dir = root // built inside the main module (its go.mod and go.sum), as users build it
	cmd.Env = os.Environ()
	if b.Static {
		cmd.Env = append(cmd.Env, "CGO_ENABLED=0")
	}
	if outb, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go %s: %v\n%s", strings.Join(args, " "), err, outb)
	}
	return nil
}

// Main runs setup (a build every test of the package needs, say: its
// failure then fails the package at once, not each test), then m's tests,
// then removes the binaries Binary and Path built; it returns the exit
// code. A package's TestMain calls it.
func Main(m *testing.M, setup ...func() error) int {
	defer removeBuilds()
	for _, f := range setup {
		if err := f(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
	}
	return m.Run()
}

// removeBuilds removes the binaries built so far.
func removeBuilds() {
	builds.Lock()
	defer builds.Unlock()
	if builds.dir != "" {
		os.RemoveAll(builds.dir)
		builds.dir, builds.done = "", map[Build]*built{}
	}
}

// Root returns the main module's folder: the nearest folder, from the
// working directory up, whose go.mod declares github.com/queryd/queryd
// (interop/ is a module of its own inside it).
func Root() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if declares(filepath.Join(dir, "go.mod")) {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("no go.mod of " + modulePath + " above the working directory")
		}
		dir = up
	}
}

// declares reports whether the go.mod at path is the main module's.
func declares(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if name, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(name), `"`) == modulePath
		}
	}
	return false
}

// goTool is the go command: the one on PATH, else the running toolchain's.
func goTool() string {
	if p, err := exec.LookPath("go"); err == nil {
		return p
	}
	return filepath.Join(runtime.GOROOT(), "bin", "go")
}
