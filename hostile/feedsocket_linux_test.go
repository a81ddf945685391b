package hostile

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/queryd/queryd/internal/testkit"
)

// runUntilStarted runs queryd on d's config with env added until it exits
// or logs "queryd started" (15 s at most). A started daemon is stopped.
func runUntilStarted(t *testing.T, d *Daemon, env ...string) (started bool, status int, out string) {
	t.Helper()
	var buf testkit.Buffer
	cmd := exec.Command(querydBin, "-config", d.ConfigPath)
	cmd.Env = append(append(os.Environ(), "GORACE=atexit_sleep_ms=0"), env...)
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	deadline := time.After(15 * time.Second)
	for {
		select {
		case err := <-exited:
			var ee *exec.ExitError
			if errors.As(err, &ee) {
				return false, ee.ExitCode(), buf.String()
			}
			return false, 0, buf.String()
		case <-deadline:
			cmd.Process.Kill()
			<-exited
			t.Fatalf("queryd neither started nor exited within 15 s:\n%s", buf.String())
		case <-time.After(20 * time.Millisecond):
			if strings.Contains(buf.String(), "queryd started") {
				cmd.Process.Signal(syscall.SIGTERM)
				select {
				case <-exited:
				case <-time.After(5 * time.Second):
					cmd.Process.Kill()
					<-exited
				}
				return true, 0, buf.String()
			}
		}
	}
}

// plantStaleSocket leaves a socket file nobody listens on at path, owned by uid.
func plantStaleSocket(t *testing.T, path string, uid int) {
	t.Helper()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
	if err := os.Lchown(path, uid, uid); err != nil {
		t.Fatal(err)
	}
}

// TestFeedSocketFolderTakenOver (issue finding 6): with [feed] socket = ""
// the socket goes in <tmp>/queryd-<uid> (or $XDG_RUNTIME_DIR/queryd).
// Another local user (uid 65534 here) made that folder first, open to all
// or as a symbolic link to a folder of theirs, with a socket file in it.
// queryd must refuse to start, say which folder and why, and touch nothing
// in it. The old daemon took the folder, removed the user's socket and
// bound its own there, where that user could replace it and receive the
// game server's state. A folder queryd makes itself is 0700 and used.
func TestFeedSocketFolderTakenOver(t *testing.T) {
	t.Parallel() // refused starts
	if os.Getuid() != 0 {
		t.Skip("needs root to make a folder owned by another user")
	}
	const other = 65534
	uid := strconv.Itoa(os.Getuid())
	shared := func(t *testing.T) string { // a folder like /tmp: 1777
		dir := shortTemp(t)
		if err := os.Chmod(dir, 0o777|fs.ModeSticky); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	othersFolder := func(t *testing.T, dir string) {
		if err := os.Mkdir(dir, 0o777); err != nil {
			t.Fatal(err)
		}
		os.Chmod(dir, 0o777)
		os.Chown(dir, other, other)
	}
	for _, tc := range []struct {
		name   string
		xdg    bool
		plant  func(t *testing.T, folder string)
		reason string
	}{
		{"another user's folder, mode 0777", false, othersFolder, "owned by uid 65534"},
		{"a symbolic link to another user's folder", false, func(t *testing.T, folder string) {
			othersFolder(t, folder+".theirs")
			// The link is ours: fs.protected_symlinks would refuse to
			// follow another user's link in a sticky folder anyway.
			if err := os.Symlink(folder+".theirs", folder); err != nil {
				t.Fatal(err)
			}
		}, "is a symbolic link"},
		{"another user's folder in XDG_RUNTIME_DIR", true, othersFolder, "owned by uid 65534"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := shared(t)
			folder := filepath.Join(base, "queryd-"+uid)
			env := []string{"XDG_RUNTIME_DIR=", "TMPDIR=" + base}
			if tc.xdg {
				folder = filepath.Join(base, "queryd")
				env = []string{"XDG_RUNTIME_DIR=" + base}
			}
			tc.plant(t, folder)
			theirs := filepath.Join(folder, "feed.sock")
			plantStaleSocket(t, theirs, other)
			d := newDaemon(t, Tables{"feed": {"socket": nil}})
			started, status, out := runUntilStarted(t, d, env...)
			if started {
				t.Fatalf("queryd started with its feed socket in %s (%s):\n%s", folder, tc.name, out)
			}
			if status == 0 {
				t.Errorf("exit status 0, want non-zero")
			}
			if !strings.Contains(out, folder) || !strings.Contains(out, tc.reason) {
				t.Errorf("the error does not name %s and %q:\n%s", folder, tc.reason, out)
			}
			fi, err := os.Lstat(theirs)
			if err != nil || fi.Mode().Type() != fs.ModeSocket || fi.Sys().(*syscall.Stat_t).Uid != other {
				t.Errorf("the other user's socket was touched: %v, %v", fi, err)
			}
			t.Logf("exit status %d: %s", status, strings.TrimSpace(out))
		})
	}
	t.Run("a folder of its own", func(t *testing.T) {
		base := shared(t)
		d := newDaemon(t, Tables{"feed": {"socket": nil}})
		d.Socket = filepath.Join(base, "queryd-"+uid, "feed.sock")
		d.Env = []string{"XDG_RUNTIME_DIR=", "TMPDIR=" + base}
		d.Start(t)
		fi, err := os.Lstat(filepath.Dir(d.Socket))
		if err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
			t.Fatalf("the folder queryd made: %v, %v; want a directory with mode 0700", fi, err)
		}
		if _, err := feedPing(d, 2*time.Second); err != nil {
			t.Fatal(err)
		}
	})
}

// shortTemp is a temp folder with a short path, removed when t ends.
func shortTemp(t *testing.T) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "qs")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}

// TestFeedSocketModeAtStart (issue finding 7): queryd starts under umask
// 000 with strace holding every chown and chmod for half a second, which
// widens the moments between creating the socket file and giving it its
// group and mode from microseconds to a second; the test watches the file meanwhile. It must never be open
// to more than [feed] mode (0660), nor to a group before it has [feed]
// group. The old daemon's socket was 0777 (0666 would do) in that moment:
// any local user could connect and feed a state.
func TestFeedSocketModeAtStart(t *testing.T) {
	t.Parallel() // a daemon of its own; it waits on timers and slow clients, not the CPU
	strace, err := exec.LookPath("strace")
	if err != nil {
		t.Skip("needs strace to hold the daemon between creating the socket and setting its mode")
	}
	gid := -1
	var over Tables
	if os.Getuid() == 0 {
		gid = 65534
		over = Tables{"feed": {"group": strconv.Itoa(gid)}}
	}
	d := newDaemon(t, over)
	out := &testkit.Buffer{}
	cmd := exec.Command("sh", "-c", `umask 000 && exec "$@"`, "sh",
		strace, "-f", "-qq", "-o", "/dev/null", "-e", "trace=chmod,fchmodat,chown,fchownat",
		"-e", "inject=chmod,fchmodat,chown,fchownat:delay_enter=500000",
		querydBin, "-config", d.ConfigPath)
	cmd.Env = append(os.Environ(), "GORACE=atexit_sleep_ms=0")
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() { stopTraced(t, cmd, exited) })

	var seen []look
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		select {
		case <-exited:
			if o := out.String(); strings.Contains(o, "strace: ") {
				t.Skipf("strace cannot run the daemon here:\n%s", o)
			}
			t.Fatalf("queryd exited during start:\n%s", out.String())
		default:
		}
		fi, err := os.Lstat(d.Socket)
		if err != nil {
			continue
		}
		l := look{fi.Mode().Perm(), int(fi.Sys().(*syscall.Stat_t).Gid)}
		if len(seen) == 0 || seen[len(seen)-1] != l {
			seen = append(seen, l)
		}
		if l.perm == 0o660 {
			break
		}
	}
	t.Logf("the socket file as it was seen during start (mode, gid): %v", seen)
	if len(seen) == 0 || seen[len(seen)-1].perm != 0o660 {
		t.Fatalf("the socket never got mode 0660:\n%s", out.String())
	}
	if len(seen) < 2 {
		t.Fatal("the socket was only seen with its final mode: strace did not hold the chmod, so this run proves nothing")
	}
	for _, l := range seen {
		if l.perm&^0o660 != 0 {
			t.Errorf("the socket existed with mode %04o, looser than the configured 0660", l.perm)
		}
		if gid >= 0 && l.perm&0o070 != 0 && l.gid != gid {
			t.Errorf("the socket was open to group %d (mode %04o) before it had [feed] group %d", l.gid, l.perm, gid)
		}
	}
	if !waitFor(15*time.Second, func() bool { return strings.Contains(out.String(), "queryd started") }) {
		t.Fatalf("queryd did not start:\n%s", out.String())
	}
	if _, err := feedPing(d, 2*time.Second); err != nil {
		t.Errorf("the feed after start: %v", err)
	}
	expectSeen(t, d, "start under strace", "hostile test", "Alice", "Bob")
}

// look is a socket file's mode and group as seen at one moment.
type look struct {
	perm fs.FileMode
	gid  int
}

func (l look) String() string { return fmt.Sprintf("%04o gid %d", l.perm, l.gid) }

// stopTraced sends SIGTERM to the daemon strace runs (strace's child) and
// waits for both; after 10 s it kills them.
func stopTraced(t *testing.T, cmd *exec.Cmd, exited chan struct{}) {
	pid := cmd.Process.Pid
	b, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/children", pid, pid))
	children := strings.Fields(string(b))
	for _, c := range children {
		if n, err := strconv.Atoi(c); err == nil {
			syscall.Kill(n, syscall.SIGTERM)
		}
	}
	if len(children) == 0 {
		cmd.Process.Signal(syscall.SIGTERM)
	}
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		for _, c := range children {
			if n, err := strconv.Atoi(c); err == nil {
				syscall.Kill(n, syscall.SIGKILL)
			}
		}
		cmd.Process.Kill()
		<-exited
		t.Errorf("the traced daemon did not exit within 10 s of SIGTERM")
	}
}
