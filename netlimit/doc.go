// Package netlimit keeps queryd's accept loops alive when the process runs
// out of a resource, and caps the connections a listener holds.
//
// An accept loop that returns on "too many open files" leaves a listener
// that the kernel still queues connections for but nobody accepts: the
// process runs on, deaf. net/http's Serve backs off and retries on such
// errors; Listener does the same for every listener of queryd (the feed
// socket, SAGL's HTTP port), and also for ENOBUFS and ENOMEM, which net/http
// does not retry. Its cap keeps the connections an outsider can make queryd
// hold well below the descriptor limit.
package netlimit
