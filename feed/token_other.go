//go:build !unix

package feed

// tokenOpenFlags: no O_NOFOLLOW or O_NONBLOCK here (Windows); the file is
// still checked to be a regular file before and after the open.
const tokenOpenFlags = 0

// tokenModeChecked: Windows reports no group or other bits (access is its
// ACLs' business), so the mode is not checked there.
const tokenModeChecked = false
