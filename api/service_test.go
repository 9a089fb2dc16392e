package api_test

import (
	"github.com/wfhost/wfhost/api"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// The API's two seams are what the daemon hands it: the engine's Service and any store.
var (
	_ api.Service = (*engine.Service)(nil)
	_ api.Reader  = store.Store(nil)
)
