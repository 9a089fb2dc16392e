// A small JSON reader and writer: AssemblyScript has no JSON of its own, and this example
// depends on nothing but the compiler and @extism/as-pdk.

export const NULL: i32 = 0;
export const BOOL: i32 = 1;
export const NUMBER: i32 = 2;
export const STRING: i32 = 3;
export const ARRAY: i32 = 4;
export const OBJECT: i32 = 5;

// Value is a parsed JSON value. An object keeps its members in order, keys[i] naming items[i];
// a number keeps its text in s as well as its value in n.
export class Value {
  kind: i32 = NULL;
  b: bool = false;
  n: f64 = 0;
  s: string = "";
  items: Value[] = [];
  keys: string[] = [];

  get(key: string): Value | null {
    if (this.kind != OBJECT) return null;
    for (let i = 0; i < this.keys.length; i++) {
      if (this.keys[i] == key) return this.items[i];
    }
    return null;
  }

  getString(key: string): string {
    const v = this.get(key);
    return v != null && v.kind == STRING ? v.s : "";
  }

  getInt(key: string): i64 {
    const v = this.get(key);
    return v != null && v.kind == NUMBER ? <i64>v.n : 0;
  }

  getBool(key: string): bool {
    const v = this.get(key);
    return v != null && v.kind == BOOL && v.b;
  }
}

// parse reads one JSON document; null when it is not valid JSON.
export function parse(text: string): Value | null {
  const p = new Parser(text);
  const v = p.value();
  p.space();
  if (!p.ok || p.i != text.length) return null;
  return v;
}

class Parser {
  s: string;
  i: i32 = 0;
  ok: bool = true;

  constructor(s: string) {
    this.s = s;
  }

  space(): void {
    while (this.i < this.s.length) {
      const c = this.s.charCodeAt(this.i);
      if (c != 0x20 && c != 0x09 && c != 0x0a && c != 0x0d) return;
      this.i++;
    }
  }

  fail(): Value {
    this.ok = false;
    return new Value();
  }

  literal(word: string): bool {
    if (this.s.substr(this.i, word.length) != word) return false;
    this.i += word.length;
    return true;
  }

  value(): Value {
    this.space();
    if (!this.ok || this.i >= this.s.length) return this.fail();
    const c = this.s.charCodeAt(this.i);
    const v = new Value();
    if (c == 0x7b) return this.object();
    if (c == 0x5b) return this.array();
    if (c == 0x22) {
      v.kind = STRING;
      v.s = this.string();
      return v;
    }
    if (this.literal("null")) return v;
    if (this.literal("true")) {
      v.kind = BOOL;
      v.b = true;
      return v;
    }
    if (this.literal("false")) {
      v.kind = BOOL;
      return v;
    }
    return this.number();
  }

  number(): Value {
    const start = this.i;
    while (this.i < this.s.length) {
      const c = this.s.charCodeAt(this.i);
      if ((c >= 0x30 && c <= 0x39) || c == 0x2d || c == 0x2b || c == 0x2e || c == 0x65 || c == 0x45) {
        this.i++;
        continue;
      }
      break;
    }
    if (this.i == start) return this.fail();
    const v = new Value();
    v.kind = NUMBER;
    v.s = this.s.substring(start, this.i); // as written, for stringifyValue
    v.n = parseFloat(v.s);
    if (isNaN(v.n)) return this.fail();
    return v;
  }

  string(): string {
    this.i++; // the opening quote
    const parts: string[] = [];
    let start = this.i;
    while (this.i < this.s.length) {
      const c = this.s.charCodeAt(this.i);
      if (c == 0x22) {
        parts.push(this.s.substring(start, this.i));
        this.i++;
        return parts.join("");
      }
      if (c == 0x5c) {
        parts.push(this.s.substring(start, this.i));
        this.i++;
        if (this.i >= this.s.length) break;
        const e = this.s.charCodeAt(this.i);
        if (e == 0x75) {
          if (this.i + 5 > this.s.length) break;
          const code = <i32>parseInt(this.s.substr(this.i + 1, 4), 16);
          if (isNaN(<f64>code)) break;
          parts.push(String.fromCharCode(code));
          this.i += 5;
        } else {
          let r = "";
          if (e == 0x6e) r = "\n";
          else if (e == 0x74) r = "\t";
          else if (e == 0x72) r = "\r";
          else if (e == 0x62) r = "\b";
          else if (e == 0x66) r = "\f";
          else if (e == 0x22 || e == 0x5c || e == 0x2f) r = String.fromCharCode(e);
          else break;
          parts.push(r);
          this.i++;
        }
        start = this.i;
        continue;
      }
      this.i++;
    }
    this.ok = false;
    return "";
  }

  array(): Value {
    const v = new Value();
    v.kind = ARRAY;
    this.i++;
    this.space();
    if (this.i < this.s.length && this.s.charCodeAt(this.i) == 0x5d) {
      this.i++;
      return v;
    }
    while (this.ok) {
      v.items.push(this.value());
      this.space();
      if (this.i >= this.s.length) return this.fail();
      const c = this.s.charCodeAt(this.i++);
      if (c == 0x5d) return v;
      if (c != 0x2c) return this.fail();
    }
    return v;
  }

  object(): Value {
    const v = new Value();
    v.kind = OBJECT;
    this.i++;
    this.space();
    if (this.i < this.s.length && this.s.charCodeAt(this.i) == 0x7d) {
      this.i++;
      return v;
    }
    while (this.ok) {
      this.space();
      if (this.i >= this.s.length || this.s.charCodeAt(this.i) != 0x22) return this.fail();
      v.keys.push(this.string());
      this.space();
      if (this.i >= this.s.length || this.s.charCodeAt(this.i) != 0x3a) return this.fail();
      this.i++;
      v.items.push(this.value());
      this.space();
      if (this.i >= this.s.length) return this.fail();
      const c = this.s.charCodeAt(this.i++);
      if (c == 0x7d) return v;
      if (c != 0x2c) return this.fail();
    }
    return v;
  }
}

const HEX = "0123456789abcdef";

// quote writes s as a JSON string.
export function quote(s: string): string {
  const parts: string[] = ['"'];
  let start = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0x20 && c != 0x22 && c != 0x5c) continue;
    parts.push(s.substring(start, i));
    if (c == 0x22) parts.push('\\"');
    else if (c == 0x5c) parts.push("\\\\");
    else if (c == 0x0a) parts.push("\\n");
    else parts.push("\\u00" + HEX.charAt(c >> 4) + HEX.charAt(c & 15));
    start = i + 1;
  }
  parts.push(s.substring(start));
  parts.push('"');
  return parts.join("");
}

// stringifyValue writes v back as JSON: numbers as they were written, members in order.
export function stringifyValue(v: Value): string {
  if (v.kind == BOOL) return v.b ? "true" : "false";
  if (v.kind == NUMBER) return v.s;
  if (v.kind == STRING) return quote(v.s);
  if (v.kind == ARRAY || v.kind == OBJECT) {
    const parts: string[] = [];
    for (let i = 0; i < v.items.length; i++) {
      const item = stringifyValue(v.items[i]);
      parts.push(v.kind == OBJECT ? quote(v.keys[i]) + ":" + item : item);
    }
    return v.kind == OBJECT ? "{" + parts.join(",") + "}" : "[" + parts.join(",") + "]";
  }
  return "null";
}

// Obj writes a JSON object, member by member.
export class Obj {
  parts: string[] = [];

  raw(key: string, json: string): Obj {
    this.parts.push(quote(key) + ":" + json);
    return this;
  }

  str(key: string, v: string): Obj {
    return this.raw(key, quote(v));
  }

  int(key: string, v: i64): Obj {
    return this.raw(key, v.toString());
  }

  bool(key: string, v: bool): Obj {
    return this.raw(key, v ? "true" : "false");
  }

  toString(): string {
    return "{" + this.parts.join(",") + "}";
  }
}
