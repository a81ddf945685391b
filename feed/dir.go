package feed

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// PrivateDir makes dir, the folder of the default socket path, or checks
// the one already there. Queryd only uses a folder that is a directory (not
// a symbolic link) owned by its own user that no one else may write to:
// another local user who made the folder first could otherwise replace the
// socket, receive the game server's state and answer it. The parent must
// exist, and if others may write to it, it must be sticky (like /tmp) so
// that they cannot move the folder away.
func PrivateDir(dir string) error {
	parent := filepath.Dir(dir)
	pi, err := os.Stat(parent)
	if err != nil {
		return fmt.Errorf("feed socket folder %s: its parent: %w", dir, err)
	}
	if _, unix := ownerOf(pi); unix && pi.Mode().Perm()&0o022 != 0 && pi.Mode()&fs.ModeSticky == 0 {
		return fmt.Errorf("feed socket folder %s: its parent %s (mode %04o) may be written by others and is not sticky; refusing it (set [feed] socket to a path in a private folder)", dir, parent, pi.Mode().Perm())
	}
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("feed socket folder %s: %w", dir, err)
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("feed socket folder %s: %w", dir, err)
	}
	return checkPrivate(dir, fi)
}

// checkPrivate refuses a folder that others could use to take over the socket.
func checkPrivate(dir string, fi fs.FileInfo) error {
	const fix = "refusing it (remove it, or set [feed] socket)"
	if !fi.IsDir() {
		return fmt.Errorf("feed socket folder %s is a %s, not a directory; %s", dir, kindOf(fi), fix)
	}
	uid, unix := ownerOf(fi)
	if !unix {
		return nil // no owners or permission bits to check
	}
	if uid != os.Getuid() {
		return fmt.Errorf("feed socket folder %s is owned by uid %d, not by queryd's uid %d (another user may have made it to take over the feed); %s", dir, uid, os.Getuid(), fix)
	}
	if perm := fi.Mode().Perm(); perm&0o022 != 0 {
		return fmt.Errorf("feed socket folder %s has mode %04o: others may write to it and replace the socket; %s", dir, perm, fix)
	}
	return nil
}
