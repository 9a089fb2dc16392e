// Package workflows holds what both stores (store/postgres, store/embedded) answer alike about
// workflows, whatever their driver: the error of an unknown workflow, and the summaries
// ListWorkflows builds from its two queries. It imports only store and the standard library.
package workflows
