package clients_test

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestCppClient compiles clients/cpp/example.cpp with g++ and with clang++
// at -std=c++17 -Wall -Wextra -Werror, and runs each build through the
// scenario (its state over A2S and SAGL, pings, a queryd restart under it)
// over the feed socket.
func TestCppClient(t *testing.T) {
	for _, cxx := range []string{"g++", "clang++"} {
		t.Run(cxx, func(t *testing.T) {
			compiler := need(t, cxx, "the C++ client built with "+cxx)
			bin := filepath.Join(t.TempDir(), "example")
			run(t, "cpp", compiler, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-pthread", "-o", bin, "example.cpp")
			scenario(t, newDaemon(t), exec.Command(bin), false)
		})
	}
}
