package sagl

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
)

// Logo is the server's logo: PNG or JPEG bytes, their content type and
// SHA-256. It is immutable once made.
type Logo struct {
	Data []byte
	Type string // "image/png" or "image/jpeg"
	Sum  [32]byte
}

var (
	pngMagic  = []byte{0x89, 'P', 'N', 'G', '\r', '\n', 0x1A, '\n'}
	jpegMagic = []byte{0xFF, 0xD8, 0xFF}

	errLogoType  = errors.New("not a PNG or JPEG file (by its first bytes)")
	errLogoEmpty = errors.New("empty file")
)

// LogoType returns the content type of a PNG or JPEG by its magic bytes, or
// "" for anything else.
func LogoType(data []byte) string {
	switch {
	case bytes.HasPrefix(data, pngMagic):
		return "image/png"
	case bytes.HasPrefix(data, jpegMagic):
		return "image/jpeg"
	}
	return ""
}

// NewLogo checks that data is a PNG or JPEG of at most maxSize bytes (0: no
// limit) and returns it as a Logo. data must not change afterwards.
func NewLogo(data []byte, maxSize int) (*Logo, error) {
	if len(data) == 0 {
		return nil, errLogoEmpty
	}
	if maxSize > 0 && len(data) > maxSize {
		return nil, fmt.Errorf("too large: %d bytes, at most %d", len(data), maxSize)
	}
	t := LogoType(data)
	if t == "" {
		return nil, errLogoType
	}
	return &Logo{Data: data, Type: t, Sum: sha256.Sum256(data)}, nil
}

// Hex returns the logo's SHA-256 in lower-case hex.
func (l *Logo) Hex() string { return hex.EncodeToString(l.Sum[:]) }
