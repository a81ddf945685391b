package status

// Samples is how many one-second samples the page keeps and shows: the
// last three minutes.
const Samples = 180

// ring is a fixed-size series of the last Samples values.
type ring struct {
	v    [Samples]float64
	n    int // values held, up to Samples
	next int // where the next value goes
}

// push adds x, dropping the oldest value when the ring is full.
func (r *ring) push(x float64) {
	r.v[r.next] = x
	r.next = (r.next + 1) % Samples
	r.n = min(r.n+1, Samples)
}

// values returns the values held, oldest first, appended to dst.
func (r *ring) values(dst []float64) []float64 {
	start := (r.next - r.n + Samples) % Samples
	for i := 0; i < r.n; i++ {
		dst = append(dst, r.v[(start+i)%Samples])
	}
	return dst
}

// fill pushes n zeros (a series that starts late lines up with the others).
func (r *ring) fill(n int) {
	for i := 0; i < n; i++ {
		r.push(0)
	}
}
