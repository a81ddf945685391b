package testkit

import (
	"flag"
	"runtime"
	"strconv"
)

// SetParallel raises -test.parallel to n when the command line does not
// set it and n is more than its default (GOMAXPROCS): for a package whose
// parallel tests (t.Parallel) mostly wait, on a daemon's timers, a slow
// attack's pace or a real client or server, so that more of them wait at
// once than the machine has CPUs. TestMain calls it after flag.Parse.
func SetParallel(n int) {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if f := flag.Lookup("test.parallel"); f != nil && !given && n > runtime.GOMAXPROCS(0) {
		f.Value.Set(strconv.Itoa(n))
	}
}
