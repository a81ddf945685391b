module github.com/queryd/queryd/interop

go 1.26.0

require (
	github.com/BurntSushi/toml v1.6.0
	github.com/dreamscached/minequery/v2 v2.5.0
	github.com/queryd/queryd v0.0.0
	github.com/rumblefrog/go-a2s v1.0.3
	github.com/woozymasta/a2s v0.2.2
	github.com/xrjr/mcutils v1.6.1
)

require (
	github.com/google/uuid v1.6.0 // indirect
	github.com/patrickmn/go-cache v2.1.0+incompatible // indirect
	github.com/woozymasta/steam v0.1.3 // indirect
	golang.org/x/text v0.3.8 // indirect
)

replace github.com/queryd/queryd => ../
