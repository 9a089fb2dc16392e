package api

import (
	"fmt"
	"net/http"
	"strconv"

	"github.com/wfhost/wfhost/api/wire"
	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// Schedules belong to the tenant whose token made them: every route reads the tenant from the
// token, so another tenant's schedule is a 404 like a missing one. The engine checks what a
// schedule says (engine/schedules.go); here the id in the path is checked first, so a
// malformed one is a 400 that reaches no store.

// POST /v1/schedules
func (h *Handler) createSchedule(w http.ResponseWriter, r *http.Request) error {
	var body wire.CreateSchedule
	if err := h.decodeRequiredJSON(w, r, &body); err != nil {
		return err
	}
	sc, err := h.cfg.Service.CreateSchedule(r.Context(), tenant(r), engine.ScheduleRequest{
		ID: body.ID, Cron: body.Cron, TimeZone: body.TimeZone, IntervalMs: body.IntervalMs,
		Workflow: body.Workflow, Version: body.Version, Input: body.Input, Overlap: store.OverlapPolicy(body.Overlap),
		CatchupWindowMs: body.CatchupWindowMs, JitterMs: body.JitterMs, Paused: body.Paused,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, viewSchedule(sc))
	return nil
}

// GET /v1/schedules
func (h *Handler) listSchedules(w http.ResponseWriter, r *http.Request) error {
	list, err := h.cfg.Store.ListSchedules(r.Context(), tenant(r))
	if err != nil {
		return err
	}
	out := wire.SchedulePage{Schedules: make([]wire.Schedule, 0, len(list))}
	for _, sc := range list {
		out.Schedules = append(out.Schedules, viewSchedule(sc))
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// scheduleID is the {id} of a schedule route, checked.
func scheduleID(r *http.Request) (string, error) {
	id := r.PathValue("id")
	if err := engine.CheckScheduleID(id); err != nil {
		return "", badRequest("invalid_request", err.Error())
	}
	return id, nil
}

// GET /v1/schedules/{id}
func (h *Handler) getSchedule(w http.ResponseWriter, r *http.Request) error {
	id, err := scheduleID(r)
	if err != nil {
		return err
	}
	sc, err := h.cfg.Store.GetSchedule(r.Context(), tenant(r), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewSchedule(sc))
	return nil
}

// DELETE /v1/schedules/{id}
func (h *Handler) deleteSchedule(w http.ResponseWriter, r *http.Request) error {
	id, err := scheduleID(r)
	if err != nil {
		return err
	}
	if err := h.cfg.Service.DeleteSchedule(r.Context(), tenant(r), id); err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, wire.ScheduleDeleted{ID: id, Deleted: true})
	return nil
}

// POST /v1/schedules/{id}/pause
func (h *Handler) pauseSchedule(w http.ResponseWriter, r *http.Request) error {
	id, err := scheduleID(r)
	if err != nil {
		return err
	}
	sc, err := h.cfg.Service.PauseSchedule(r.Context(), tenant(r), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewSchedule(sc))
	return nil
}

// POST /v1/schedules/{id}/resume
func (h *Handler) resumeSchedule(w http.ResponseWriter, r *http.Request) error {
	id, err := scheduleID(r)
	if err != nil {
		return err
	}
	sc, err := h.cfg.Service.ResumeSchedule(r.Context(), tenant(r), id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, viewSchedule(sc))
	return nil
}

// POST /v1/schedules/{id}/trigger
func (h *Handler) triggerSchedule(w http.ResponseWriter, r *http.Request) error {
	id, err := scheduleID(r)
	if err != nil {
		return err
	}
	res, err := h.cfg.Service.TriggerSchedule(r.Context(), tenant(r), id)
	if err != nil {
		return err
	}
	out := wire.Triggered{Outcome: string(res.Outcome), FireAt: res.FireAt, Note: res.Note}
	if res.Run != nil {
		run := viewRun(*res.Run)
		out.Run = &run
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// GET /v1/schedules/{id}/next?count=N (1 to engine.MaxNextFireTimes, default 10)
func (h *Handler) nextFireTimes(w http.ResponseWriter, r *http.Request) error {
	id, err := scheduleID(r)
	if err != nil {
		return err
	}
	n := 10
	if q := r.URL.Query(); q.Has("count") {
		n, err = strconv.Atoi(q.Get("count"))
		if err != nil || n < 1 || n > engine.MaxNextFireTimes {
			return badRequest("invalid_request", fmt.Sprintf("count must be a number from 1 to %d, not %q", engine.MaxNextFireTimes, q.Get("count")))
		}
	}
	times, err := h.cfg.Service.NextFireTimes(r.Context(), tenant(r), id, n)
	if err != nil {
		return err
	}
	out := wire.FireTimes{ID: id, FireTimes: make([]wire.FireTime, 0, len(times))}
	for _, ft := range times {
		out.FireTimes = append(out.FireTimes, wire.FireTime{At: ft.At, Due: ft.Due})
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

func viewSchedule(sc store.Schedule) wire.Schedule {
	return wire.Schedule{
		ID: sc.ID, Cron: sc.Cron, TimeZone: sc.TimeZone, IntervalMs: sc.IntervalMs, Workflow: sc.Workflow,
		Version: sc.Version, Input: sc.Input, Overlap: string(sc.Overlap), CatchupWindowMs: sc.CatchupWindowMs,
		JitterMs: sc.JitterMs, Paused: sc.Paused, NextFireAt: sc.NextFireAt, DueAt: sc.DueAt,
		BufferedFireAt: sc.BufferedFireAt, LastFireAt: sc.LastFireAt, LastRunID: sc.LastRunID,
		LastError: sc.LastError, CreatedAt: sc.CreatedAt, UpdatedAt: sc.UpdatedAt,
	}
}
