import * as raw from "./raw";

/** takeReply collects the data a host reply left pending (an empty buffer when there is none). */
export function takeReply(reply: u64): ArrayBuffer {
  const n = raw.replyLen(reply);
  const buf = new ArrayBuffer(<i32>n);
  if (n > 0) raw.take(changetype<usize>(buf), n);
  return buf;
}
