//go:build !linux

package responder

import "errors"

// URingAvailable reports that the uring layer is Linux-only.
func URingAvailable() error { return errors.New("io_uring is Linux-only") }
