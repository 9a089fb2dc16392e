module github.com/wfhost/wfhost/host/snapshot/testdata/goroutines

go 1.26

require github.com/wfhost/wfhost/guest-sdk/go v0.0.0

require github.com/extism/go-pdk v1.1.3 // indirect

replace github.com/wfhost/wfhost/guest-sdk/go => ../../../../guest-sdk/go
