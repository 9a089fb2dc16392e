// The clock and the random source, through WASI as the host defines them for determinism
// (abi/ABI.md §6): outside step callbacks, the time of the latest journal entry reached and a
// stream seeded from the run id, the same on every replay; inside callbacks, real time and
// real randomness. AssemblyScript's own Date.now and Math.random import from module env,
// which the host refuses, so a workflow uses these instead.

@external("wasi_snapshot_preview1", "clock_time_get")
declare function clock_time_get(id: u32, precision: u64, time: usize): u16;

@external("wasi_snapshot_preview1", "random_get")
declare function random_get(buf: usize, len: usize): u16;

const realtime: u32 = 0;

/** nowMs is the current Unix time in milliseconds, deterministic outside step callbacks. */
export function nowMs(): i64 {
  const b = new ArrayBuffer(8);
  clock_time_get(realtime, 1000, changetype<usize>(b));
  return load<i64>(changetype<usize>(b)) / 1_000_000;
}

/** randomBytes returns n random bytes, deterministic outside step callbacks. */
export function randomBytes(n: i32): Uint8Array {
  const out = new Uint8Array(n);
  if (n > 0) random_get(out.dataStart, n);
  return out;
}

/** random is a uniform number in [0, 1), like Math.random, deterministic outside callbacks. */
export function random(): f64 {
  const b = randomBytes(8);
  const bits = load<u64>(b.dataStart) >>> 11; // 53 random bits
  return <f64>bits / 9007199254740992.0;
}
