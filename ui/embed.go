package ui

import (
	"embed"
	"io/fs"
)

// static holds the console's files as they are in the tree: there is no build step, so what
// is committed is what is served.
//
//go:embed static
var static embed.FS

// files is static with the "static/" prefix gone, so /ui/app.js is static/app.js.
var files = func() fs.FS {
	sub, err := fs.Sub(static, "static")
	if err != nil {
		panic(err) // the directory is embedded above; only a broken build lacks it
	}
	return sub
}()
