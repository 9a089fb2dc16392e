package host

import (
	"context"
	"encoding/json"

	"github.com/tetratelabs/wazero/api"

	"github.com/wfhost/wfhost/abi"
)

// EventSender is a Handler that serves event_send (ABI.md §4.13): SendEvent sends req within
// the run's tenant, with n the send's index within the running callback (1, 2, ...), from
// which, with the run and the step's key, it derives the send's idempotency id. refused is set
// when the event was not taken for a reason the guest may handle (ErrorInfo code
// abi.CodeEventRefused); err stops the pass (the store unreachable).
type EventSender interface {
	SendEvent(ctx context.Context, req abi.EventSend, n int) (sent abi.EventSent, refused string, err error)
}

func (st *state) eventSend(ctx context.Context, mem api.Memory, reqArg span) Reply {
	raw := st.read(mem, abi.FuncEventSend, reqArg, st.limits.MaxStepOutputBytes+abi.MaxOptionsBytes, "request")
	if !st.inStep {
		return capabilityError(abi.CodeOutsideStep, "event_send is allowed only inside a step callback: a send outside one would be made again by every replay")
	}
	req, err := abi.DecodeEventSend(raw)
	if err != nil {
		st.violation("%s: %v", abi.FuncEventSend, err)
	}
	sender, ok := st.handler.(EventSender)
	if !ok {
		return capabilityError(abi.CodeEventRefused, "no events can be sent from this activation")
	}
	// What leaves the pass is redacted like everything else it writes (ABI.md §4.12).
	req.Payload = st.redactJSON(req.Payload)
	st.sends++
	sent, refused, err := sender.SendEvent(ctx, req, st.sends)
	if err != nil {
		st.stop(err)
	}
	if refused != "" {
		return capabilityError(abi.CodeEventRefused, "%s", refused)
	}
	data, _ := json.Marshal(sent)
	return Reply{Status: abi.StatusOK, Data: data}
}
