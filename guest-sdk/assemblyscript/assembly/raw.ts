// The wfhost host functions of abi/ABI.md §4, as the module imports them. Pointers are offsets
// in this module's memory and lengths count bytes; every name and payload is UTF-8. Replies
// pack a Status in the low 32 bits and the length of pending data in the high 32 bits (§4.1).
// The rest of the SDK is built on these; a guest may call them directly too.

/** ABI is the ABI version this SDK speaks (abi/ABI.md). */
export const ABI: i32 = 1;

// Reply statuses (§4.1).
export const STATUS_OK: i32 = 0;
export const STATUS_EXECUTE: i32 = 1;
export const STATUS_STEP_FAILED: i32 = 2;
export const STATUS_TIMEOUT: i32 = 3;
export const STATUS_ERROR: i32 = 4;
export const STATUS_CANCELLED: i32 = 5;
export const STATUS_QUERY: i32 = 6;
export const STATUS_BRANCH: i32 = 7;

// step_done outcomes (§4.5).
export const OUTCOME_OK: i32 = 0;
export const OUTCOME_ERROR: i32 = 1;

// log levels (§4.9).
export const LOG_DEBUG: i32 = -1;
export const LOG_INFO: i32 = 0;
export const LOG_WARN: i32 = 1;
export const LOG_ERROR: i32 = 2;

@external("wfhost", "step_run")
export declare function step_run(namePtr: usize, nameLen: u32, optsPtr: usize, optsLen: u32): u64;

@external("wfhost", "step_done")
export declare function step_done(outcome: i32, dataPtr: usize, dataLen: u32): u64;

@external("wfhost", "sleep")
export declare function sleep(namePtr: usize, nameLen: u32, durationMs: i64): u64;

@external("wfhost", "sleep_until")
export declare function sleep_until(namePtr: usize, nameLen: u32, unixMs: i64): u64;

@external("wfhost", "wait_event")
export declare function wait_event(namePtr: usize, nameLen: u32, optsPtr: usize, optsLen: u32): u64;

@external("wfhost", "take")
export declare function take(ptr: usize, len: u32): void;

@external("wfhost", "log")
export declare function log(level: i32, msgPtr: usize, msgLen: u32): void;

@external("wfhost", "complete")
export declare function complete(ptr: usize, len: u32): void;

@external("wfhost", "fail")
export declare function fail(ptr: usize, len: u32): void;

@external("wfhost", "http_request")
export declare function http_request(reqPtr: usize, reqLen: u32): u64;

@external("wfhost", "secret_get")
export declare function secret_get(namePtr: usize, nameLen: u32): u64;

@external("wfhost", "event_send")
export declare function event_send(reqPtr: usize, reqLen: u32): u64;

@external("wfhost", "continue_as_new")
export declare function continue_as_new(reqPtr: usize, reqLen: u32): void;

@external("wfhost", "child_run")
export declare function child_run(namePtr: usize, nameLen: u32, reqPtr: usize, reqLen: u32): u64;
@external("wfhost", "query_respond")
export declare function query_respond(outcome: i32, dataPtr: usize, dataLen: u32): void;

@external("wfhost", "parallel_run")
export declare function parallel_run(namePtr: usize, nameLen: u32, reqPtr: usize, reqLen: u32): u64;

@external("wfhost", "branch_done")
export declare function branch_done(outcome: i32, dataPtr: usize, dataLen: u32): void;

/** replyStatus is the Status of a reply. */
export function replyStatus(reply: u64): i32 {
  return <i32>(<u32>reply);
}

/** replyLen is the length of a reply's pending data. */
export function replyLen(reply: u64): u32 {
  return <u32>(reply >>> 32);
}
