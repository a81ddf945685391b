package main

import (
	"errors"

	"github.com/queryd/queryd/config"
)

func buildGameSpy4(c *config.Config, d deps) (protocol, error) {
	return nil, nil // not implemented yet
}

func queryGameSpy4(addr string, q queryOpts) (any, error) {
	return nil, errors.New("gamespy4: not implemented yet")
}
