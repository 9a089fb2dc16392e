module github.com/wfhost/wfhost/examples/wasm/go

go 1.26

require (
	github.com/extism/go-pdk v1.1.3
	github.com/wfhost/wfhost/guest-sdk/go v0.0.0
)

replace github.com/wfhost/wfhost/guest-sdk/go => ../../../guest-sdk/go
