package postgres

import (
	"context"
	"embed"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/wfhost/wfhost/store/internal/sqlfiles"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrate creates the schema if needed and applies every migration not yet applied, each in
// its own transaction with its record in the migrations table. Concurrent migrators (two
// daemons starting at once) serialize on an advisory lock, so each migration runs once; the
// later ones find nothing left to do.
func (s *Store) Migrate(ctx context.Context) (err error) {
	defer classify(&err)
	ms, err := sqlfiles.Migrations(migrationFiles, "migrations")
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	conn, err := s.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("migrate: %w", err)
	}
	defer conn.Release()
	if _, err := conn.Exec(ctx, s.q("migrate_lock"), s.schema); err != nil {
		return fmt.Errorf("migrate: lock: %w", err)
	}
	defer func() {
		if _, err := conn.Exec(context.WithoutCancel(ctx), s.q("migrate_unlock"), s.schema); err != nil {
			// A session lock that cannot be released must not go back to the pool with it.
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	bootstrap := strings.ReplaceAll(s.q("migrate_bootstrap"), "{schema}", pgx.Identifier{s.schema}.Sanitize())
	// Simple protocol: the bootstrap is two statements.
	if _, err := conn.Exec(ctx, bootstrap, pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("migrate: create schema: %w", err)
	}
	var applied int
	if err := conn.QueryRow(ctx, s.q("migrate_applied")).Scan(&applied); err != nil {
		return fmt.Errorf("migrate: read applied version: %w", err)
	}
	if applied >= len(ms) {
		// Up to date, or migrated by a newer binary: its migrations only add to what this one uses.
		return nil
	}
	for _, m := range ms[applied:] {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, m.SQL, pgx.QueryExecModeSimpleProtocol); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, s.q("migrate_record"), m.Version, m.Name)
			return err
		})
		if err != nil {
			return fmt.Errorf("migrate: apply %s: %w", m.Name, err)
		}
	}
	return nil
}

// MigrationsCurrent reports whether every migration this binary knows has been applied, for
// readiness checks. A schema migrated further by a newer binary is current too, so a rolling
// deploy does not take the older hosts out of service.
func (s *Store) MigrationsCurrent(ctx context.Context) (_ bool, err error) {
	defer classify(&err)
	ms, err := sqlfiles.Migrations(migrationFiles, "migrations")
	if err != nil {
		return false, fmt.Errorf("migrations current: %w", err)
	}
	var exists bool
	table := pgx.Identifier{s.schema, "migrations"}.Sanitize()
	if err := s.pool.QueryRow(ctx, s.q("migrations_table"), table).Scan(&exists); err != nil {
		return false, fmt.Errorf("migrations current: %w", err)
	}
	if !exists {
		return false, nil
	}
	var applied int
	if err := s.pool.QueryRow(ctx, s.q("migrate_applied")).Scan(&applied); err != nil {
		return false, fmt.Errorf("migrations current: %w", err)
	}
	return applied >= len(ms), nil
}
