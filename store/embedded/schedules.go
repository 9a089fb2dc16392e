package embedded

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/wfhost/wfhost/store"
)

// CreateSchedule inserts a schedule of an existing tenant.
func (s *Store) CreateSchedule(ctx context.Context, sc store.Schedule) (_ store.Schedule, err error) {
	defer classify(&err)
	input := string(sc.Input)
	if input == "" {
		input = "null"
	}
	var out store.Schedule
	err = s.write(ctx, "create schedule "+sc.ID, func(w *wtx) error {
		var one int
		if err := w.queryRow("tenant_exists", sc.TenantID).Scan(&one); err != nil {
			return fmt.Errorf("tenant %s: %w", sc.TenantID, notFound(err))
		}
		n, err := w.affected("create_schedule", sc.TenantID, sc.ID, sc.Cron, sc.TimeZone, sc.IntervalMs, sc.Workflow,
			sc.Version, input, string(sc.Overlap), sc.CatchupWindowMs, sc.JitterMs, sc.Paused,
			micros(sc.NextFireAt), micros(sc.DueAt), micros(w.now))
		if err != nil {
			return err
		}
		if n == 0 {
			return fmt.Errorf("%w: the tenant has a schedule with this id", store.ErrConflict)
		}
		out, err = scanSchedule(w.queryRow("get_schedule", sc.TenantID, sc.ID))
		return err
	})
	if err != nil {
		return store.Schedule{}, fmt.Errorf("create schedule %s: %w", sc.ID, err)
	}
	return out, nil
}

// GetSchedule returns one schedule.
func (s *Store) GetSchedule(ctx context.Context, tenantID, id string) (_ store.Schedule, err error) {
	defer classify(&err)
	sc, err := scanSchedule(s.rdb.QueryRowContext(ctx, s.q("get_schedule"), tenantID, id))
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
	return s.schedules(ctx, "due schedules", s.q("due_schedules"), micros(now), limit)
}

func (s *Store) schedules(ctx context.Context, what, text string, args ...any) ([]store.Schedule, error) {
	rows, err := s.rdb.QueryContext(ctx, text, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	defer rows.Close()
	var out []store.Schedule
	for rows.Next() {
		sc, err := scanSchedule(rows)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		out = append(out, sc)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return out, nil
}

// DeleteSchedule removes a schedule.
func (s *Store) DeleteSchedule(ctx context.Context, tenantID, id string) (err error) {
	defer classify(&err)
	return s.write(ctx, "delete schedule "+id, func(w *wtx) error {
		n, err := w.affected("delete_schedule", tenantID, id)
		if err == nil && n == 0 {
			err = store.ErrNotFound
		}
		return err
	})
}

// SetSchedulePaused pauses or resumes a schedule.
func (s *Store) SetSchedulePaused(ctx context.Context, tenantID, id string, paused bool, next, due time.Time) (_ store.Schedule, err error) {
	defer classify(&err)
	var out store.Schedule
	err = s.write(ctx, "pause schedule "+id, func(w *wtx) error {
		n, err := w.affected("set_schedule_paused", tenantID, id, paused, micros(next), micros(due), micros(w.now))
		if err != nil {
			return err
		}
		if n == 0 {
			return store.ErrNotFound
		}
		out, err = scanSchedule(w.queryRow("get_schedule", tenantID, id))
		return err
	})
	if err != nil {
		return store.Schedule{}, fmt.Errorf("schedule %s: %w", id, err)
	}
	return out, nil
}

// NextScheduleDue is the earliest due time of a schedule that is not paused.
func (s *Store) NextScheduleDue(ctx context.Context) (_ time.Time, _ bool, err error) {
	defer classify(&err)
	var at sql.NullInt64
	if err := s.rdb.QueryRowContext(ctx, s.q("next_schedule_due")).Scan(&at); err != nil {
		return time.Time{}, false, fmt.Errorf("next schedule due: %w", err)
	}
	if !at.Valid {
		return time.Time{}, false, nil
	}
	return fromMicros(at.Int64), true, nil
}

// AdvanceSchedule writes a step of a schedule's state if it is still where the writer read it.
func (s *Store) AdvanceSchedule(ctx context.Context, a store.ScheduleAdvance) (_ bool, err error) {
	defer classify(&err)
	var runID, fireAt any
	if a.Started != nil {
		runID, fireAt = a.Started.RunID, micros(a.Started.FireAt)
	}
	var ok bool
	err = s.write(ctx, "advance schedule "+a.ID, func(w *wtx) error {
		n, err := w.affected("advance_schedule", a.TenantID, a.ID, micros(a.From), timeArg(a.FromBuffered),
			micros(a.NextFireAt), micros(a.DueAt), timeArg(a.BufferedFireAt), runID, fireAt, a.LastError, micros(w.now))
		ok = n == 1
		return err
	})
	return ok, err
}

// scanSchedule reads the schedule columns every schedule query selects, in their order.
func scanSchedule(row scanner) (store.Schedule, error) {
	var (
		sc                          store.Schedule
		overlap, input              string
		next, due, created, updated int64
		buffered, lastFire          sql.NullInt64
	)
	if err := row.Scan(&sc.TenantID, &sc.ID, &sc.Cron, &sc.TimeZone, &sc.IntervalMs, &sc.Workflow, &sc.Version,
		&input, &overlap, &sc.CatchupWindowMs, &sc.JitterMs, &sc.Paused, &next, &due,
		&buffered, &lastFire, &sc.LastRunID, &sc.LastError, &created, &updated); err != nil {
		return store.Schedule{}, err
	}
	sc.Overlap, sc.Input = store.OverlapPolicy(overlap), []byte(input)
	sc.NextFireAt, sc.DueAt, sc.CreatedAt, sc.UpdatedAt = fromMicros(next), fromMicros(due), fromMicros(created), fromMicros(updated)
	sc.BufferedFireAt, sc.LastFireAt = timePtr(buffered), timePtr(lastFire)
	return sc, nil
}
