//go:build unix

package feed

import "syscall"

// tokenOpenFlags are ReadToken's extra open flags: O_NOFOLLOW, so that the
// file cannot have become a link since it was checked, and O_NONBLOCK, so
// that a FIFO put in its place cannot block the open.
const tokenOpenFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK

// tokenModeChecked: the file's mode bits say who may read it.
const tokenModeChecked = true
