package api

import _ "embed"

// openAPIDocument is the API's OpenAPI 3.1 description, served at /v1/openapi.json. A test
// checks that it names every route of routes().
//
//go:embed openapi.json
var openAPIDocument []byte
