//go:build !unix

package config_test

import "errors"

// mkfifo makes a FIFO at path (none on this system).
func mkfifo(string) error { return errors.New("no FIFOs on this system") }
