// The example workflows, in the order the Go module registers them (its files in name order),
// so that both modules describe themselves the same way.
import "./onboarding";
import "./poll";
import "./relay";
import "./saga";
import "./steps";
import "./ticker";
import "./timeouts";
import "./pausing"; // as the Go module registers it: charge-or-pause, then child and parent
import "./children";
import "./parallel"; // workflows_parallel.go, after workflows_children.go
import "./digest"; // workflows_with_flow.go

// The ABI's exports (abi/ABI.md §3) come from the SDK.
export * from "wfhost-as/exports";
