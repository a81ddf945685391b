//go:build unix

package feed

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/queryd/queryd/state"
)

// TestBindPrivate binds under umask 000: the socket file exists with owner
// bits only from the moment it is made, before Listen gives it its group
// and mode. Both ways are tested here: fchmod before bind (Linux) and the
// private folder and rename (elsewhere).
func TestBindPrivate(t *testing.T) {
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	for name, bind := range map[string]func(string, fs.FileMode) (interface{ Close() error }, error){
		"bindPrivate": func(p string, m fs.FileMode) (interface{ Close() error }, error) { return bindPrivate(p, m) },
		"bindInPrivateDir": func(p string, m fs.FileMode) (interface{ Close() error }, error) {
			return bindInPrivateDir(p, m)
		},
	} {
		t.Run(name, func(t *testing.T) {
			dir := shortDir(t)
			path := filepath.Join(dir, "feed.sock")
			ln, err := bind(path, 0o600)
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			fi, err := os.Lstat(path)
			if err != nil || fi.Mode().Type() != fs.ModeSocket || fi.Mode().Perm() != 0o600 {
				t.Fatalf("socket after bind under umask 000: %v, %v; want a socket with mode 0600", fi.Mode(), err)
			}
			if entries, _ := os.ReadDir(dir); len(entries) != 1 {
				t.Fatalf("the folder holds %d entries, want only the socket", len(entries))
			}
		})
	}
	// Listen as a whole: the configured mode in the end.
	store, _ := state.NewStore(nil, nil)
	s, err := Listen(Config{Socket: filepath.Join(shortDir(t), "f.sock"), Mode: 0o640}, store)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if fi, _ := os.Lstat(s.Path()); fi.Mode().Perm() != 0o640 {
		t.Fatalf("after Listen: mode %v, want 0640", fi.Mode().Perm())
	}
}
