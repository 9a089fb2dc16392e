// A workflow's flow control and completion hooks (abi/ABI.md §7, a description's "flow" and
// "onEnd"), with the host's rules. The host checks a description when the module is uploaded
// and refuses the upload naming the fault; register applies the same rules (checkWorkflow), so
// a module that breaks them aborts its initialisation with the reason on stderr, which the
// host quotes in the upload's error, and a test can call checkWorkflow before any upload.

import { quote, Value } from "./json";

// Bounds of abi/ABI.md §7, as abi/flow.go and abi/hooks.go hold them.
export const MAX_FLOW_CONCURRENCY: i32 = 10000;
export const MAX_FLOW_RATE: i32 = 1000;
/** MAX_FLOW_PERIOD_MS bounds a rate's and a debounce's period: 7 days. */
export const MAX_FLOW_PERIOD_MS: i64 = 7 * 24 * 3600 * 1000;
export const MIN_PRIORITY: i32 = -600;
export const MAX_PRIORITY: i32 = 600;
export const MAX_HOOKS: i32 = 16;
export const MAX_WEBHOOK_URL_BYTES: i32 = 2048;
const MAX_NAME_LEN: i32 = 200;
const MAX_PATH_LEN: i32 = 200;
const MAX_PATH_SEGMENTS: i32 = 16;
const MAX_PATH_INDEX: i64 = 1000000;

/** Concurrency is Flow.concurrency: at most limit (1 to 10000) runs of one key at once. */
export class Concurrency {
  constructor(
    public key: string = "",
    public limit: i32 = 0,
  ) {}
}

/** Rate is Flow.rate: at most limit (1 to 1000) runs of one key start per periodMs (1 ms to 7 days). */
export class Rate {
  constructor(
    public key: string = "",
    public limit: i32 = 0,
    public periodMs: i64 = 0,
  ) {}
}

/** Debounce is Flow.debounce: starts of one key within periodMs (1 ms to 7 days) of each other make one run. */
export class Debounce {
  constructor(
    public key: string = "",
    public periodMs: i64 = 0,
  ) {}
}

/**
 * Flow is a workflow's flow control: how many of its runs may run at once per key, how many
 * may start per period per key, which starts replace a pending run, and the default priority
 * of its runs. A key is a path into the run's input ("$.customerId", "$.items[0].sku"); an
 * empty key is one key for the whole workflow. The host enforces it across every host that
 * shares its store.
 */
export class Flow {
  /** concurrency bounds the runs of a key started and not ended; a start past it waits. */
  concurrency: Concurrency | null = null;
  /** rate bounds the runs of a key that start per period; a start past it is delayed. */
  rate: Rate | null = null;
  /** debounce delays a start by its period; a later start of its key within it replaces the pending run's input. */
  debounce: Debounce | null = null;
  /** priority is a run's default head start in seconds (-600 to 600); a start may give its own. */
  priority: i32 = 0;

  /** toJSON is the ABI's Flow, as the Go SDK writes it: absent parts, empty keys and zeros left out. */
  toJSON(): Value {
    const v = Value.object();
    const c = this.concurrency;
    if (c != null) v.set("concurrency", part(c.key, c.limit, 0));
    const r = this.rate;
    if (r != null) v.set("rate", part(r.key, r.limit, r.periodMs));
    const d = this.debounce;
    if (d != null) v.set("debounce", part(d.key, 0, d.periodMs));
    if (this.priority != 0) v.setInt("priority", this.priority);
    return v;
  }

  /**
   * check applies abi/ABI.md §7 to the flow: limits, periods and the priority in range, key
   * paths that parse. It returns the fault, worded as the host's, or "" for none.
   */
  check(): string {
    const c = this.concurrency;
    if (c != null) {
      if (c.limit < 1 || c.limit > MAX_FLOW_CONCURRENCY) {
        return "flow.concurrency.limit " + c.limit.toString() + " out of range 1.." + MAX_FLOW_CONCURRENCY.toString();
      }
      const e = checkPath(c.key);
      if (e.length > 0) return "flow.concurrency.key: " + e;
    }
    const r = this.rate;
    if (r != null) {
      if (r.limit < 1 || r.limit > MAX_FLOW_RATE) {
        return "flow.rate.limit " + r.limit.toString() + " out of range 1.." + MAX_FLOW_RATE.toString();
      }
      let e = checkPeriod("flow.rate.periodMs", r.periodMs);
      if (e.length > 0) return e;
      e = checkPath(r.key);
      if (e.length > 0) return "flow.rate.key: " + e;
    }
    const d = this.debounce;
    if (d != null) {
      let e = checkPeriod("flow.debounce.periodMs", d.periodMs);
      if (e.length > 0) return e;
      e = checkPath(d.key);
      if (e.length > 0) return "flow.debounce.key: " + e;
    }
    if (this.priority < MIN_PRIORITY || this.priority > MAX_PRIORITY) {
      return "flow.priority " + this.priority.toString() + " out of range " + MIN_PRIORITY.toString() + ".." + MAX_PRIORITY.toString() + " (seconds)";
    }
    return "";
  }
}

function part(key: string, limit: i32, periodMs: i64): Value {
  const v = Value.object();
  if (key.length > 0) v.setString("key", key);
  if (limit != 0) v.setInt("limit", limit);
  if (periodMs != 0) v.setInt("periodMs", periodMs);
  return v;
}

function checkPeriod(what: string, ms: i64): string {
  if (ms < 1 || ms > MAX_FLOW_PERIOD_MS) return what + " " + ms.toString() + " out of range 1.." + MAX_FLOW_PERIOD_MS.toString();
  return "";
}

function isFieldChar(c: i32): bool {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || (c >= 0x30 && c <= 0x39) || c == 0x5f || c == 0x2d;
}

/**
 * checkPath parses a key path as the host does: "" (no key), or "$" followed by 1 to 16
 * segments, each ".field" (letters, digits, "_", "-") or "[index]" (0 to 1000000), at most 200
 * bytes in all. It returns the fault or "".
 */
function checkPath(s: string): string {
  if (s.length == 0) return "";
  const n = String.UTF8.byteLength(s);
  if (n > MAX_PATH_LEN) return "path is " + n.toString() + " bytes, the limit is " + MAX_PATH_LEN.toString();
  if (s.charCodeAt(0) != 0x24) return "path " + quote(s) + " does not start with $";
  let i = 1;
  let segments = 0;
  while (i < s.length) {
    if (segments == MAX_PATH_SEGMENTS) return "path " + quote(s) + " has more than " + MAX_PATH_SEGMENTS.toString() + " segments";
    const c = s.charCodeAt(i);
    if (c == 0x2e) {
      let end = i + 1;
      while (end < s.length && isFieldChar(s.charCodeAt(end))) end++;
      if (end == i + 1) return "path " + quote(s) + ": a field name after . must be letters, digits, _ or -";
      i = end;
    } else if (c == 0x5b) {
      const close = s.indexOf("]", i);
      if (close < i + 2) return "path " + quote(s) + ": [ must hold an array index";
      const inner = s.substring(i + 1, close);
      if (!isIndex(inner)) return "path " + quote(s) + ": [" + inner + "] is not an array index";
      i = close + 1;
    } else {
      return "path " + quote(s) + ": unexpected '" + String.fromCodePoint(s.codePointAt(i)) + "' (a path is $ then .field or [index] segments)";
    }
    segments++;
  }
  if (segments == 0) return "path " + quote(s) + " names the whole input; name a field of it";
  return "";
}

/** isIndex is the host's test of an array index (Go's strconv.Atoi, 0 to 1000000, no "+"): digits, or "-" before digits that read as zero. */
function isIndex(s: string): bool {
  const neg = s.startsWith("-");
  const digits = neg ? s.substring(1) : s;
  if (digits.length == 0) return false;
  let n: i64 = 0;
  for (let k = 0; k < digits.length; k++) {
    const c = digits.charCodeAt(k);
    if (c < 0x30 || c > 0x39) return false;
    n = n * 10 + <i64>(c - 0x30);
    if (n > MAX_PATH_INDEX) return false;
  }
  return !neg || n == 0;
}

/** RunEnd names the statuses a run ends with, which a hook may fire on. */
export namespace RunEnd {
  export const Completed = "completed";
  export const Failed = "failed";
  export const Cancelled = "cancelled";
}

/** HookStart names the workflow a hook starts; version "" starts its latest version when the run ends. */
export class HookStart {
  constructor(
    public workflow: string,
    public version: string = "",
  ) {}
}

/**
 * Hook is a completion hook (a workflow's onEnd): when a run of the workflow ends with a
 * status in when (RunEnd's), the host starts start's workflow with the ended run as input, or
 * POSTs the same to webhook, signed with the tenant's secret. Exactly one of start and webhook.
 * The ended run is {"runId", "workflow", "version", "status", "output", "error", "endedAt"}.
 * What a hook does never changes the ended run.
 */
export class Hook {
  when: string[] = [];
  start: HookStart | null = null;
  webhook: string = "";

  /** Hook.start starts workflow (at version, "" for its latest) when a run ends with a status in when. */
  static start(when: string[], workflow: string, version: string = ""): Hook {
    const h = new Hook();
    h.when = when;
    h.start = new HookStart(workflow, version);
    return h;
  }

  /** Hook.webhook POSTs the ended run to url when a run ends with a status in when. */
  static webhook(when: string[], url: string): Hook {
    const h = new Hook();
    h.when = when;
    h.webhook = url;
    return h;
  }

  /** toJSON is the ABI's Hook, as the Go SDK writes it. */
  toJSON(): Value {
    const v = Value.object();
    const w = Value.array();
    for (let i = 0; i < this.when.length; i++) w.push(Value.string(this.when[i]));
    v.set("when", w);
    const s = this.start;
    if (s != null) {
      const sv = Value.object().setString("workflow", s.workflow);
      if (s.version.length > 0) sv.setString("version", s.version);
      v.set("start", sv);
    }
    if (this.webhook.length > 0) v.setString("webhook", this.webhook);
    return v;
  }

  /**
   * check applies abi/ABI.md §7 to the hook: 1 to 3 distinct statuses of RunEnd's, exactly one
   * of a start (a workflow name and a version) and a webhook (an http or https URL). It
   * returns the fault, worded as the host's, or "".
   */
  check(): string {
    if (this.when.length == 0) return "when is empty: name at least one of completed, failed, cancelled";
    for (let i = 0; i < this.when.length; i++) {
      const s = this.when[i];
      if (s != RunEnd.Completed && s != RunEnd.Failed && s != RunEnd.Cancelled) {
        return "when: " + quote(truncate(s, 40)) + " is not one of completed, failed, cancelled";
      }
      for (let k = 0; k < i; k++) {
        if (this.when[k] == s) return "when: " + quote(s) + " is named twice";
      }
    }
    const start = this.start;
    if ((start == null) == (this.webhook.length == 0)) return "name exactly one of start and webhook";
    if (start != null) {
      const e = checkName("start workflow", start.workflow);
      if (e.length > 0) return e;
      return checkText("start version", start.version, MAX_NAME_LEN);
    }
    return checkWebhookURL(this.webhook);
  }
}

/** isControl is the host's set of control characters: C0, DEL and C1. */
function isControl(c: i32): bool {
  return c < 0x20 || (c >= 0x7f && c < 0xa0);
}

/** hasLoneSurrogate reports a string that is not valid UTF-16, so has no UTF-8 form the host could read. */
function hasLoneSurrogate(s: string): bool {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const next = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (next < 0xdc00 || next > 0xdfff) return true;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      return true;
    }
  }
  return false;
}

/** checkName is abi.CheckName: 1 to 200 bytes of UTF-8, no "#", no "/", no control character. */
export function checkName(what: string, name: string): string {
  if (name.length == 0) return what + " name is empty";
  const n = String.UTF8.byteLength(name);
  if (n > MAX_NAME_LEN) return what + " name is " + n.toString() + " bytes, the limit is " + MAX_NAME_LEN.toString();
  if (hasLoneSurrogate(name)) return what + " name is not valid UTF-8";
  if (name.includes("#")) return what + " name " + quote(name) + ' contains "#", which marks repeated steps';
  if (name.includes("/")) return what + " name " + quote(name) + ' contains "/"';
  for (let i = 0; i < name.length; i++) {
    const c = name.charCodeAt(i);
    if (isControl(c)) return what + " name " + quote(name) + " contains the control character " + unicode(c);
  }
  return "";
}

/** checkText is abi.CheckText: at most max bytes of UTF-8, no NUL. */
function checkText(what: string, s: string, max: i32): string {
  const n = String.UTF8.byteLength(s);
  if (n > max) return "not storable: " + what + " is " + n.toString() + " bytes, the limit is " + max.toString();
  if (hasLoneSurrogate(s)) return "not storable: " + what + " is not valid UTF-8";
  if (s.includes("\0")) return "not storable: " + what + " contains a NUL character";
  return "";
}

/** unicode writes a code unit as Go's %U does: U+ and at least four hex digits. */
function unicode(c: i32): string {
  let h = c.toString(16).toUpperCase();
  while (h.length < 4) h = "0" + h;
  return "U+" + h;
}

/** truncate is the host's: the first n characters and "...". */
function truncate(s: string, n: i32): string {
  return s.length <= n ? s : s.substring(0, n) + "...";
}

/**
 * checkWebhookURL is abi.CheckWebhookURL as far as a guest without Go's URL parser can follow
 * it: at most 2048 bytes, no NUL, control character or space, scheme http or https, a host, no
 * user information, no fragment. The host parses the URL too, and refuses at upload what its
 * parser refuses (a malformed port or escape, say).
 */
function checkWebhookURL(raw: string): string {
  const e = checkText("webhook URL", raw, MAX_WEBHOOK_URL_BYTES);
  if (e.length > 0) return e;
  for (let i = 0; i < raw.length; i++) {
    const c = raw.charCodeAt(i);
    if (isControl(c) || c == 0x20) return "webhook URL contains the character " + unicode(c);
  }
  const shown = quote(truncate(raw, 80));
  const sep = raw.indexOf("://");
  const scheme = sep < 0 ? "" : raw.substring(0, sep).toLowerCase();
  if (scheme != "http" && scheme != "https") return "webhook URL " + shown + ": the scheme must be http or https";
  const rest = raw.substring(sep + 3);
  let end = rest.length;
  for (let i = 0; i < rest.length; i++) {
    const c = rest.charCodeAt(i);
    if (c == 0x2f || c == 0x3f || c == 0x23) {
      end = i;
      break;
    }
  }
  const authority = rest.substring(0, end);
  // As Go's parser reads it: user information ends at the last "@"; an IPv6 host is in [].
  const at = authority.lastIndexOf("@");
  const hostPort = at < 0 ? authority : authority.substring(at + 1);
  let host: string;
  if (hostPort.startsWith("[")) {
    const close = hostPort.indexOf("]");
    host = close < 0 ? hostPort.substring(1) : hostPort.substring(1, close);
  } else {
    const colon = hostPort.indexOf(":");
    host = colon < 0 ? hostPort : hostPort.substring(0, colon);
  }
  if (host.length == 0) return "webhook URL " + shown + " has no host";
  if (at >= 0) return "webhook URL " + shown + " carries user information; sign with the tenant's secret instead";
  if (raw.includes("#")) return "webhook URL " + shown + " has a fragment";
  return "";
}
