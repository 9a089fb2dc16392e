// Package journals holds what both stores (store/postgres, store/embedded) do alike with a
// run's journal whatever their driver: the snapshot they refuse to keep (CheckSnapshot), and the
// window of a journal read (Limit, Trim): a read asks for one entry more than its window, and
// that entry says that more follow. It imports only store and the standard library.
package journals
