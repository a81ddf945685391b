package main

import (
	"github.com/queryd/queryd/a2s"
	"github.com/queryd/queryd/bedrock"
	"github.com/queryd/queryd/gamespy4"
	"github.com/queryd/queryd/quake3"
	"github.com/queryd/queryd/sagl"
	"github.com/queryd/queryd/sqp"
)

// modules are queryd's protocol modules, in demux order (the first that
// claims a datagram answers it): the one list in the tree that names them.
// A new protocol is one package implementing protocolModule, plus a line
// here.
var modules = []protocolModule{
	a2s.Module{},
	gamespy4.Module{},
	sagl.Module{},
	quake3.Module{},
	bedrock.Module{},
	sqp.Module{},
}
