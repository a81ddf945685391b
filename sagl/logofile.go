package sagl

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// Errors of reading a logo file, for errors.Is.
var (
	// ErrLogoNotRegular: the path names a FIFO, a directory, a device or a
	// socket. Such a file is never read: a FIFO would block the reader.
	ErrLogoNotRegular = errors.New("not a regular file")
	// ErrLogoTooLarge: the file is larger than the limit.
	ErrLogoTooLarge = errors.New("too large")
	// ErrLogoNoDir: a feed-set path, but no directory to confine it to.
	ErrLogoNoDir = errors.New("feed-set logo paths are refused while [sagl] logo_dir is unset")
	// ErrLogoAbsolute: a feed-set path that is absolute.
	ErrLogoAbsolute = errors.New("feed-set logo paths must be relative to [sagl] logo_dir")
)

// logoOpenFlags opens a logo without ever blocking: a FIFO with no writer,
// a file under a lease or a device would otherwise block open(2).
const logoOpenFlags = os.O_RDONLY | syscall.O_NONBLOCK

// ReadLogoFile reads the PNG or JPEG at path (any path: the operator's
// [sagl] logo): opened non-blocking, refused unless a regular file, at most
// max bytes read (max+1 to see that it is too large).
func ReadLogoFile(path string, max int64) (*Logo, error) {
	f, err := os.OpenFile(path, logoOpenFlags, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot read the logo: %w", err)
	}
	defer f.Close()
	return readLogo(f, path, max)
}

// OpenLogoDir opens dir, the directory feed-set logo paths are confined
// to ([sagl] logo_dir). It never blocks: the path must resolve to a
// directory (a FIFO in its place is refused, not opened).
func OpenLogoDir(dir string) (*os.Root, error) {
	if dir == "" {
		return nil, ErrLogoNoDir
	}
	// The trailing "/." makes the kernel refuse anything but a directory
	// before opening it; os.OpenRoot itself would block on a FIFO.
	root, err := os.OpenRoot(dir + string(os.PathSeparator) + ".")
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is dir + "/."
		}
		return nil, fmt.Errorf("logo directory %s: %w", dir, err)
	}
	return root, nil
}

// ReadLogoIn reads the PNG or JPEG at name inside root (a feed-set path,
// root from OpenLogoDir): name must be relative and stays inside the root
// (os.Root refuses "..", absolute symlinks and symlinks leading out), and is
// read like ReadLogoFile. A nil root refuses every name.
func ReadLogoIn(root *os.Root, name string, max int64) (*Logo, error) {
	switch {
	case root == nil:
		return nil, ErrLogoNoDir
	case filepath.IsAbs(name):
		return nil, fmt.Errorf("%s: %w", name, ErrLogoAbsolute)
	}
	f, err := root.OpenFile(name, logoOpenFlags, 0)
	if err != nil {
		return nil, fmt.Errorf("cannot read the logo: %w", err)
	}
	defer f.Close()
	return readLogo(f, name, max)
}

// readLogo checks the open file by fstat (a regular file of at most max
// bytes) and reads it.
func readLogo(f *os.File, path string, max int64) (*Logo, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("cannot read the logo: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is %s: %w", path, fileKind(fi.Mode()), ErrLogoNotRegular)
	}
	if fi.Size() > max {
		return nil, fmt.Errorf("%s is %w: %d bytes, at most %d (sagl.max_logo)", path, ErrLogoTooLarge, fi.Size(), max)
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > max { // it grew since the fstat
		return nil, fmt.Errorf("%s is %w: more than %d bytes (sagl.max_logo)", path, ErrLogoTooLarge, max)
	}
	logo, err := NewLogo(data, int(max))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return logo, nil
}

// fileKind names a file type that is not a regular file.
func fileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return "of an unusual type"
}
