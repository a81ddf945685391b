package main

import (
	"errors"

	"github.com/queryd/queryd/config"
)

func buildSAGL(c *config.Config, d deps) (protocol, error) {
	return nil, nil // not implemented yet
}

func servicesSAGL(c *config.Config, d *daemon) ([]service, error) { return nil, nil }

func querySAGL(addr string, q queryOpts) (any, error) {
	return nil, errors.New("sagl: not implemented yet")
}
