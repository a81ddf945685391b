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

// TestCppQueue: with queryd frozen (SIGSTOP), 10 patches through a Feed
// whose queue holds 2 return at once; once queryd runs again it gets the
// newest state (tick 10) in at most 2 changes (the patch in flight, then
// one replace of the whole newest state), not 10.
func TestCppQueue(t *testing.T) {
	gxx := need(t, "g++", "the C++ client's queue")
	bin := filepath.Join(t.TempDir(), "queue_test")
	run(t, "cpp", gxx, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-pthread", "-o", bin, "queue_test.cpp")
	queueScenario(t, newDaemon(t), exec.Command(bin), "")
}
