package api

// RouteQuery is routeQuery, for the OpenAPI document's test.
var RouteQuery = routeQuery
