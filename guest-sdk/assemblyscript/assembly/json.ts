// A small JSON value type with its own parser and serializer. AssemblyScript has no reflection,
// so a typed encoder would need a compiler transform per type; a dynamic value with typed
// accessors keeps the SDK free of transforms and of imports beyond the ABI's (RATIONALE.md).

/** Kind is the JSON type of a Value. */
export enum Kind {
  Null,
  Bool,
  Number,
  String,
  Array,
  Object,
}

/** indexFrom is the object size from which lookups go through a map instead of a scan. */
const indexFrom = 16;

/** maxDepth bounds nesting while parsing, so hostile input cannot exhaust the wasm stack. */
const maxDepth = 512;

/**
 * Value is one JSON value. Objects keep their keys in insertion order, so a value serializes
 * the same way on every pass of a workflow.
 */
export class Value {
  private _kind: Kind = Kind.Null;
  private _bool: bool = false;
  private _num: f64 = 0;
  private _str: string = "";
  private _items: Value[] | null = null; // array elements
  private _keys: string[] | null = null; // object keys, in order
  private _vals: Value[] | null = null; // object values, parallel to _keys
  // _index maps key to position once an object is large enough that scanning _keys on every
  // get and set (and so parsing an object) would be quadratic.
  private _index: Map<string, i32> | null = null;

  static null(): Value {
    return new Value();
  }

  static bool(b: bool): Value {
    const v = new Value();
    v._kind = Kind.Bool;
    v._bool = b;
    return v;
  }

  static number(n: f64): Value {
    const v = new Value();
    v._kind = Kind.Number;
    v._num = n;
    return v;
  }

  /** integer is number for integers; JSON numbers are f64, exact up to 2^53. */
  static integer(n: i64): Value {
    return Value.number(<f64>n);
  }

  static string(s: string): Value {
    const v = new Value();
    v._kind = Kind.String;
    v._str = s;
    return v;
  }

  /** array returns an empty array; add elements with push. */
  static array(): Value {
    const v = new Value();
    v._kind = Kind.Array;
    v._items = [];
    return v;
  }

  /** object returns an empty object; add members with set. */
  static object(): Value {
    const v = new Value();
    v._kind = Kind.Object;
    v._keys = [];
    v._vals = [];
    return v;
  }

  get kind(): Kind {
    return this._kind;
  }

  get isNull(): bool {
    return this._kind == Kind.Null;
  }

  /** asBool is the boolean, or false for any other kind. */
  asBool(): bool {
    return this._kind == Kind.Bool && this._bool;
  }

  /** asNumber is the number, or 0 for any other kind. */
  asNumber(): f64 {
    return this._kind == Kind.Number ? this._num : 0;
  }

  /** asInt is the number truncated to an integer, or 0 for any other kind. */
  asInt(): i64 {
    return this._kind == Kind.Number && isFinite(this._num) ? <i64>this._num : 0;
  }

  /** asString is the string, or "" for any other kind. */
  asString(): string {
    return this._kind == Kind.String ? this._str : "";
  }

  /** length is the number of elements of an array or members of an object, else 0. */
  get length(): i32 {
    if (this._kind == Kind.Array) return this._items!.length;
    if (this._kind == Kind.Object) return this._keys!.length;
    return 0;
  }

  /** at is the i-th element of an array, or null when there is none. */
  at(i: i32): Value | null {
    if (this._kind != Kind.Array || i < 0 || i >= this._items!.length) return null;
    return this._items![i];
  }

  /** push appends to an array and returns it, for chaining; on any other kind it aborts. */
  push(v: Value): Value {
    if (this._kind != Kind.Array) throw new Error("json: push on a " + kindName(this._kind));
    this._items!.push(v);
    return this;
  }

  /** keys are an object's keys in order (empty for any other kind). */
  keys(): string[] {
    return this._kind == Kind.Object ? this._keys!.slice(0) : [];
  }

  /** get is the member key of an object, or null when absent or this is not an object. */
  get(key: string): Value | null {
    const i = this.find(key);
    return i < 0 ? null : this._vals![i];
  }

  /** find is the position of key in an object, or -1. */
  private find(key: string): i32 {
    if (this._kind != Kind.Object) return -1;
    const index = this._index;
    if (index != null) return index.has(key) ? index.get(key) : -1;
    const keys = this._keys!;
    for (let i = 0; i < keys.length; i++) {
      if (keys[i] == key) return i;
    }
    return -1;
  }

  has(key: string): bool {
    return this.get(key) != null;
  }

  /** set adds or replaces a member of an object and returns the object, for chaining. */
  set(key: string, v: Value): Value {
    if (this._kind != Kind.Object) throw new Error("json: set on a " + kindName(this._kind));
    const i = this.find(key);
    if (i >= 0) {
      this._vals![i] = v;
      return this;
    }
    const keys = this._keys!;
    keys.push(key);
    this._vals!.push(v);
    let index = this._index;
    if (index == null && keys.length >= indexFrom) {
      index = new Map<string, i32>();
      for (let k = 0; k < keys.length; k++) index.set(keys[k], k);
      this._index = index;
    } else if (index != null) {
      index.set(key, keys.length - 1);
    }
    return this;
  }

  setString(key: string, s: string): Value {
    return this.set(key, Value.string(s));
  }

  setNumber(key: string, n: f64): Value {
    return this.set(key, Value.number(n));
  }

  setInt(key: string, n: i64): Value {
    return this.set(key, Value.integer(n));
  }

  setBool(key: string, b: bool): Value {
    return this.set(key, Value.bool(b));
  }

  /** toString is the value as compact JSON. */
  toString(): string {
    return stringify(this);
  }
}

/** kindName names a kind as error messages do. */
export function kindName(k: Kind): string {
  switch (k) {
    case Kind.Null:
      return "null";
    case Kind.Bool:
      return "boolean";
    case Kind.Number:
      return "number";
    case Kind.String:
      return "string";
    case Kind.Array:
      return "array";
  }
  return "object";
}

// ---- serializer

/**
 * stringify writes v as compact JSON. Like JavaScript's JSON.stringify, a NaN or infinite number
 * becomes null (JSON cannot carry them). Integers up to 2^53 are written without a fraction.
 */
export function stringify(v: Value): string {
  const parts = new Array<string>();
  write(parts, v);
  return parts.join("");
}

function write(out: string[], v: Value): void {
  switch (v.kind) {
    case Kind.Null:
      out.push("null");
      break;
    case Kind.Bool:
      out.push(v.asBool() ? "true" : "false");
      break;
    case Kind.Number:
      out.push(formatNumber(v.asNumber()));
      break;
    case Kind.String:
      writeString(out, v.asString());
      break;
    case Kind.Array: {
      out.push("[");
      for (let i = 0, n = v.length; i < n; i++) {
        if (i > 0) out.push(",");
        write(out, v.at(i)!);
      }
      out.push("]");
      break;
    }
    default: {
      out.push("{");
      const keys = v.keys();
      for (let i = 0; i < keys.length; i++) {
        if (i > 0) out.push(",");
        writeString(out, keys[i]);
        out.push(":");
        write(out, v.get(keys[i])!);
      }
      out.push("}");
    }
  }
}

const maxExactInt: f64 = 9007199254740992; // 2^53

function formatNumber(n: f64): string {
  if (!isFinite(n)) return "null";
  if (n == Math.floor(n) && Math.abs(n) <= maxExactInt) {
    return (<i64>n).toString(); // also turns -0 into 0
  }
  return n.toString();
}

const hexDigits = "0123456789abcdef";

/** quote is s as a JSON string literal. */
export function quote(s: string): string {
  const parts = new Array<string>();
  writeString(parts, s);
  return parts.join("");
}

function writeString(out: string[], s: string): void {
  out.push('"');
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) {
      // A surrogate pair is one character, written as it is. A lone surrogate has no UTF-8
      // form: it becomes U+FFFD, as Go's encoder and decoder make it.
      if (c <= 0xdbff && i + 1 < s.length) {
        const d = s.charCodeAt(i + 1);
        if (d >= 0xdc00 && d <= 0xdfff) {
          i++;
          continue;
        }
      }
      if (i > start) out.push(s.substring(start, i));
      start = i + 1;
      out.push("\\ufffd");
      continue;
    }
    if (c >= 0x20 && c != 0x22 && c != 0x5c) continue;
    if (i > start) out.push(s.substring(start, i));
    start = i + 1;
    switch (c) {
      case 0x22:
        out.push('\\"');
        break;
      case 0x5c:
        out.push("\\\\");
        break;
      case 0x0a:
        out.push("\\n");
        break;
      case 0x0d:
        out.push("\\r");
        break;
      case 0x09:
        out.push("\\t");
        break;
      case 0x08:
        out.push("\\b");
        break;
      case 0x0c:
        out.push("\\f");
        break;
      default:
        out.push("\\u00" + hexDigits.charAt(c >> 4) + hexDigits.charAt(c & 15));
    }
  }
  if (start < s.length) out.push(s.substring(start));
  out.push('"');
}

// ---- parser

/** Parsed is the outcome of tryParse: a value, or an error that says where the text went wrong. */
export class Parsed {
  constructor(
    public value: Value,
    public error: string,
  ) {}

  get ok(): bool {
    return this.error.length == 0;
  }
}

/** tryParse parses JSON text; on invalid text it returns the error instead of aborting. */
export function tryParse(text: string): Parsed {
  const p = new Parser(text);
  const v = p.parseDocument();
  if (p.error.length > 0) return new Parsed(Value.null(), p.error);
  return new Parsed(v, "");
}

/** parse parses JSON text and aborts with a message naming the fault if it is invalid. */
export function parse(text: string): Value {
  const r = tryParse(text);
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

/** parseBytes parses UTF-8 JSON, as the host sends it. */
export function parseBytes(b: ArrayBuffer): Parsed {
  return tryParse(decodeUTF8(b));
}

/**
 * decodeUTF8 decodes UTF-8 as Go does: every byte that does not start a valid sequence (an
 * overlong form, a surrogate, a truncated or stray byte) becomes one U+FFFD. So invalid bytes
 * outside a string make the JSON invalid, and inside one they decode to what Go's decoder sees.
 */
export function decodeUTF8(buf: ArrayBuffer): string {
  const n = buf.byteLength;
  const p = changetype<usize>(buf);
  const out = new StaticArray<u16>(n); // one byte never yields more than one UTF-16 unit
  let o = 0;
  let i = 0;
  while (i < n) {
    const c = <u32>load<u8>(p + i);
    if (c < 0x80) {
      out[o++] = <u16>c;
      i++;
      continue;
    }
    let cp: u32 = 0xfffd;
    let width = 1;
    if (c >= 0xc2 && c <= 0xdf) {
      if (i + 1 < n && isCont(p, i + 1, 0x80, 0xbf)) {
        cp = ((c & 0x1f) << 6) | (<u32>load<u8>(p + i + 1) & 0x3f);
        width = 2;
      }
    } else if (c >= 0xe0 && c <= 0xef) {
      const lo: u32 = c == 0xe0 ? 0xa0 : 0x80;
      const hi: u32 = c == 0xed ? 0x9f : 0xbf;
      if (i + 2 < n && isCont(p, i + 1, lo, hi) && isCont(p, i + 2, 0x80, 0xbf)) {
        cp = ((c & 0x0f) << 12) | ((<u32>load<u8>(p + i + 1) & 0x3f) << 6) | (<u32>load<u8>(p + i + 2) & 0x3f);
        width = 3;
      }
    } else if (c >= 0xf0 && c <= 0xf4) {
      const lo: u32 = c == 0xf0 ? 0x90 : 0x80;
      const hi: u32 = c == 0xf4 ? 0x8f : 0xbf;
      if (i + 3 < n && isCont(p, i + 1, lo, hi) && isCont(p, i + 2, 0x80, 0xbf) && isCont(p, i + 3, 0x80, 0xbf)) {
        cp =
          ((c & 0x07) << 18) |
          ((<u32>load<u8>(p + i + 1) & 0x3f) << 12) |
          ((<u32>load<u8>(p + i + 2) & 0x3f) << 6) |
          (<u32>load<u8>(p + i + 3) & 0x3f);
        width = 4;
      }
    }
    if (cp >= 0x10000) {
      cp -= 0x10000;
      out[o++] = <u16>(0xd800 | (cp >> 10));
      out[o++] = <u16>(0xdc00 | (cp & 0x3ff));
    } else {
      out[o++] = <u16>cp;
    }
    i += width;
  }
  return String.UTF16.decodeUnsafe(changetype<usize>(out), <usize>o << 1);
}

function isCont(p: usize, i: i32, lo: u32, hi: u32): bool {
  const b = <u32>load<u8>(p + i);
  return b >= lo && b <= hi;
}

class Parser {
  pos: i32 = 0;
  error: string = "";

  constructor(public text: string) {}

  fail(what: string): Value {
    if (this.error.length == 0) {
      const at = this.pos < this.text.length ? "at offset " + this.pos.toString() : "at the end";
      this.error = "invalid JSON " + at + ": " + what;
    }
    return Value.null();
  }

  parseDocument(): Value {
    const v = this.parseValue(0);
    if (this.error.length > 0) return v;
    this.skipSpace();
    if (this.pos < this.text.length) return this.fail("unexpected text after the value");
    return v;
  }

  skipSpace(): void {
    const t = this.text;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c != 0x20 && c != 0x0a && c != 0x0d && c != 0x09) break;
      this.pos++;
    }
  }

  literal(word: string, v: Value): Value {
    if (this.text.substr(this.pos, word.length) != word) return this.fail("expected " + word);
    this.pos += word.length;
    return v;
  }

  parseValue(depth: i32): Value {
    if (depth > maxDepth) return this.fail("nested deeper than " + maxDepth.toString());
    this.skipSpace();
    if (this.pos >= this.text.length) return this.fail("expected a value");
    const c = this.text.charCodeAt(this.pos);
    switch (c) {
      case 0x7b: // {
        return this.parseObject(depth);
      case 0x5b: // [
        return this.parseArray(depth);
      case 0x22: // "
        return Value.string(this.parseString());
      case 0x74: // t
        return this.literal("true", Value.bool(true));
      case 0x66: // f
        return this.literal("false", Value.bool(false));
      case 0x6e: // n
        return this.literal("null", Value.null());
    }
    if (c == 0x2d || (c >= 0x30 && c <= 0x39)) return this.parseNumber();
    return this.fail("unexpected character '" + String.fromCharCode(c) + "'");
  }

  parseObject(depth: i32): Value {
    const obj = Value.object();
    this.pos++; // {
    this.skipSpace();
    if (this.pos < this.text.length && this.text.charCodeAt(this.pos) == 0x7d) {
      this.pos++;
      return obj;
    }
    while (true) {
      this.skipSpace();
      if (this.pos >= this.text.length || this.text.charCodeAt(this.pos) != 0x22) return this.fail("expected a string key");
      const key = this.parseString();
      if (this.error.length > 0) return obj;
      this.skipSpace();
      if (this.pos >= this.text.length || this.text.charCodeAt(this.pos) != 0x3a) return this.fail("expected ':'");
      this.pos++;
      const v = this.parseValue(depth + 1);
      if (this.error.length > 0) return obj;
      obj.set(key, v); // a repeated key keeps the last value, as Go's decoder does
      this.skipSpace();
      if (this.pos >= this.text.length) return this.fail("expected ',' or '}'");
      const c = this.text.charCodeAt(this.pos++);
      if (c == 0x7d) return obj;
      if (c != 0x2c) {
        this.pos--;
        return this.fail("expected ',' or '}'");
      }
    }
    return obj;
  }

  parseArray(depth: i32): Value {
    const arr = Value.array();
    this.pos++; // [
    this.skipSpace();
    if (this.pos < this.text.length && this.text.charCodeAt(this.pos) == 0x5d) {
      this.pos++;
      return arr;
    }
    while (true) {
      const v = this.parseValue(depth + 1);
      if (this.error.length > 0) return arr;
      arr.push(v);
      this.skipSpace();
      if (this.pos >= this.text.length) return this.fail("expected ',' or ']'");
      const c = this.text.charCodeAt(this.pos++);
      if (c == 0x5d) return arr;
      if (c != 0x2c) {
        this.pos--;
        return this.fail("expected ',' or ']'");
      }
    }
    return arr;
  }

  /** parseString reads a string literal starting at its opening quote. */
  parseString(): string {
    const t = this.text;
    this.pos++; // "
    const parts = new Array<string>();
    let start = this.pos;
    while (this.pos < t.length) {
      const c = t.charCodeAt(this.pos);
      if (c == 0x22) {
        parts.push(t.substring(start, this.pos));
        this.pos++;
        return parts.join("");
      }
      if (c < 0x20) {
        this.fail("control character in a string");
        return "";
      }
      if (c != 0x5c) {
        this.pos++;
        continue;
      }
      parts.push(t.substring(start, this.pos));
      this.pos++; // backslash
      if (this.pos >= t.length) break;
      const e = t.charCodeAt(this.pos++);
      switch (e) {
        case 0x22:
          parts.push('"');
          break;
        case 0x5c:
          parts.push("\\");
          break;
        case 0x2f:
          parts.push("/");
          break;
        case 0x62:
          parts.push("\b");
          break;
        case 0x66:
          parts.push("\f");
          break;
        case 0x6e:
          parts.push("\n");
          break;
        case 0x72:
          parts.push("\r");
          break;
        case 0x74:
          parts.push("\t");
          break;
        case 0x75: {
          // \uXXXX is one UTF-16 code unit, which is what an AssemblyScript string holds, so
          // surrogate pairs need no special handling.
          let u: i32 = 0;
          for (let k = 0; k < 4; k++) {
            const d = this.pos < t.length ? hexValue(t.charCodeAt(this.pos)) : -1;
            if (d < 0) {
              this.fail("bad \\u escape");
              return "";
            }
            u = (u << 4) | d;
            this.pos++;
          }
          parts.push(String.fromCharCode(u));
          break;
        }
        default:
          this.pos--;
          this.fail("bad escape");
          return "";
      }
      start = this.pos;
    }
    this.fail("unterminated string");
    return "";
  }

  parseNumber(): Value {
    const t = this.text;
    const start = this.pos;
    if (t.charCodeAt(this.pos) == 0x2d) this.pos++;
    if (this.pos >= t.length) return this.fail("expected a digit");
    const first = t.charCodeAt(this.pos);
    if (first == 0x30) {
      this.pos++;
    } else if (isDigit(first)) {
      while (this.pos < t.length && isDigit(t.charCodeAt(this.pos))) this.pos++;
    } else {
      return this.fail("expected a digit");
    }
    if (this.pos < t.length && t.charCodeAt(this.pos) == 0x2e) {
      this.pos++;
      if (this.pos >= t.length || !isDigit(t.charCodeAt(this.pos))) return this.fail("expected a digit after '.'");
      while (this.pos < t.length && isDigit(t.charCodeAt(this.pos))) this.pos++;
    }
    if (this.pos < t.length && (t.charCodeAt(this.pos) | 0x20) == 0x65) {
      this.pos++;
      if (this.pos < t.length && (t.charCodeAt(this.pos) == 0x2b || t.charCodeAt(this.pos) == 0x2d)) this.pos++;
      if (this.pos >= t.length || !isDigit(t.charCodeAt(this.pos))) return this.fail("expected a digit in the exponent");
      while (this.pos < t.length && isDigit(t.charCodeAt(this.pos))) this.pos++;
    }
    return Value.number(parseFloat(t.substring(start, this.pos)));
  }
}

function isDigit(c: i32): bool {
  return c >= 0x30 && c <= 0x39;
}

function hexValue(c: i32): i32 {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const l = c | 0x20;
  if (l >= 0x61 && l <= 0x66) return l - 0x61 + 10;
  return -1;
}
