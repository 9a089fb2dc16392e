// Outbound HTTP and secrets for step callbacks (abi/ABI.md §4.11, §4.12), mirroring
// guest-sdk/go/capabilities.go. Both work only inside a step callback, which is why they are
// methods of StepContext: outside one the host refuses them with code outside_step.

import * as raw from "./raw";
import { Failure } from "./errors";
import { Kind, parseBytes, stringify, Value } from "./json";
import { takeReply } from "./reply";

/** HttpRequest is an outbound request the host makes for a step callback. */
export class HttpRequest {
  method: string = "GET";
  url: string = "";
  /** headers map a name to its values, in the order they are added. */
  headers: Map<string, string[]> = new Map();
  body: Uint8Array | null = null;
  /** timeoutMs bounds the request below the host's own limit; 0 takes the host's. */
  timeoutMs: i64 = 0;

  /** header adds a header value and returns the request, for chaining. */
  header(name: string, value: string): HttpRequest {
    if (!this.headers.has(name)) this.headers.set(name, []);
    this.headers.get(name).push(value);
    return this;
  }

  /** text sets the body to the UTF-8 bytes of s and returns the request. */
  text(s: string): HttpRequest {
    this.body = Uint8Array.wrap(String.UTF8.encode(s));
    return this;
  }

  toJSON(): Value {
    const v = Value.object().setString("method", this.method).setString("url", this.url);
    const names = this.headers.keys();
    if (names.length > 0) {
      const h = Value.object();
      for (let i = 0; i < names.length; i++) {
        const vals = this.headers.get(names[i]);
        const a = Value.array();
        for (let k = 0; k < vals.length; k++) a.push(Value.string(vals[k]));
        h.set(names[i], a);
      }
      v.set("headers", h);
    }
    const b = this.body;
    if (b != null && b.length > 0) v.setString("body", base64Encode(b));
    if (this.timeoutMs > 0) v.setInt("timeoutMs", this.timeoutMs);
    return v;
  }
}

/** HttpResponse is what the host got back: any HTTP status, 4xx and 5xx included. */
export class HttpResponse {
  status: i32 = 0;
  headers: Map<string, string[]> = new Map();
  body: Uint8Array = new Uint8Array(0);

  /** header is the first value of a header, or "" (names as the host sent them, canonical). */
  header(name: string): string {
    if (!this.headers.has(name)) return "";
    const vals = this.headers.get(name);
    return vals.length > 0 ? vals[0] : "";
  }

  /** text is the body decoded as UTF-8. */
  text(): string {
    return String.UTF8.decode(this.body.buffer.slice(this.body.byteOffset, this.body.byteOffset + this.body.byteLength));
  }
}

/** HttpResult is a response, or the failure that kept the host from getting one. */
export class HttpResult {
  constructor(
    public response: HttpResponse | null,
    public error: Failure | null,
  ) {}

  get ok(): bool {
    return this.error == null;
  }
}

/** SecretResult is a secret's value, or the host's refusal. */
export class SecretResult {
  constructor(
    public value: string,
    public error: Failure | null,
  ) {}

  get ok(): bool {
    return this.error == null;
  }
}

/**
 * httpRequest makes an outbound HTTP request. A refusal or a failure to get a response is a
 * Failure with the host's code (http_denied, http_timeout, http_too_large, http_failed,
 * outside_step); any HTTP status, 500 included, is a response.
 */
export function httpRequest(req: HttpRequest): HttpResult {
  const b = String.UTF8.encode(stringify(req.toJSON()));
  const reply = raw.http_request(changetype<usize>(b), b.byteLength);
  const status = raw.replyStatus(reply);
  const data = takeReply(reply);
  if (status == raw.STATUS_ERROR) return new HttpResult(null, hostFailure(data));
  if (status != raw.STATUS_OK) return new HttpResult(null, new Failure("http_failed", "unexpected reply status " + status.toString()));
  const p = parseBytes(data);
  if (!p.ok || p.value.kind != Kind.Object) {
    return new HttpResult(null, new Failure("http_failed", "the host's response is not valid JSON: " + p.error));
  }
  const resp = new HttpResponse();
  const st = p.value.get("status");
  if (st != null) resp.status = <i32>st.asInt();
  const h = p.value.get("headers");
  if (h != null) {
    const names = h.keys();
    for (let i = 0; i < names.length; i++) {
      const arr = h.get(names[i])!;
      const vals = new Array<string>();
      for (let k = 0; k < arr.length; k++) vals.push(arr.at(k)!.asString());
      resp.headers.set(names[i], vals);
    }
  }
  const body = p.value.get("body");
  if (body != null && body.kind == Kind.String) {
    const decoded = base64Decode(body.asString());
    if (decoded == null) return new HttpResult(null, new Failure("http_failed", "the host's response body is not valid base64"));
    resp.body = decoded;
  }
  return new HttpResult(resp, null);
}

/**
 * secretGet returns one of the tenant's secrets. The host redacts the value from the step's
 * result, logs and errors of this pass, so keep it out of what the step returns: a replay
 * would see "[redacted]" where the first pass saw the value.
 */
export function secretGet(name: string): SecretResult {
  const nb = String.UTF8.encode(name);
  const reply = raw.secret_get(changetype<usize>(nb), nb.byteLength);
  const status = raw.replyStatus(reply);
  const data = takeReply(reply);
  if (status == raw.STATUS_ERROR) return new SecretResult("", hostFailure(data));
  if (status != raw.STATUS_OK) return new SecretResult("", new Failure("host_error", "unexpected reply status " + status.toString()));
  return new SecretResult(String.UTF8.decode(data), null);
}

/**
 * EventResult is what became of an event a step sent (the host's EventSent JSON: to a run,
 * {"state": "delivered" | "buffered"}; to the tenant, {"resolved": N, "started": [...]};
 * "duplicate": true for a send an earlier attempt made), or the host's refusal (code
 * event_refused: no such run, the run ended, its buffer is full, the payload over the limit).
 */
export class EventResult {
  constructor(
    public value: Value,
    public error: Failure | null,
  ) {}

  get ok(): bool {
    return this.error == null;
  }
}

/**
 * eventSend sends an event within the tenant (abi/ABI.md §4.13): to one run (runId) or, with
 * runId "", to the whole tenant as a broadcast. It lands once however often the callback runs,
 * as long as the callback makes its sends in the same order.
 */
export function eventSend(runId: string, event: string, payload: Value): EventResult {
  const req = Value.object().setString("event", event).set("payload", payload);
  if (runId.length > 0) req.setString("runId", runId);
  else req.setBool("broadcast", true);
  const b = String.UTF8.encode(stringify(req));
  const reply = raw.event_send(changetype<usize>(b), b.byteLength);
  const status = raw.replyStatus(reply);
  const data = takeReply(reply);
  if (status == raw.STATUS_ERROR) return new EventResult(Value.null(), hostFailure(data));
  if (status != raw.STATUS_OK) return new EventResult(Value.null(), new Failure("event_refused", "unexpected reply status " + status.toString()));
  const p = parseBytes(data);
  if (!p.ok) return new EventResult(Value.null(), new Failure("event_refused", "the host's answer is not valid JSON: " + p.error));
  return new EventResult(p.value, null);
}

function hostFailure(data: ArrayBuffer): Failure {
  const text = String.UTF8.decode(data);
  const p = parseBytes(data);
  const m = p.value.get("message");
  if (!p.ok || m == null || m.asString().length == 0) return new Failure("host_error", text);
  return Failure.fromInfo(p.value, text);
}

// ---- base64 (standard alphabet, padded), as Go's encoding/json writes []byte

const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

export function base64Encode(b: Uint8Array): string {
  const parts = new Array<string>();
  let i = 0;
  for (; i + 2 < b.length; i += 3) {
    const n = (<u32>b[i] << 16) | (<u32>b[i + 1] << 8) | <u32>b[i + 2];
    parts.push(alphabet.charAt(n >> 18) + alphabet.charAt((n >> 12) & 63) + alphabet.charAt((n >> 6) & 63) + alphabet.charAt(n & 63));
  }
  const rest = b.length - i;
  if (rest == 1) {
    const n = <u32>b[i] << 16;
    parts.push(alphabet.charAt(n >> 18) + alphabet.charAt((n >> 12) & 63) + "==");
  } else if (rest == 2) {
    const n = (<u32>b[i] << 16) | (<u32>b[i + 1] << 8);
    parts.push(alphabet.charAt(n >> 18) + alphabet.charAt((n >> 12) & 63) + alphabet.charAt((n >> 6) & 63) + "=");
  }
  return parts.join("");
}

function sextet(c: i32): i32 {
  if (c >= 0x41 && c <= 0x5a) return c - 0x41;
  if (c >= 0x61 && c <= 0x7a) return c - 0x61 + 26;
  if (c >= 0x30 && c <= 0x39) return c - 0x30 + 52;
  if (c == 0x2b) return 62;
  if (c == 0x2f) return 63;
  return -1;
}

/** base64Decode decodes padded standard base64, or returns null for anything else. */
export function base64Decode(s: string): Uint8Array | null {
  if (s.length % 4 != 0) return null;
  let pad = 0;
  if (s.length > 0 && s.charCodeAt(s.length - 1) == 0x3d) pad++;
  if (s.length > 1 && s.charCodeAt(s.length - 2) == 0x3d) pad++;
  const out = new Uint8Array((s.length / 4) * 3 - pad);
  let o = 0;
  for (let i = 0; i < s.length; i += 4) {
    let n: u32 = 0;
    for (let k = 0; k < 4; k++) {
      const c = s.charCodeAt(i + k);
      let d = 0;
      if (c == 0x3d && i + 4 == s.length && k >= 4 - pad) {
        d = 0;
      } else {
        d = sextet(c);
        if (d < 0) return null;
      }
      n = (n << 6) | <u32>d;
    }
    if (o < out.length) out[o++] = <u8>(n >> 16);
    if (o < out.length) out[o++] = <u8>(n >> 8);
    if (o < out.length) out[o++] = <u8>n;
  }
  return out;
}
