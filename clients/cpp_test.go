package clients_test

import (
	"debug/pe"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCppClient compiles clients/cpp/example.cpp with g++ and with clang++
// at -std=c++17 -Wall -Wextra -Werror, and runs each build through the
// scenario (its state over A2S and SAGL, pings, a queryd restart under it)
// over the feed socket, and the g++ build once more over the HTTP feed.
func TestCppClient(t *testing.T) {
	t.Parallel()
	for _, cxx := range []string{"g++", "clang++"} {
		t.Run(cxx, func(t *testing.T) {
			t.Parallel()
			compiler := need(t, cxx, "the C++ client built with "+cxx)
			bin := filepath.Join(t.TempDir(), "example")
			run(t, "cpp", compiler, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-pthread", "-o", bin, "example.cpp")
			t.Run("socket", func(t *testing.T) {
				t.Parallel()
				scenario(t, newDaemon(t), exec.Command(bin), false)
			})
			if cxx == "g++" {
				t.Run("http", func(t *testing.T) {
					t.Parallel()
					cmd := exec.Command(bin)
					cmd.Env = []string{"QUERYD_FEED_SOCKET="} // the HTTP feed only
					scenario(t, newDaemon(t), cmd, true)
				})
				t.Run("http-wrong-token", func(t *testing.T) {
					t.Parallel()
					cppWrongToken(t, bin)
				})
			}
		})
	}
}

// TestCppQueue: with queryd frozen (SIGSTOP), 10 patches through a Feed
// whose queue holds 2 return at once; once queryd runs again it gets the
// newest state (tick 10) in at most 2 changes (the patch in flight, then
// one replace of the whole newest state), not 10.
func TestCppQueue(t *testing.T) {
	t.Parallel()
	gxx := need(t, "g++", "the C++ client's queue")
	bin := filepath.Join(t.TempDir(), "queue_test")
	run(t, "cpp", gxx, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-pthread", "-o", bin, "queue_test.cpp")
	queueScenario(t, newDaemon(t), exec.Command(bin), "")
}

// cppWrongToken runs the example over the HTTP feed with a wrong token:
// queryd answers 401 and serves no state, and the client reports it and
// retries with backoff (a few times in 3 s, not in a tight loop).
func cppWrongToken(t *testing.T, bin string) {
	d := newDaemon(t)
	d.Start(t)
	cmd := exec.Command(bin)
	cmd.Env = []string{"QUERYD_FEED_SOCKET=", "QUERYD_FEED_TOKEN=not-the-token-at-all"}
	c := startClient(t, cmd, d.env())
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(c.out.String(), "HTTP 401") {
		if time.Now().After(deadline) || c.exited() {
			t.Fatalf("the client reported no 401 within 20 s:\n%s", c.out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	first := strings.Count(c.out.String(), "HTTP 401")
	time.Sleep(3 * time.Second)
	n := strings.Count(c.out.String(), "HTTP 401") - first
	// Backoff from 100 ms doubling: about 4 more in 3 s (5 s cap); a loop
	// without it would make hundreds.
	t.Logf("wrong token: %d more 401s reported in 3 s after the first", n)
	if n < 1 || n > 10 {
		t.Errorf("%d more 401s in 3 s; want a few (backoff):\n%s", n, c.out)
	}
	if s, err := d.ask(); err == nil && s.fed() {
		t.Errorf("queryd serves the client's state although its token was wrong: %v", s)
	}
	if ok := d.httpAnswers(t); ok != 0 {
		t.Errorf("the HTTP feed answered %.0f requests with 200 for a wrong token", ok)
	}
}

// mingwCxx is Debian's mingw-w64 C++ compiler for 64-bit Windows with the
// posix thread model (g++-mingw-w64-x86-64-posix): the win32 one of GCC 12
// has no std::thread.
const mingwCxx = "x86_64-w64-mingw32-g++-posix"

// TestCppWindows cross-compiles example.cpp and queue_test.cpp for Windows
// with mingw-w64 at -std=c++17 -Wall -Wextra -Werror, with mingw's afunix.h
// and with the header's own sockaddr_un (QUERYD_VENDOR_AFUNIX), and checks
// each result is an x86-64 PE executable whose socket calls (AF_UNIX and
// the HTTP feed's TCP) come from Winsock (ws2_32.dll). It is compiled, not run (no Windows, no wine).
func TestCppWindows(t *testing.T) {
	t.Parallel()
	cxx := need(t, mingwCxx, "the C++ client's Windows (Winsock AF_UNIX) build")
	for _, src := range []string{"example.cpp", "queue_test.cpp"} {
		for _, afunix := range []string{"afunix.h", "vendored"} {
			t.Run(src+"/"+afunix, func(t *testing.T) { // one compile at a time: they take the CPU the scenarios' timings need
				exe := filepath.Join(t.TempDir(), strings.TrimSuffix(src, ".cpp")+".exe")
				args := []string{"-std=c++17", "-Wall", "-Wextra", "-Werror", "-static", "-o", exe, src, "-lws2_32"}
				if afunix == "vendored" {
					args = append([]string{"-DQUERYD_VENDOR_AFUNIX"}, args...)
				}
				run(t, "cpp", cxx, args...)
				checkWinsockExe(t, exe)
			})
		}
	}
}

// checkWinsockExe fails unless exe is an x86-64 PE file importing the
// Winsock calls the feed client makes.
func checkWinsockExe(t *testing.T, exe string) {
	t.Helper()
	f, err := pe.Open(exe)
	if err != nil {
		t.Fatalf("%s is not a PE executable: %v", exe, err)
	}
	defer f.Close()
	if f.Machine != pe.IMAGE_FILE_MACHINE_AMD64 {
		t.Errorf("%s: machine %#x, want x86-64 (%#x)", exe, f.Machine, pe.IMAGE_FILE_MACHINE_AMD64)
	}
	syms, err := f.ImportedSymbols()
	if err != nil {
		t.Fatalf("%s: imports: %v", exe, err)
	}
	imported := map[string]bool{}
	for _, s := range syms {
		name, dll, _ := strings.Cut(s, ":")
		imported[name+":"+strings.ToLower(dll)] = true
	}
	for _, want := range []string{"WSAStartup", "WSACleanup", "socket", "connect", "send", "recv", "setsockopt", "closesocket", "getaddrinfo"} {
		if !imported[want+":ws2_32.dll"] {
			t.Errorf("%s does not import %s from ws2_32.dll (imports: %v)", exe, want, syms)
		}
	}
}

// TestCppRecover: recover_test.cpp (g++) through the recover rows (see
// recoverRows) over the feed socket, and the rows once more over the HTTP
// feed: a queryd restart, a rejected patch then a restart, a rejected
// patch before queryd runs.
func TestCppRecover(t *testing.T) {
	t.Parallel()
	gxx := need(t, "g++", "the C++ client's recovery")
	bin := filepath.Join(t.TempDir(), "recover_test")
	run(t, "cpp", gxx, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-pthread", "-o", bin, "recover_test.cpp")
	t.Run("socket", func(t *testing.T) {
		t.Parallel()
		recoverRows(t, processRecover(func() *exec.Cmd { return exec.Command(bin) }))
	})
	t.Run("http", func(t *testing.T) {
		t.Parallel()
		recoverRows(t, processRecover(func() *exec.Cmd {
			cmd := exec.Command(bin)
			cmd.Env = []string{"QUERYD_FEED_SOCKET="} // the HTTP feed only
			return cmd
		}))
	})
}
