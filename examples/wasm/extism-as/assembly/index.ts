// The example workflows (onboarding, order-saga, poll, steps) as an Extism plug-in written in
// AssemblyScript with @extism/as-pdk: the exports of abi/ABI.md, "Extism modules". The
// workflows are in workflows.ts, the helper layer over the host functions in wf.ts.

import { Config, Host } from "@extism/as-pdk";
import { parse } from "./json";
import { ErrorInfo, Result, finish, logError } from "./wf";
import { workflows } from "./workflows";

export function wfhost_abi_version(): i32 {
  return 1;
}

export function wfhost_describe(): i32 {
  const decls: string[] = [];
  for (let i = 0; i < workflows.length; i++) {
    // A declaration the host would refuse traps here, naming the fault in the log.
    const fault = workflows[i].check();
    if (fault.length > 0) abort("wfhost: " + fault, null, 0, 0);
    decls.push(workflows[i].toJSON());
  }
  // features: these workflows handle a cancellation (abi/ABI.md §4.15) and answer queries (§4.17).
  Host.output(Uint8Array.wrap(String.UTF8.encode('{"workflows":[' + decls.join(",") + '],"features":["cancel","query"]}')));
  return 0;
}

export function wfhost_run(): i32 {
  const name = Config.get("wfhost.workflow");
  const wanted = name == null ? "" : name;
  for (let i = 0; i < workflows.length; i++) {
    if (workflows[i].name != wanted) continue;
    const input = parse(Host.inputString());
    if (input == null) {
      const e = ErrorInfo.of("invalid_input", "decode workflow input: not valid JSON");
      e.nonRetryable = true;
      finish(Result.err(e));
      return 0;
    }
    finish(workflows[i].run(input));
    return 0;
  }
  finish(Result.err(ErrorInfo.of("unknown_workflow", "this module has no workflow " + wanted)));
  return 0;
}

// abort is AssemblyScript's failure handler (asconfig.json "use"): it logs why and traps, so
// the run fails with code trap.
export function abort(message: string | null, fileName: string | null, line: u32, column: u32): void {
  const what = message != null ? message : "";
  const where = fileName != null ? fileName : "";
  logError("abort: " + what + " at " + where + ":" + line.toString() + ":" + column.toString());
  unreachable();
}
