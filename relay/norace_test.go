//go:build !race

package relay

const raceBuild = false
