package api

import (
	"context"
	"encoding/json"
	"time"

	"github.com/wfhost/wfhost/engine"
	"github.com/wfhost/wfhost/store"
)

// Service is what the API asks of the engine: the requests that check what a client sent,
// apply a tenant's limits or change something. It lists the methods the handlers call and
// nothing more, so the API depends on no concrete engine type and a test can serve it with a
// fake; *engine.Service (and so *engine.Engine) satisfies it.
type Service interface {
	Authenticate(ctx context.Context, secret string) (store.Token, error)
	Limits(ctx context.Context, tenantID string) (store.Limits, error)

	DeployWith(ctx context.Context, tenantID string, wasm []byte, opts engine.DeployOptions) (engine.DeployResult, error)
	UpgradeReport(ctx context.Context, tenantID, id string) (*engine.UpgradeReport, error)
	StartRun(ctx context.Context, tenantID string, req engine.StartRequest) (run store.Run, created bool, err error)
	ListRuns(ctx context.Context, tenantID string, f store.RunFilter) (runs []store.Run, next string, err error)
	CountRuns(ctx context.Context, tenantID string, f store.RunFilter) (map[store.RunStatus]int, error)
	CancelRun(ctx context.Context, tenantID, runID string, grace time.Duration) (store.Run, error)
	QueryRun(ctx context.Context, tenantID, runID, name string, arg json.RawMessage) (*engine.QueryAnswer, error)
	ReplayRun(ctx context.Context, tenantID, runID string, wasm []byte) (*engine.ReplayReport, error)
	ModuleFeatures(ctx context.Context, tenantID, digest string) ([]string, error)
	TerminateRun(ctx context.Context, tenantID, runID string) (store.Run, error)
	RestartRun(ctx context.Context, tenantID string, req engine.RestartRequest) (store.Run, error)
	PauseRun(ctx context.Context, tenantID, runID string) (store.Run, error)
	ResumeRun(ctx context.Context, tenantID, runID, version string) (store.Run, error)
	PauseWorkflow(ctx context.Context, tenantID, workflow, version string) (int, error)
	ResumeWorkflow(ctx context.Context, tenantID, workflow, version string) (int, error)
	WorkflowPauses(ctx context.Context, tenantID string) ([]store.WorkflowPause, error)
	ForkRun(ctx context.Context, tenantID string, req engine.RestartRequest) (store.Run, error)
	AwaitRun(ctx context.Context, tenantID, runID string) (store.Run, error)
	StartAndWait(ctx context.Context, tenantID string, req engine.StartRequest, wait time.Duration) (run store.Run, created bool, err error)
	Signal(ctx context.Context, tenantID string, req engine.SignalRequest) (store.SignalResult, error)
	SignalWithStart(ctx context.Context, tenantID string, req engine.SignalWithStartRequest) (store.SignalWithStartResult, error)
	Broadcast(ctx context.Context, tenantID string, req engine.BroadcastRequest) (store.BroadcastResult, error)

	CreateTenant(ctx context.Context, id string, limits store.Limits) (store.Tenant, store.Token, string, error)
	GetTenant(ctx context.Context, id string) (store.Tenant, error)
	SetTenantLimits(ctx context.Context, id string, limits store.Limits) (store.Tenant, error)
	CreateToken(ctx context.Context, tenantID, name string) (store.Token, string, error)
	ListTokens(ctx context.Context, tenantID string) ([]store.Token, error)
	RevokeToken(ctx context.Context, tenantID, tokenID string) (store.Token, error)

	PutSecret(ctx context.Context, tenantID, name string, value []byte) (store.Secret, error)
	DeleteSecret(ctx context.Context, tenantID, name string) error

	CreateSchedule(ctx context.Context, tenantID string, req engine.ScheduleRequest) (store.Schedule, error)
	PauseSchedule(ctx context.Context, tenantID, id string) (store.Schedule, error)
	ResumeSchedule(ctx context.Context, tenantID, id string) (store.Schedule, error)
	TriggerSchedule(ctx context.Context, tenantID, id string) (engine.TriggerResult, error)
	DeleteSchedule(ctx context.Context, tenantID, id string) error
	NextFireTimes(ctx context.Context, tenantID, id string, n int) ([]engine.FireTime, error)

	PutHook(ctx context.Context, tenantID string, req engine.HookRequest) (store.Hook, bool, []byte, error)
	DeleteHook(ctx context.Context, tenantID, id string) error
	RotateHookSecret(ctx context.Context, tenantID string) ([]byte, error)
}

// Reader is what the API reads from the store as it is, with no check or limit of the
// engine's between: the tenant comes from the request's token and scopes every read. Any
// store.Store satisfies it.
type Reader interface {
	GetRun(ctx context.Context, tenantID, runID string) (store.Run, error)
	ListSteps(ctx context.Context, tenantID, runID string) ([]store.Step, error)
	ListStepsFrom(ctx context.Context, tenantID, runID string, from, limit int) ([]store.Step, error)
	RunLease(ctx context.Context, tenantID, runID string) (owner string, expires *time.Time, err error)
	ListOutbound(ctx context.Context, tenantID, runID string) ([]store.OutboundRecord, error)
	ListRunLog(ctx context.Context, tenantID, runID string, after int64, limit int) ([]store.LogEntry, error)
	ListGuestLog(ctx context.Context, tenantID, runID string, after int64, limit int) ([]store.GuestLogLine, error)
	ListModules(ctx context.Context, tenantID string) ([]store.Module, error)
	ListWorkflows(ctx context.Context, tenantID string) ([]store.WorkflowSummary, error)
	ListTenants(ctx context.Context) ([]store.Tenant, error)
	ListSecrets(ctx context.Context, tenantID string) ([]store.Secret, error)
	GetSchedule(ctx context.Context, tenantID, id string) (store.Schedule, error)
	ListSchedules(ctx context.Context, tenantID string) ([]store.Schedule, error)
	ChildrenOf(ctx context.Context, tenantID, runID string) ([]store.ChildRef, error)
	ParentOf(ctx context.Context, tenantID, runID string) (store.ChildLink, bool, error)
	RunFlow(ctx context.Context, tenantID, runID string) (store.RunFlow, bool, error)
	RunTrigger(ctx context.Context, tenantID, runID string) (store.Trigger, error)
	ListHooks(ctx context.Context, tenantID string) ([]store.Hook, error)
	ListDeliveries(ctx context.Context, tenantID string, f store.DeliveryFilter) ([]store.HookDelivery, error)
}
