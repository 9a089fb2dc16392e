import { Kind, kindName, Value } from "./json";

/**
 * Failure is an error with a code, for steps and workflows; it is how errors cross the ABI
 * (ErrorInfo, abi/ABI.md §5). AssemblyScript has no exceptions to catch, so callbacks and
 * workflow bodies return failures as values inside a Result.
 */
/** CODE_CANCELLED is the code of a cancellation's error (abi/ABI.md §4.15). */
export const CODE_CANCELLED = "cancelled";

export class Failure {
  /** nonRetryable fails a step at once, without the retries its policy would allow. */
  nonRetryable: bool = false;
  /** step names the step whose final failure this is, or is "" for any other failure. */
  step: string = "";
  /** details is any JSON attached to the error. */
  details: Value | null = null;

  constructor(
    public code: string,
    public message: string,
  ) {}

  /**
   * isCancelled says whether this is the run's cancellation, as a step, a sleep or a wait
   * returns it once the run is cancelled (abi/ABI.md §4.15). A workflow that sees it may run
   * compensation steps, which run as usual, and then return it: the run ends cancelled.
   */
  get isCancelled(): bool {
    return this.code == CODE_CANCELLED;
  }

  /** final marks the failure non-retryable and returns it. */
  final(): Failure {
    this.nonRetryable = true;
    return this;
  }

  /** toString is "code: message", and for a step's failure "step NAME failed: code: message". */
  toString(): string {
    const plain = this.code.length == 0 ? this.message : this.code + ": " + this.message;
    return this.step.length == 0 ? plain : "step " + this.step + " failed: " + plain;
  }

  /**
   * toInfo is the failure as an ErrorInfo. A step's failure keeps its code and carries its
   * full description as the message, so a workflow that returns it says which step failed.
   */
  toInfo(): Value {
    const v = Value.object();
    if (this.code.length > 0) v.setString("code", this.code);
    v.setString("message", this.step.length == 0 ? this.message : this.toString());
    if (this.nonRetryable && this.step.length == 0) v.setBool("nonRetryable", true);
    const d = this.details;
    if (d != null) v.set("details", d);
    return v;
  }

  /** fromInfo reads an ErrorInfo; text that is not one becomes the message. */
  static fromInfo(info: Value, raw: string): Failure {
    const code = info.get("code");
    const msg = info.get("message");
    if (info.kind != Kind.Object || (msg == null && code == null)) return new Failure("", raw);
    const f = new Failure(code == null ? "" : code.asString(), msg == null ? "" : msg.asString());
    const nr = info.get("nonRetryable");
    f.nonRetryable = nr != null && nr.asBool();
    const d = info.get("details");
    if (d != null && !d.isNull) f.details = d;
    return f;
  }
}

/** Result is what a step callback or a workflow body returns: a value or a failure. */
export class Result {
  constructor(
    public value: Value,
    public error: Failure | null,
  ) {}

  static ok(v: Value): Result {
    return new Result(v, null);
  }

  static err(e: Failure): Result {
    return new Result(Value.null(), e);
  }

  /** fail is err(new Failure(code, message)). */
  static fail(code: string, message: string): Result {
    return new Result(Value.null(), new Failure(code, message));
  }

  get ok(): bool {
    return this.error == null;
  }
}

/**
 * Fields reads typed members of a JSON object, the way Go's decoder fills a struct: a missing or
 * null member takes the default, a member of the wrong type records an invalid_input failure
 * (the first one wins) and also takes the default. Check error once after reading.
 */
export class Fields {
  error: Failure | null = null;

  /** what names the value in error messages, e.g. "workflow input". */
  constructor(
    public value: Value,
    public what: string,
  ) {
    if (!value.isNull && value.kind != Kind.Object) {
      this.mismatch("", "an object", value);
    }
  }

  private member(key: string, want: Kind): Value | null {
    const v = this.value.get(key);
    if (v == null || v.isNull) return null;
    if (v.kind != want) {
      this.mismatch(key, "a " + kindName(want), v);
      return null;
    }
    return v;
  }

  private mismatch(key: string, want: string, got: Value): void {
    if (this.error != null) return;
    const where = key.length == 0 ? "" : " field \"" + key + "\":";
    this.error = new Failure("invalid_input", "decode " + this.what + ":" + where + " want " + want + ", got " + kindName(got.kind)).final();
  }

  string(key: string, def: string = ""): string {
    const v = this.member(key, Kind.String);
    return v == null ? def : v.asString();
  }

  bool(key: string, def: bool = false): bool {
    const v = this.member(key, Kind.Bool);
    return v == null ? def : v.asBool();
  }

  number(key: string, def: f64 = 0): f64 {
    const v = this.member(key, Kind.Number);
    return v == null ? def : v.asNumber();
  }

  /** int is an integer member; a fraction is an error, as Go's decoder says for an int field. */
  int(key: string, def: i64 = 0): i64 {
    const v = this.member(key, Kind.Number);
    if (v == null) return def;
    const n = v.asNumber();
    if (n != Math.floor(n) || Math.abs(n) > 9007199254740992) {
      this.mismatch(key, "an integer", v);
      return def;
    }
    return <i64>n;
  }

  /** any is the member as it is, or null when absent. */
  any(key: string): Value | null {
    return this.value.get(key);
  }
}
