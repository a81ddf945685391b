package feed

import (
	"bytes"
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// MinTokenLen is the shortest HTTP feed token accepted, in bytes (after
// trimming surrounding whitespace).
const MinTokenLen = 16

// maxTokenFile is the most of a token file read: a longer file is refused.
const maxTokenFile = 4096

// ReadToken reads the HTTP feed's token ([feed] http_token_file): a regular
// file, not a symbolic link, that others may not read or write and its
// group may not write (0600 or 0640), holding at least MinTokenLen bytes of
// visible ASCII once surrounding whitespace is trimmed. Its errors say what
// is wrong with the file, and how to put it right.
func ReadToken(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("token file %s: a %s, want a regular file", path, kindOf(fi))
	}
	f, err := os.OpenFile(path, os.O_RDONLY|tokenOpenFlags, 0)
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	defer f.Close()
	if fi, err = f.Stat(); err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("token file %s: a %s, want a regular file", path, kindOf(fi))
	}
	if perm := fi.Mode().Perm(); tokenModeChecked && perm&0o027 != 0 {
		return nil, fmt.Errorf("token file %s: mode %04o lets %s; want 0600 or 0640 (chmod 600 %s)", path, uint32(perm), whoMay(perm), path)
	}
	b, err := io.ReadAll(io.LimitReader(f, maxTokenFile+1))
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	if len(b) > maxTokenFile {
		return nil, fmt.Errorf("token file %s: longer than %d bytes", path, maxTokenFile)
	}
	tok := bytes.TrimSpace(b)
	if len(tok) < MinTokenLen {
		return nil, fmt.Errorf("token file %s: the token has %d bytes, want at least %d (e.g. head -c 32 /dev/urandom | base64 > %s)", path, len(tok), MinTokenLen, path)
	}
	for _, c := range tok {
		if c < 0x21 || c > 0x7e {
			return nil, fmt.Errorf("token file %s: the token may hold only visible ASCII characters (no spaces), as an HTTP header carries it", path)
		}
	}
	return tok, nil
}

// whoMay says what a token file's mode lets others do.
func whoMay(perm fs.FileMode) string {
	switch {
	case perm&0o004 != 0:
		return "others read it"
	case perm&0o020 != 0:
		return "its group write it"
	}
	return "others write or run it"
}

// tokenHash is a token as compared: its SHA-256, so that a comparison in
// constant time does not depend on the lengths either.
type tokenHash [sha256.Size]byte

func hashToken(tok []byte) *tokenHash {
	h := tokenHash(sha256.Sum256(tok))
	return &h
}

// equal compares two token hashes in constant time.
func (h *tokenHash) equal(o *tokenHash) bool {
	return subtle.ConstantTimeCompare(h[:], o[:]) == 1
}
