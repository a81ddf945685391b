package config

import (
	"testing"

	"github.com/BurntSushi/toml"
)

// demoStub stands in, in the core's own tests, for a module whose table the
// demo config sets (a protocol off by default that the demo turns on): a
// section holding enabled only.
type demoStub string

func (m demoStub) Name() string        { return string(m) }
func (m demoStub) NewSection() Section { return &stubSection{} }

type stubSection struct {
	Enabled bool `toml:"enabled"`
}

func (s *stubSection) On() bool               { return s.Enabled }
func (s *stubSection) Check(*Config, *Errors) {}

// demoStubs returns a stub for every table of Default that is neither a
// core table nor [server], so that the core's tests parse the demo config
// without the modules (which import this package).
func demoStubs(t testing.TB) []Module {
	t.Helper()
	var raw map[string]any
	if _, err := toml.Decode(string(Default), &raw); err != nil {
		t.Fatal(err)
	}
	c := Defaults()
	core := c.tables()
	var out []Module
	for _, name := range sortedNames(raw) {
		if name != "server" && core[name] == nil {
			out = append(out, demoStub(name))
		}
	}
	return out
}
