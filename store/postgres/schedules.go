package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/wfhost/wfhost/store"
)

// CreateSchedule inserts a schedule: one statement, which also checks that the tenant exists.
func (s *Store) CreateSchedule(ctx context.Context, sc store.Schedule) (_ store.Schedule, err error) {
	defer classify(&err)
	input := []byte(sc.Input)
	if len(input) == 0 {
		input = []byte("null")
	}
	out, err := scanSchedule(s.pool.QueryRow(ctx, s.q("create_schedule"), sc.TenantID, sc.ID, sc.Cron, sc.TimeZone,
		sc.IntervalMs, sc.Workflow, sc.Version, input, string(sc.Overlap), sc.CatchupWindowMs, sc.JitterMs,
		sc.Paused, sc.NextFireAt, sc.DueAt))
	if errors.Is(err, pgx.ErrNoRows) {
		// No row: the tenant is missing or the id is taken. A read tells which.
		if _, terr := s.GetTenant(ctx, sc.TenantID); terr != nil {
			return store.Schedule{}, fmt.Errorf("create schedule %s: %w", sc.ID, terr)
		}
		return store.Schedule{}, fmt.Errorf("create schedule %s: %w: the tenant has a schedule with this id", sc.ID, store.ErrConflict)
	}
	if err != nil {
		return store.Schedule{}, fmt.Errorf("create schedule %s: %w", sc.ID, err)
	}
	return out, nil
}

// GetSchedule returns one schedule.
func (s *Store) GetSchedule(ctx context.Context, tenantID, id string) (_ store.Schedule, err error) {
	defer classify(&err)
	sc, err := scanSchedule(s.pool.QueryRow(ctx, s.q("get_schedule"), tenantID, id))
	if err != nil {
		return store.Schedule{}, fmt.Errorf("schedule %s: %w", id, notFound(err))
	}
	return sc, nil
}

// ListSchedules returns the tenant's schedules by id.
func (s *Store) ListSchedules(ctx context.Context, tenantID string) (_ []store.Schedule, err error) {
	defer classify(&err)
	return s.schedules(ctx, "list schedules", s.q("list_schedules"), tenantID)
}

// DueSchedules returns the schedules due at now or keeping a buffered fire time.
func (s *Store) DueSchedules(ctx context.Context, now time.Time, limit int) (_ []store.Schedule, err error) {
	defer classify(&err)
	return s.schedules(ctx, "due schedules", s.q("due_schedules"), now, limit)
}

func (s *Store) schedules(ctx context.Context, what, text string, args ...any) ([]store.Schedule, error) {
	rows, err := s.pool.Query(ctx, text, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	out, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (store.Schedule, error) { return scanSchedule(r) })
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// DeleteSchedule removes a schedule.
func (s *Store) DeleteSchedule(ctx context.Context, tenantID, id string) (err error) {
	defer classify(&err)
	tag, err := s.pool.Exec(ctx, s.q("delete_schedule"), tenantID, id)
	if err != nil {
		return fmt.Errorf("delete schedule %s: %w", id, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("delete schedule %s: %w", id, store.ErrNotFound)
	}
	return nil
}

// SetSchedulePaused pauses or resumes a schedule.
func (s *Store) SetSchedulePaused(ctx context.Context, tenantID, id string, paused bool, next, due time.Time) (_ store.Schedule, err error) {
	defer classify(&err)
	sc, err := scanSchedule(s.pool.QueryRow(ctx, s.q("set_schedule_paused"), tenantID, id, paused, next, due))
	if err != nil {
		return store.Schedule{}, fmt.Errorf("pause schedule %s: %w", id, notFound(err))
	}
	return sc, nil
}

// NextScheduleDue is the earliest due time of a schedule that is not paused.
func (s *Store) NextScheduleDue(ctx context.Context) (_ time.Time, _ bool, err error) {
	defer classify(&err)
	var at *time.Time
	if err := s.pool.QueryRow(ctx, s.q("next_schedule_due")).Scan(&at); err != nil {
		return time.Time{}, false, fmt.Errorf("next schedule due: %w", err)
	}
	if at == nil {
		return time.Time{}, false, nil
	}
	return *at, true, nil
}

// AdvanceSchedule writes a step of a schedule's state if it is still where the writer read it.
func (s *Store) AdvanceSchedule(ctx context.Context, a store.ScheduleAdvance) (_ bool, err error) {
	defer classify(&err)
	var runID *string
	var fireAt *time.Time
	if a.Started != nil {
		runID, fireAt = &a.Started.RunID, &a.Started.FireAt
	}
	tag, err := s.pool.Exec(ctx, s.q("advance_schedule"), a.TenantID, a.ID, a.From, a.FromBuffered,
		a.NextFireAt, a.DueAt, a.BufferedFireAt, runID, fireAt, a.LastError)
	if err != nil {
		return false, fmt.Errorf("advance schedule %s: %w", a.ID, err)
	}
	return tag.RowsAffected() == 1, nil
}

// scanSchedule reads the schedule columns every schedule query selects, in their order.
func scanSchedule(row pgx.Row) (store.Schedule, error) {
	var (
		sc      store.Schedule
		overlap string
		input   []byte
	)
	if err := row.Scan(&sc.TenantID, &sc.ID, &sc.Cron, &sc.TimeZone, &sc.IntervalMs, &sc.Workflow, &sc.Version,
		&input, &overlap, &sc.CatchupWindowMs, &sc.JitterMs, &sc.Paused, &sc.NextFireAt, &sc.DueAt,
		&sc.BufferedFireAt, &sc.LastFireAt, &sc.LastRunID, &sc.LastError, &sc.CreatedAt, &sc.UpdatedAt); err != nil {
		return store.Schedule{}, err
	}
	sc.Overlap, sc.Input = store.OverlapPolicy(overlap), input
	utc(&sc)
	return sc, nil
}

// utc puts a schedule's times in UTC, as the embedded store returns them, so the two stores
// compare equal in the shared suite and a time read is a time that can be written back as
// AdvanceSchedule's From.
func utc(sc *store.Schedule) {
	for _, t := range []*time.Time{&sc.NextFireAt, &sc.DueAt, &sc.CreatedAt, &sc.UpdatedAt, sc.BufferedFireAt, sc.LastFireAt} {
		if t != nil {
			*t = t.UTC()
		}
	}
}
