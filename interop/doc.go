// Package interop checks queryd against real third-party query clients. It is
// a separate module so that the clients never enter queryd's own go.mod; the
// checks are in its _test.go files (see README.md).
package interop
