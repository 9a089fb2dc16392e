//! The wfhost host functions (abi/ABI.md §4) and the reply protocol around them (§4.1).
//!
//! Off wasm32 the functions are stubs that panic, so the crate's unit tests build and run on
//! the developer's machine; nothing there calls them.

/// Reply statuses of abi/ABI.md §4.1; the SDK keeps its own copy so a guest needs nothing else.
pub(crate) const STATUS_OK: i32 = 0;
pub(crate) const STATUS_EXECUTE: i32 = 1;
pub(crate) const STATUS_STEP_FAILED: i32 = 2;
pub(crate) const STATUS_TIMEOUT: i32 = 3;
pub(crate) const STATUS_ERROR: i32 = 4;
pub(crate) const STATUS_CANCELLED: i32 = 5;
pub(crate) const STATUS_QUERY: i32 = 6;
pub(crate) const STATUS_BRANCH: i32 = 7;

pub(crate) const OUTCOME_OK: u32 = 0;
pub(crate) const OUTCOME_ERROR: u32 = 1;

#[cfg(target_arch = "wasm32")]
mod imports {
    // The Rust names carry a prefix so that they cannot collide with symbols of the same name
    // elsewhere in the link (compiler-builtins defines `log`); link_name keeps the ABI's names.
    #[link(wasm_import_module = "wfhost")]
    extern "C" {
        #[link_name = "step_run"]
        pub fn wfhost_step_run(name_ptr: u32, name_len: u32, opts_ptr: u32, opts_len: u32) -> u64;
        #[link_name = "step_done"]
        pub fn wfhost_step_done(outcome: u32, data_ptr: u32, data_len: u32) -> u64;
        #[link_name = "sleep"]
        pub fn wfhost_sleep(name_ptr: u32, name_len: u32, duration_ms: i64) -> u64;
        #[link_name = "sleep_until"]
        pub fn wfhost_sleep_until(name_ptr: u32, name_len: u32, unix_ms: i64) -> u64;
        #[link_name = "wait_event"]
        pub fn wfhost_wait_event(name_ptr: u32, name_len: u32, opts_ptr: u32, opts_len: u32)
            -> u64;
        #[link_name = "take"]
        pub fn wfhost_take(ptr: u32, len: u32);
        #[link_name = "log"]
        pub fn wfhost_log(level: i32, ptr: u32, len: u32);
        #[link_name = "complete"]
        pub fn wfhost_complete(ptr: u32, len: u32);
        #[link_name = "fail"]
        pub fn wfhost_fail(ptr: u32, len: u32);
        #[link_name = "http_request"]
        pub fn wfhost_http_request(req_ptr: u32, req_len: u32) -> u64;
        #[link_name = "secret_get"]
        pub fn wfhost_secret_get(name_ptr: u32, name_len: u32) -> u64;
        #[link_name = "event_send"]
        pub fn wfhost_event_send(req_ptr: u32, req_len: u32) -> u64;
        #[link_name = "continue_as_new"]
        pub fn wfhost_continue_as_new(req_ptr: u32, req_len: u32);
        #[link_name = "child_run"]
        pub fn wfhost_child_run(name_ptr: u32, name_len: u32, req_ptr: u32, req_len: u32) -> u64;
        #[link_name = "query_respond"]
        pub fn wfhost_query_respond(outcome: u32, data_ptr: u32, data_len: u32);
        #[link_name = "parallel_run"]
        pub fn wfhost_parallel_run(name_ptr: u32, name_len: u32, req_ptr: u32, req_len: u32)
            -> u64;
        #[link_name = "branch_done"]
        pub fn wfhost_branch_done(outcome: u32, data_ptr: u32, data_len: u32);
    }

    // stderr, for panic messages only: the host puts the last stderr lines into a trap's
    // error, which is where a reader of a failed run looks (abi/ABI.md §2, step 5).
    #[link(wasm_import_module = "wasi_snapshot_preview1")]
    extern "C" {
        #[link_name = "fd_write"]
        pub fn wasi_fd_write(fd: u32, iovs: u32, iovs_len: u32, nwritten: u32) -> u32;
    }
}

#[cfg(not(target_arch = "wasm32"))]
#[allow(clippy::missing_safety_doc)]
mod imports {
    fn outside() -> ! {
        panic!("wfhost host functions exist only in a wasm32 guest")
    }
    pub unsafe fn wfhost_step_run(_: u32, _: u32, _: u32, _: u32) -> u64 {
        outside()
    }
    pub unsafe fn wfhost_step_done(_: u32, _: u32, _: u32) -> u64 {
        outside()
    }
    pub unsafe fn wfhost_sleep(_: u32, _: u32, _: i64) -> u64 {
        outside()
    }
    pub unsafe fn wfhost_sleep_until(_: u32, _: u32, _: i64) -> u64 {
        outside()
    }
    pub unsafe fn wfhost_wait_event(_: u32, _: u32, _: u32, _: u32) -> u64 {
        outside()
    }
    pub unsafe fn wfhost_take(_: u32, _: u32) {
        outside()
    }
    pub unsafe fn wfhost_log(_: i32, _: u32, _: u32) {
        outside()
    }
    pub unsafe fn wfhost_complete(_: u32, _: u32) {
        outside()
    }
    pub unsafe fn wfhost_fail(_: u32, _: u32) {
        outside()
    }
    pub unsafe fn wfhost_http_request(_: u32, _: u32) -> u64 {
        outside()
    }
    pub unsafe fn wfhost_secret_get(_: u32, _: u32) -> u64 {
        outside()
    }
    pub unsafe fn wfhost_event_send(_: u32, _: u32) -> u64 {
        outside()
    }
    pub unsafe fn wfhost_query_respond(_: u32, _: u32, _: u32) {
        outside()
    }
    pub unsafe fn wfhost_continue_as_new(_: u32, _: u32) {
        outside()
    }
    pub unsafe fn wfhost_child_run(_: u32, _: u32, _: u32, _: u32) -> u64 {
        outside()
    }
    pub unsafe fn wfhost_parallel_run(_: u32, _: u32, _: u32, _: u32) -> u64 {
        outside()
    }
    pub unsafe fn wfhost_branch_done(_: u32, _: u32, _: u32) {
        outside()
    }
    pub unsafe fn wasi_fd_write(_: u32, _: u32, _: u32, _: u32) -> u32 {
        outside()
    }
}

use imports::*;

/// ptr is the memory offset of b's first byte, 0 for an empty slice. On wasm32 an address fits
/// u32 exactly.
fn ptr(b: &[u8]) -> u32 {
    if b.is_empty() {
        0
    } else {
        b.as_ptr() as usize as u32
    }
}

fn len(b: &[u8]) -> u32 {
    b.len() as u32
}

/// Reply is a host reply with its pending data collected.
pub(crate) struct Reply {
    pub status: i32,
    pub data: Vec<u8>,
}

/// collect splits a reply and takes its pending data, which must happen before the next host
/// call (§4.1).
fn collect(reply: u64) -> Reply {
    let status = reply as u32 as i32;
    let n = (reply >> 32) as u32;
    let mut data = Vec::new();
    if n > 0 {
        data = vec![0u8; n as usize];
        // SAFETY: data is n writable bytes of this module's memory.
        unsafe { wfhost_take(ptr(&data), n) };
    }
    Reply { status, data }
}

// Each wrapper below is safe: the host only reads the slices it is given (and writes, through
// take, only into the buffer collect owns), and traps on anything else.

pub(crate) fn step_run(name: &str, opts: &[u8]) -> Reply {
    let n = name.as_bytes();
    collect(unsafe { wfhost_step_run(ptr(n), len(n), ptr(opts), len(opts)) })
}

pub(crate) fn step_done(outcome: u32, data: &[u8]) -> Reply {
    collect(unsafe { wfhost_step_done(outcome, ptr(data), len(data)) })
}

pub(crate) fn sleep(name: &str, duration_ms: i64) -> Reply {
    let n = name.as_bytes();
    collect(unsafe { wfhost_sleep(ptr(n), len(n), duration_ms) })
}

pub(crate) fn sleep_until(name: &str, unix_ms: i64) -> Reply {
    let n = name.as_bytes();
    collect(unsafe { wfhost_sleep_until(ptr(n), len(n), unix_ms) })
}

pub(crate) fn wait_event(name: &str, opts: &[u8]) -> Reply {
    let n = name.as_bytes();
    collect(unsafe { wfhost_wait_event(ptr(n), len(n), ptr(opts), len(opts)) })
}

pub(crate) fn child_run(name: &str, req: &[u8]) -> Reply {
    let n = name.as_bytes();
    collect(unsafe { wfhost_child_run(ptr(n), len(n), ptr(req), len(req)) })
}

pub(crate) fn parallel_run(name: &str, req: &[u8]) -> Reply {
    let n = name.as_bytes();
    collect(unsafe { wfhost_parallel_run(ptr(n), len(n), ptr(req), len(req)) })
}

/// branch_done never returns: the host ends the branch's pass in the call (abi/ABI.md §4.18).
pub(crate) fn branch_done(outcome: u32, data: &[u8]) -> ! {
    unsafe { wfhost_branch_done(outcome, ptr(data), len(data)) };
    panic!("branch_done returned: the host did not end the pass")
}

pub(crate) fn log(level: i32, msg: &str) {
    let m = msg.as_bytes();
    unsafe { wfhost_log(level, ptr(m), len(m)) }
}

/// stderr writes msg to the guest's stderr, which the host logs line by line and quotes in
/// the error of a trap.
pub(crate) fn stderr(msg: &str) {
    let mut rest = msg.as_bytes();
    while !rest.is_empty() {
        let iov = [ptr(rest), len(rest)];
        let mut written = 0u32;
        let errno = unsafe {
            wasi_fd_write(
                2,
                iov.as_ptr() as usize as u32,
                1,
                &mut written as *mut u32 as usize as u32,
            )
        };
        if errno != 0 || written == 0 {
            return;
        }
        rest = &rest[(written as usize).min(rest.len())..];
    }
}

pub(crate) fn complete(output: &[u8]) {
    unsafe { wfhost_complete(ptr(output), len(output)) }
}

pub(crate) fn fail(info: &[u8]) {
    unsafe { wfhost_fail(ptr(info), len(info)) }
}

pub(crate) fn http_request(req: &[u8]) -> Reply {
    collect(unsafe { wfhost_http_request(ptr(req), len(req)) })
}

pub(crate) fn secret_get(name: &str) -> Reply {
    let n = name.as_bytes();
    collect(unsafe { wfhost_secret_get(ptr(n), len(n)) })
}

/// continue_as_new never returns: the host ends the pass in the call (abi/ABI.md §4.14).
pub(crate) fn continue_as_new(req: &[u8]) -> ! {
    unsafe { wfhost_continue_as_new(ptr(req), len(req)) };
    panic!("continue_as_new returned: the host did not end the run")
}

pub(crate) fn event_send(req: &[u8]) -> Reply {
    collect(unsafe { wfhost_event_send(ptr(req), len(req)) })
}

/// query_respond never returns: the host ends the query's pass in the call (abi/ABI.md §4.17).
pub(crate) fn query_respond(outcome: u32, data: &[u8]) -> ! {
    unsafe { wfhost_query_respond(outcome, ptr(data), len(data)) };
    panic!("query_respond returned: the host did not end the pass")
}
