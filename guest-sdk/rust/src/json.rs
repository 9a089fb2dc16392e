//! A small JSON value type with a strict parser and a compact serializer, so that workflows can
//! carry JSON without serde (the SDK has no dependencies and builds with a plain `rustc`).
//!
//! Objects are `BTreeMap`s: lookups stay logarithmic on hostile input and serialization is
//! deterministic (keys sorted, as Go's encoding/json writes maps). Numbers keep integers exact:
//! an integer literal that fits `i64` parses to `Value::Int`, anything else to `Value::Float`.

use std::collections::BTreeMap;
use std::fmt;

use crate::Error;

/// Map is a JSON object.
pub type Map = BTreeMap<String, Value>;

/// Value is any JSON value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Null,
    Bool(bool),
    /// An integer that fits `i64`.
    Int(i64),
    /// Any other number. NaN and infinities serialize as `null`, as JSON has no spelling for them.
    Float(f64),
    String(String),
    Array(Vec<Value>),
    Object(Map),
}

/// MAX_DEPTH bounds nesting so that hostile input cannot exhaust the guest's stack.
pub const MAX_DEPTH: usize = 512;

static NULL: Value = Value::Null;

impl Value {
    /// parse reads one JSON text (whitespace around it allowed, nothing else).
    pub fn parse(text: &str) -> Result<Value, Error> {
        let mut p = Parser {
            s: text.as_bytes(),
            i: 0,
        };
        p.ws();
        let v = p.value(0)?;
        p.ws();
        if p.i != p.s.len() {
            return Err(p.err("unexpected data after the JSON value"));
        }
        Ok(v)
    }

    /// parse_bytes is `parse` for bytes, which must be UTF-8.
    pub fn parse_bytes(bytes: &[u8]) -> Result<Value, Error> {
        match std::str::from_utf8(bytes) {
            Ok(s) => Value::parse(s),
            Err(e) => Err(Error::new(
                "decode",
                format!("invalid JSON: not UTF-8 at byte {}", e.valid_up_to()),
            )),
        }
    }

    /// get returns an object's field, or None for a missing field or a value that is not an object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Object(m) => m.get(key),
            _ => None,
        }
    }

    /// field decodes an object's field; a missing or null field gives `T::default()`, as Go's
    /// encoding/json leaves a missing field at its zero value. `self` must be an object or null.
    pub fn field<T: FromJson + Default>(&self, key: &str) -> Result<T, Error> {
        match self {
            Value::Null => Ok(T::default()),
            Value::Object(m) => match m.get(key) {
                None | Some(Value::Null) => Ok(T::default()),
                Some(v) => T::from_json(v)
                    .map_err(|e| Error::new("decode", format!("field {:?}: {}", key, e.message))),
            },
            other => Err(Error::new(
                "decode",
                format!("want an object, got {}", other.kind()),
            )),
        }
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// as_i64 is the value of an integer, or of a float without a fraction that fits `i64`.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            Value::Float(f)
                if f.fract() == 0.0
                    && *f >= -9.223_372_036_854_776e18
                    && *f < 9.223_372_036_854_776e18 =>
            {
                Some(*f as i64)
            }
            _ => None,
        }
    }

    pub fn as_f64(&self) -> Option<f64> {
        match self {
            Value::Int(i) => Some(*i as f64),
            Value::Float(f) => Some(*f),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// kind names the value's JSON type, for error messages.
    pub fn kind(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) | Value::Float(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }

    /// to_json_string is the compact JSON text (also what `to_string()` gives).
    pub fn to_json_string(&self) -> String {
        let mut out = String::new();
        write_value(&mut out, self);
        out
    }
}

/// `value["key"]` is the field or `null`, like serde_json's.
impl std::ops::Index<&str> for Value {
    type Output = Value;
    fn index(&self, key: &str) -> &Value {
        self.get(key).unwrap_or(&NULL)
    }
}

/// `value[i]` is the array element or `null`.
impl std::ops::Index<usize> for Value {
    type Output = Value;
    fn index(&self, i: usize) -> &Value {
        match self {
            Value::Array(a) => a.get(i).unwrap_or(&NULL),
            _ => &NULL,
        }
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.to_json_string())
    }
}

impl std::str::FromStr for Value {
    type Err = Error;
    fn from_str(s: &str) -> Result<Value, Error> {
        Value::parse(s)
    }
}

// ---- serializer

fn write_value(out: &mut String, v: &Value) {
    match v {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Int(i) => out.push_str(&i.to_string()),
        Value::Float(f) => write_float(out, *f),
        Value::String(s) => write_string(out, s),
        Value::Array(a) => {
            out.push('[');
            for (i, e) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, e);
            }
            out.push(']');
        }
        Value::Object(m) => {
            out.push('{');
            for (i, (k, e)) in m.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(out, k);
                out.push(':');
                write_value(out, e);
            }
            out.push('}');
        }
    }
}

fn write_float(out: &mut String, f: f64) {
    if !f.is_finite() {
        out.push_str("null");
        return;
    }
    // Rust's Display is the shortest text that reads back to the same f64, and never uses an
    // exponent; that is always valid JSON. Exponents keep very large and small numbers short.
    let a = f.abs();
    if a != 0.0 && !(1e-6..1e21).contains(&a) {
        out.push_str(&format!("{:e}", f));
    } else {
        out.push_str(&f.to_string());
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

// ---- parser

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

impl<'a> Parser<'a> {
    fn err(&self, what: &str) -> Error {
        Error::new(
            "decode",
            format!("invalid JSON at byte {}: {}", self.i, what),
        )
    }

    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.s.get(self.i) {
            self.i += 1;
        }
    }

    fn literal(&mut self, word: &str, v: Value) -> Result<Value, Error> {
        if self.s[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            Err(self.err("unknown literal"))
        }
    }

    fn value(&mut self, depth: usize) -> Result<Value, Error> {
        if depth >= MAX_DEPTH {
            return Err(self.err("nested too deeply"));
        }
        match self.s.get(self.i) {
            None => Err(self.err("unexpected end of input")),
            Some(b'n') => self.literal("null", Value::Null),
            Some(b't') => self.literal("true", Value::Bool(true)),
            Some(b'f') => self.literal("false", Value::Bool(false)),
            Some(b'"') => Ok(Value::String(self.string()?)),
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                self.ws();
                if self.s.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(Value::Array(items));
                }
                loop {
                    self.ws();
                    items.push(self.value(depth + 1)?);
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Value::Array(items));
                        }
                        _ => return Err(self.err("want ',' or ']' in array")),
                    }
                }
            }
            Some(b'{') => {
                self.i += 1;
                let mut map = Map::new();
                self.ws();
                if self.s.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(Value::Object(map));
                }
                loop {
                    self.ws();
                    if self.s.get(self.i) != Some(&b'"') {
                        return Err(self.err("want a string key in object"));
                    }
                    let key = self.string()?;
                    self.ws();
                    if self.s.get(self.i) != Some(&b':') {
                        return Err(self.err("want ':' after object key"));
                    }
                    self.i += 1;
                    self.ws();
                    let v = self.value(depth + 1)?;
                    map.insert(key, v); // a repeated key keeps its last value, as in Go
                    self.ws();
                    match self.s.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Value::Object(map));
                        }
                        _ => return Err(self.err("want ',' or '}' in object")),
                    }
                }
            }
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => Err(self.err("unexpected character")),
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.i;
        while let Some(b'0'..=b'9') = self.s.get(self.i) {
            self.i += 1;
        }
        self.i - start
    }

    fn number(&mut self) -> Result<Value, Error> {
        let start = self.i;
        if self.s[self.i] == b'-' {
            self.i += 1;
        }
        match self.s.get(self.i) {
            Some(b'0') => self.i += 1,
            Some(b'1'..=b'9') => {
                self.digits();
            }
            _ => return Err(self.err("want a digit")),
        }
        let mut integer = true;
        if self.s.get(self.i) == Some(&b'.') {
            integer = false;
            self.i += 1;
            if self.digits() == 0 {
                return Err(self.err("want a digit after '.'"));
            }
        }
        if let Some(b'e' | b'E') = self.s.get(self.i) {
            integer = false;
            self.i += 1;
            if let Some(b'+' | b'-') = self.s.get(self.i) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return Err(self.err("want a digit in exponent"));
            }
        }
        // The grammar above admits only ASCII, so the slice is valid UTF-8.
        let text = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
        if integer {
            if let Ok(i) = text.parse::<i64>() {
                return Ok(Value::Int(i));
            }
        }
        match text.parse::<f64>() {
            Ok(f) if f.is_finite() => Ok(Value::Float(f)),
            _ => {
                self.i = start;
                Err(self.err("number out of range"))
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, Error> {
        let mut n = 0u32;
        for _ in 0..4 {
            let d = match self.s.get(self.i) {
                Some(c @ b'0'..=b'9') => c - b'0',
                Some(c @ b'a'..=b'f') => c - b'a' + 10,
                Some(c @ b'A'..=b'F') => c - b'A' + 10,
                _ => return Err(self.err("want 4 hex digits after \\u")),
            };
            n = n * 16 + d as u32;
            self.i += 1;
        }
        Ok(n)
    }

    fn string(&mut self) -> Result<String, Error> {
        self.i += 1; // the opening quote
        let mut out = String::new();
        loop {
            // Copy the run up to the next quote, backslash or control character in one go.
            let start = self.i;
            while let Some(&c) = self.s.get(self.i) {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.i += 1;
            }
            // The input is a &str and the run ends before an ASCII byte, so it is UTF-8.
            out.push_str(std::str::from_utf8(&self.s[start..self.i]).unwrap_or("\u{fffd}"));
            match self.s.get(self.i) {
                None => return Err(self.err("unterminated string")),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    let c = match self.s.get(self.i) {
                        Some(b'"') => '"',
                        Some(b'\\') => '\\',
                        Some(b'/') => '/',
                        Some(b'b') => '\u{8}',
                        Some(b'f') => '\u{c}',
                        Some(b'n') => '\n',
                        Some(b'r') => '\r',
                        Some(b't') => '\t',
                        Some(b'u') => {
                            self.i += 1;
                            let hi = self.hex4()?;
                            out.push(self.surrogate(hi)?);
                            continue;
                        }
                        _ => return Err(self.err("invalid escape")),
                    };
                    self.i += 1;
                    out.push(c);
                }
                Some(_) => return Err(self.err("control character in string")),
            }
        }
    }

    // surrogate completes a \u escape: a high surrogate followed by a \u low surrogate is one
    // character; a lone surrogate becomes U+FFFD, as Go's decoder does.
    fn surrogate(&mut self, hi: u32) -> Result<char, Error> {
        if (0xD800..0xDC00).contains(&hi) && self.s[self.i..].starts_with(b"\\u") {
            let save = self.i;
            self.i += 2;
            let lo = self.hex4()?;
            if (0xDC00..0xE000).contains(&lo) {
                return Ok(
                    char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))
                        .unwrap_or('\u{fffd}'),
                );
            }
            self.i = save; // not a pair: the next escape stands on its own
        }
        Ok(char::from_u32(hi).unwrap_or('\u{fffd}'))
    }
}

// ---- conversions

/// ToJson turns a Rust value into JSON. Implement it for the types your workflows return.
pub trait ToJson {
    fn to_json(&self) -> Value;

    /// to_json_text is the value's JSON text, which is what the SDK sends; `RawJson` overrides
    /// it to send its text as it is.
    fn to_json_text(&self) -> String {
        self.to_json().to_json_string()
    }
}

/// FromJson reads a Rust value from JSON. Implement it for your workflows' inputs; the error
/// says what did not fit (the SDK adds where).
pub trait FromJson: Sized {
    fn from_json(v: &Value) -> Result<Self, Error>;

    /// from_json_text reads JSON text (UTF-8), which is what the SDK receives; `RawJson`
    /// overrides it to keep the text as it is.
    fn from_json_text(text: &[u8]) -> Result<Self, Error> {
        Value::parse_bytes(text).and_then(|v| Self::from_json(&v))
    }
}

/// RawJson is JSON text carried as it is: a workflow or a step can return JSON it already holds
/// as text, and take its input, a step's output or an event's payload as text, without going
/// through `Value`. It is always valid JSON (`new` checks). A replay reads the journaled text,
/// which may be spaced or ordered differently from what the first pass sent: compare values,
/// not texts.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawJson(String);

impl RawJson {
    /// new checks that text is one JSON value.
    pub fn new(text: impl Into<String>) -> Result<RawJson, Error> {
        let text = text.into();
        Value::parse(&text)?;
        Ok(RawJson(text))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }

    /// value parses the text.
    pub fn value(&self) -> Value {
        Value::parse(&self.0).unwrap_or(Value::Null) // valid by construction
    }
}

impl fmt::Display for RawJson {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl ToJson for RawJson {
    fn to_json(&self) -> Value {
        self.value()
    }
    fn to_json_text(&self) -> String {
        self.0.clone()
    }
}

impl FromJson for RawJson {
    fn from_json(v: &Value) -> Result<Self, Error> {
        Ok(RawJson(v.to_json_string()))
    }
    fn from_json_text(text: &[u8]) -> Result<Self, Error> {
        Value::parse_bytes(text)?;
        // parse_bytes accepted it, so it is UTF-8.
        Ok(RawJson(String::from_utf8_lossy(text).into_owned()))
    }
}

fn want(what: &str, got: &Value) -> Error {
    Error::new("decode", format!("want {}, got {}", what, got.kind()))
}

impl ToJson for Value {
    fn to_json(&self) -> Value {
        self.clone()
    }
}
impl FromJson for Value {
    fn from_json(v: &Value) -> Result<Self, Error> {
        Ok(v.clone())
    }
}

impl ToJson for () {
    fn to_json(&self) -> Value {
        Value::Null
    }
}
impl FromJson for () {
    fn from_json(_: &Value) -> Result<Self, Error> {
        Ok(())
    }
}

impl ToJson for bool {
    fn to_json(&self) -> Value {
        Value::Bool(*self)
    }
}
impl FromJson for bool {
    fn from_json(v: &Value) -> Result<Self, Error> {
        v.as_bool().ok_or_else(|| want("a boolean", v))
    }
}

impl ToJson for str {
    fn to_json(&self) -> Value {
        Value::String(self.to_string())
    }
}
impl ToJson for String {
    fn to_json(&self) -> Value {
        Value::String(self.clone())
    }
}
impl FromJson for String {
    fn from_json(v: &Value) -> Result<Self, Error> {
        v.as_str()
            .map(str::to_string)
            .ok_or_else(|| want("a string", v))
    }
}

impl ToJson for f64 {
    fn to_json(&self) -> Value {
        Value::Float(*self)
    }
}
impl FromJson for f64 {
    fn from_json(v: &Value) -> Result<Self, Error> {
        v.as_f64().ok_or_else(|| want("a number", v))
    }
}

macro_rules! integers {
    ($($t:ty),*) => {$(
        impl ToJson for $t {
            fn to_json(&self) -> Value {
                match i64::try_from(*self) {
                    Ok(i) => Value::Int(i),
                    Err(_) => Value::Float(*self as f64),
                }
            }
        }
        impl FromJson for $t {
            fn from_json(v: &Value) -> Result<Self, Error> {
                let i = v.as_i64().ok_or_else(|| want("an integer", v))?;
                <$t>::try_from(i).map_err(|_| Error::new("decode", format!("{} out of range for {}", i, stringify!($t))))
            }
        }
    )*};
}
integers!(i8, i16, i32, i64, isize, u8, u16, u32, u64, usize);

impl<T: ToJson + ?Sized> ToJson for &T {
    fn to_json(&self) -> Value {
        (**self).to_json()
    }
    fn to_json_text(&self) -> String {
        (**self).to_json_text()
    }
}

impl<T: ToJson> ToJson for Option<T> {
    fn to_json(&self) -> Value {
        match self {
            Some(v) => v.to_json(),
            None => Value::Null,
        }
    }
}
impl<T: FromJson> FromJson for Option<T> {
    fn from_json(v: &Value) -> Result<Self, Error> {
        match v {
            Value::Null => Ok(None),
            v => T::from_json(v).map(Some),
        }
    }
}

impl<T: ToJson> ToJson for Vec<T> {
    fn to_json(&self) -> Value {
        Value::Array(self.iter().map(ToJson::to_json).collect())
    }
}
impl<T: ToJson> ToJson for [T] {
    fn to_json(&self) -> Value {
        Value::Array(self.iter().map(ToJson::to_json).collect())
    }
}
impl<T: FromJson> FromJson for Vec<T> {
    fn from_json(v: &Value) -> Result<Self, Error> {
        let a = v.as_array().ok_or_else(|| want("an array", v))?;
        a.iter()
            .enumerate()
            .map(|(i, e)| {
                T::from_json(e)
                    .map_err(|err| Error::new("decode", format!("[{}]: {}", i, err.message)))
            })
            .collect()
    }
}

impl<T: ToJson> ToJson for BTreeMap<String, T> {
    fn to_json(&self) -> Value {
        Value::Object(self.iter().map(|(k, v)| (k.clone(), v.to_json())).collect())
    }
}
impl<T: FromJson> FromJson for BTreeMap<String, T> {
    fn from_json(v: &Value) -> Result<Self, Error> {
        let m = v.as_object().ok_or_else(|| want("an object", v))?;
        m.iter()
            .map(|(k, e)| match T::from_json(e) {
                Ok(t) => Ok((k.clone(), t)),
                Err(err) => Err(Error::new(
                    "decode",
                    format!("field {:?}: {}", k, err.message),
                )),
            })
            .collect()
    }
}

/// object builds a JSON object from `key => value` pairs; each value goes through `ToJson`.
///
/// ```ignore
/// let v = wfhost::object! { "userId" => id, "verified" => true };
/// ```
#[macro_export]
macro_rules! object {
    ($($key:expr => $value:expr),* $(,)?) => {{
        #[allow(unused_mut)]
        let mut map = $crate::Map::new();
        $( map.insert(::std::string::String::from($key), $crate::ToJson::to_json(&$value)); )*
        $crate::Value::Object(map)
    }};
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round(text: &str) -> String {
        Value::parse(text)
            .unwrap_or_else(|e| panic!("parse {}: {}", text, e))
            .to_json_string()
    }

    #[test]
    fn parses_and_writes_every_kind() {
        let cases = [
            ("null", "null"),
            ("true", "true"),
            (" false ", "false"),
            ("0", "0"),
            ("-12", "-12"),
            ("9223372036854775807", "9223372036854775807"),
            ("-9223372036854775808", "-9223372036854775808"),
            ("9223372036854775808", "9223372036854776000"),
            ("1.5", "1.5"),
            ("-0.25e2", "-25"),
            ("1E400", ""),
            ("1e21", "1e21"),
            ("1e-7", "1e-7"),
            ("0.000001", "0.000001"),
            ("123456789012345680000", "123456789012345680000"),
            (r#""a\"b\\c\/d\b\f\n\r\t""#, r#""a\"b\\c/d\b\f\n\r\t""#),
            (r#""\u0001\u00e9\u20ac""#, "\"\\u0001é€\""),
            (r#""\ud83d\ude00""#, "\"😀\""),
            (r#""\ud83d x""#, "\"\u{fffd} x\""),
            (r#""\ude00\u0041""#, "\"\u{fffd}A\""),
            ("\"héllo 😀\"", "\"héllo 😀\""),
            ("[]", "[]"),
            ("[1, [2, {}], \"x\"]", "[1,[2,{}],\"x\"]"),
            ("{}", "{}"),
            (
                r#"{"b": 1, "a": {"c": [true, null]}}"#,
                r#"{"a":{"c":[true,null]},"b":1}"#,
            ),
            (r#"{"a": 1, "a": 2}"#, r#"{"a":2}"#),
        ];
        for (input, want) in cases {
            if want.is_empty() {
                assert!(Value::parse(input).is_err(), "{} parsed", input);
            } else {
                assert_eq!(round(input), want, "input {}", input);
            }
        }
    }

    #[test]
    fn rejects_what_json_does_not_allow() {
        for bad in [
            "",
            " ",
            "nul",
            "nulls",
            "tru",
            "01",
            "-",
            "1.",
            ".5",
            "1e",
            "1e+",
            "+1",
            "0x10",
            "NaN",
            "Infinity",
            "\"abc",
            "\"a\nb\"",
            "\"\\x\"",
            "\"\\u12\"",
            "\"\\u12g4\"",
            "[",
            "[1,",
            "[1,]",
            "[1 2]",
            "{",
            "{\"a\"}",
            "{\"a\":}",
            "{\"a\":1,}",
            "{a:1}",
            "{\"a\" 1}",
            "{1:2}",
            "[] []",
            "'a'",
            "\u{feff}1",
        ] {
            let err = Value::parse(bad).expect_err(bad);
            assert_eq!(err.code, "decode");
            assert!(
                err.message.starts_with("invalid JSON at byte "),
                "{}: {}",
                bad,
                err.message
            );
        }
        assert!(Value::parse_bytes(b"\"\xff\"").is_err());
    }

    #[test]
    fn bounds_nesting() {
        let deep = "[".repeat(MAX_DEPTH - 1) + &"]".repeat(MAX_DEPTH - 1);
        assert!(Value::parse(&deep).is_ok());
        let deeper = "[".repeat(MAX_DEPTH + 1) + &"]".repeat(MAX_DEPTH + 1);
        assert!(Value::parse(&deeper)
            .unwrap_err()
            .message
            .contains("nested too deeply"));
        let hostile = "[".repeat(1 << 20);
        assert!(Value::parse(&hostile).is_err());
    }

    #[test]
    fn escapes_control_characters() {
        let s = Value::String("\u{0}\u{1f}\"\\\u{7f}".into()).to_json_string();
        assert_eq!(s, "\"\\u0000\\u001f\\\"\\\\\u{7f}\"");
        assert_eq!(
            Value::parse(&s).unwrap().as_str(),
            Some("\u{0}\u{1f}\"\\\u{7f}")
        );
    }

    #[test]
    fn floats_round_trip() {
        for f in [
            0.1,
            -1.5e-300,
            1.7976931348623157e308,
            5e-324,
            123.456,
            1e20,
            1e21,
            -0.0,
        ] {
            let v = Value::parse(&Value::Float(f).to_json_string()).unwrap();
            assert_eq!(v.as_f64(), Some(f), "{}", f);
        }
        assert_eq!(Value::Float(f64::NAN).to_json_string(), "null");
        assert_eq!(Value::Float(f64::INFINITY).to_json_string(), "null");
    }

    #[test]
    fn accessors_and_conversions() {
        let v = Value::parse(
            r#"{"s":"x","i":3,"f":2.0,"g":2.5,"b":true,"n":null,"a":[1,2],"o":{"k":"v"}}"#,
        )
        .unwrap();
        assert_eq!(v["s"].as_str(), Some("x"));
        assert_eq!(v["i"].as_i64(), Some(3));
        assert_eq!(v["f"].as_i64(), Some(2));
        assert_eq!(v["g"].as_i64(), None);
        assert_eq!(v["a"][1].as_i64(), Some(2));
        assert_eq!(v["a"][9], Value::Null);
        assert_eq!(v["o"]["k"].as_str(), Some("v"));
        assert_eq!(v["missing"]["deeper"], Value::Null);
        assert_eq!(v.field::<String>("s").unwrap(), "x");
        assert_eq!(v.field::<String>("missing").unwrap(), "");
        assert_eq!(v.field::<i64>("n").unwrap(), 0);
        assert_eq!(v.field::<Vec<u8>>("a").unwrap(), vec![1, 2]);
        assert_eq!(v.field::<Option<bool>>("b").unwrap(), Some(true));
        assert_eq!(
            v.field::<String>("i").unwrap_err().message,
            "field \"i\": want a string, got number"
        );
        assert_eq!(
            v.field::<u8>("g").unwrap_err().message,
            "field \"g\": want an integer, got number"
        );
        assert_eq!(Value::Int(300).to_json().as_i64(), Some(300));
        assert!(u8::from_json(&Value::Int(300))
            .unwrap_err()
            .message
            .contains("out of range"));
        assert!(Value::Int(1).field::<i64>("x").is_err());
        assert_eq!(Value::Null.field::<i64>("x").unwrap(), 0);
        assert_eq!(u64::MAX.to_json(), Value::Float(u64::MAX as f64));
        assert_eq!(
            Vec::<i32>::from_json(&Value::parse("[1,\"x\"]").unwrap())
                .unwrap_err()
                .message,
            "[1]: want an integer, got string"
        );
    }

    #[test]
    fn raw_json_keeps_its_text() {
        let raw = RawJson::new(r#"{"b": 1,  "a": [2.50]}"#).unwrap();
        assert_eq!(raw.to_json_text(), r#"{"b": 1,  "a": [2.50]}"#);
        assert_eq!(raw.to_json().to_json_string(), r#"{"a":[2.5],"b":1}"#);
        let back = RawJson::from_json_text(br#" [1, "x"] "#).unwrap();
        assert_eq!(back.as_str(), r#" [1, "x"] "#);
        assert!(RawJson::new("{").is_err());
        assert!(RawJson::from_json_text(b"nope").is_err());
        assert_eq!(
            RawJson::from_json(&Value::Bool(true)).unwrap().as_str(),
            "true"
        );
        assert_eq!(Some(raw).to_json_text(), r#"{"a":[2.5],"b":1}"#);
        assert_eq!(String::from_json_text(br#""s""#).unwrap(), "s");
    }

    #[test]
    fn object_macro() {
        let id = String::from("u-1");
        let v = crate::object! { "userId" => id, "verified" => true, "n" => 3, "none" => Option::<i32>::None, "list" => vec!["a"] };
        assert_eq!(
            v.to_json_string(),
            r#"{"list":["a"],"n":3,"none":null,"userId":"u-1","verified":true}"#
        );
        assert_eq!(crate::object! {}.to_json_string(), "{}");
    }
}
