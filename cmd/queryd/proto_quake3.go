package main

import (
	"errors"

	"github.com/queryd/queryd/config"
)

func buildQuake3(c *config.Config, d deps) (protocol, error) {
	return nil, nil // not implemented yet
}

func servicesQuake3(c *config.Config, d *daemon) ([]service, error) { return nil, nil }

func queryQuake3(addr string, q queryOpts) (any, error) {
	return nil, errors.New("quake3: not implemented yet")
}
