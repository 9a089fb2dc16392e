package sqlfiles

import (
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Queries reads every .sql file in dir of fsys, keyed by its name without ".sql".
func Queries(fsys fs.FS, dir string) (map[string]string, error) {
	out := make(map[string]string)
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(fsys, p)
		if err != nil {
			return err
		}
		out[strings.TrimSuffix(d.Name(), ".sql")] = string(b)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("load queries: %w", err)
	}
	return out, nil
}

// Migration is one numbered file of a migrations directory ("001_init.sql"). Migrations are
// applied in number order, each once, and never edited after they ship: a change is a new
// file.
type Migration struct {
	Version int
	Name    string
	SQL     string
}

// Migrations reads the migrations in dir of fsys, in order, and requires them to be numbered
// 1, 2, 3, ... with no gap.
func Migrations(fsys fs.FS, dir string) ([]Migration, error) {
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, e := range entries {
		num, _, ok := strings.Cut(e.Name(), "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil {
			return nil, fmt.Errorf("migration %s: name must start with its number", e.Name())
		}
		b, err := fs.ReadFile(fsys, path.Join(dir, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: e.Name(), SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: expected number %d", m.Name, i+1)
		}
	}
	return out, nil
}
