//go:build linux

package xdp

import "testing"

func TestTryLoad(t *testing.T) {
	var objs querydObjects
	if err := loadQuerydObjects(&objs, nil); err != nil {
		t.Fatalf("%+v", err)
	}
	objs.Close()
}
