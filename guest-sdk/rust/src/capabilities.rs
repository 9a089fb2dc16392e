//! Outbound HTTP and secrets for step callbacks (abi/ABI.md §4.11, §4.12).

use std::collections::BTreeMap;
use std::time::Duration;

use crate::host;
use crate::json::{Map, ToJson, Value};
use crate::{Error, StepContext};

/// HttpRequest is an outbound request, made through the host: it checks the request against
/// the tenant's allowlist and records it in the run's audit trail.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HttpRequest {
    /// method defaults to GET when empty.
    pub method: String,
    /// url is absolute, http or https.
    pub url: String,
    pub headers: BTreeMap<String, Vec<String>>,
    pub body: Vec<u8>,
    /// timeout bounds the request below the host's own limit; None takes the host's.
    pub timeout: Option<Duration>,
}

impl HttpRequest {
    /// new starts a request with `method` to `url`.
    pub fn new(method: &str, url: &str) -> HttpRequest {
        HttpRequest {
            method: method.to_string(),
            url: url.to_string(),
            ..HttpRequest::default()
        }
    }

    pub fn get(url: &str) -> HttpRequest {
        HttpRequest::new("GET", url)
    }

    pub fn post(url: &str, body: impl Into<Vec<u8>>) -> HttpRequest {
        HttpRequest::new("POST", url).body(body)
    }

    /// header adds a value to the header `name`.
    pub fn header(mut self, name: &str, value: &str) -> HttpRequest {
        self.headers
            .entry(name.to_string())
            .or_default()
            .push(value.to_string());
        self
    }

    pub fn body(mut self, body: impl Into<Vec<u8>>) -> HttpRequest {
        self.body = body.into();
        self
    }

    pub fn timeout(mut self, d: Duration) -> HttpRequest {
        self.timeout = Some(d);
        self
    }

    fn to_wire(&self) -> Value {
        let mut m = Map::new();
        let method = if self.method.is_empty() {
            "GET"
        } else {
            &self.method
        };
        m.insert("method".into(), method.to_json());
        m.insert("url".into(), self.url.to_json());
        if !self.headers.is_empty() {
            m.insert("headers".into(), self.headers.to_json());
        }
        if !self.body.is_empty() {
            m.insert("body".into(), Value::String(base64_encode(&self.body)));
        }
        if let Some(d) = self.timeout {
            let ms = i64::try_from(d.as_millis()).unwrap_or(i64::MAX).max(1);
            m.insert("timeoutMs".into(), Value::Int(ms));
        }
        Value::Object(m)
    }
}

/// HttpResponse is what the host got back: any HTTP status, 4xx and 5xx included.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct HttpResponse {
    pub status: u16,
    pub headers: BTreeMap<String, Vec<String>>,
    pub body: Vec<u8>,
}

impl HttpResponse {
    /// text is the body as UTF-8 (invalid sequences replaced).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// json parses the body.
    pub fn json(&self) -> Result<Value, Error> {
        Value::parse_bytes(&self.body)
    }

    fn from_wire(data: &[u8]) -> Result<HttpResponse, Error> {
        let bad = |what: String| {
            Error::new(
                "http_failed",
                format!("the host's response is not valid: {}", what),
            )
        };
        let v = Value::parse_bytes(data).map_err(|e| bad(e.message))?;
        let status = v["status"]
            .as_i64()
            .and_then(|s| u16::try_from(s).ok())
            .ok_or_else(|| bad("no status".into()))?;
        let headers = v
            .field::<BTreeMap<String, Vec<String>>>("headers")
            .map_err(|e| bad(e.message))?;
        let body = match v["body"].as_str() {
            Some(b) => base64_decode(b).ok_or_else(|| bad("the body is not base64".into()))?,
            None => Vec::new(),
        };
        Ok(HttpResponse {
            status,
            headers,
            body,
        })
    }
}

impl StepContext {
    /// http makes an outbound HTTP request. A refusal or a failure to get a response is an
    /// Error with the host's code (`http_denied`, `http_timeout`, `http_too_large`,
    /// `http_failed`); any HTTP status, 500 included, is a response.
    pub fn http(&self, req: &HttpRequest) -> Result<HttpResponse, Error> {
        let reply = host::http_request(req.to_wire().to_json_string().as_bytes());
        if reply.status == host::STATUS_ERROR {
            return Err(host_error(&reply.data));
        }
        HttpResponse::from_wire(&reply.data)
    }

    /// secret returns the tenant's secret `name`, or an Error with code `secret_not_found`.
    /// The host redacts the value from this pass's step results, logs and errors, so keep it
    /// out of what the step returns: a replay would see "[redacted]" there.
    pub fn secret(&self, name: &str) -> Result<String, Error> {
        let reply = host::secret_get(name);
        if reply.status == host::STATUS_ERROR {
            return Err(host_error(&reply.data));
        }
        // Never put the value in the error: it would be stored (redacted, but still).
        String::from_utf8(reply.data)
            .map_err(|_| Error::new("secret_not_utf8", format!("secret {:?} is not UTF-8", name)))
    }
}

impl StepContext {
    /// signal sends `event` with `payload` to the run `run_id` of the same tenant, as a
    /// client's signal would (abi/ABI.md §4.13), and returns the host's EventSent
    /// (`{"state": "delivered" | "buffered", "duplicate": ...}`). It lands once however often the
    /// callback runs, as long as the callback makes its sends in the same order. An Error with
    /// code `event_refused` says the event was not taken (no such run, the run ended, its
    /// buffer is full, the payload over the tenant's limit).
    pub fn signal<P: ToJson>(&self, run_id: &str, event: &str, payload: &P) -> Result<Value, Error> {
        send_event(crate::object! { "runId" => run_id.to_string(), "event" => event.to_string(), "payload" => payload.to_json() })
    }

    /// broadcast sends `event` with `payload` to the whole tenant, as a client's broadcast
    /// would: it resolves the runs waiting on it and starts the workflows it triggers. The
    /// EventSent says how many it resolved and which runs it started. Once, as `signal`.
    pub fn broadcast<P: ToJson>(&self, event: &str, payload: &P) -> Result<Value, Error> {
        send_event(crate::object! { "broadcast" => true, "event" => event.to_string(), "payload" => payload.to_json() })
    }
}

fn send_event(req: Value) -> Result<Value, Error> {
    let reply = host::event_send(req.to_json_string().as_bytes());
    if reply.status == host::STATUS_ERROR {
        return Err(host_error(&reply.data));
    }
    Value::parse_bytes(&reply.data)
        .map_err(|_| Error::new("event_refused", "the host's answer is not valid JSON"))
}

// host_error reads an ERROR reply's ErrorInfo; anything else is kept whole under host_error.
fn host_error(data: &[u8]) -> Error {
    match Value::parse_bytes(data) {
        Ok(v) if v["message"].as_str().map_or(false, |m| !m.is_empty()) => Error::from_info(data),
        _ => Error::new("host_error", String::from_utf8_lossy(data).into_owned()),
    }
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// base64_encode is standard base64 with padding, as Go's encoding/json writes []byte.
pub(crate) fn base64_encode(data: &[u8]) -> String {
    let mut out = String::with_capacity((data.len() + 2) / 3 * 4);
    for chunk in data.chunks(3) {
        let n = (chunk[0] as u32) << 16
            | (*chunk.get(1).unwrap_or(&0) as u32) << 8
            | *chunk.get(2).unwrap_or(&0) as u32;
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// base64_decode reads standard base64; padding is optional, anything else outside the
/// alphabet is an error.
pub(crate) fn base64_decode(text: &str) -> Option<Vec<u8>> {
    let s = text.trim_end_matches('=').as_bytes();
    if text.len() - s.len() > 2 || s.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let mut acc = 0u32;
    let mut bits = 0;
    for &c in s {
        let d = ALPHABET.iter().position(|&a| a == c)? as u32;
        acc = acc << 6 | d;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips() {
        for (raw, enc) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64_encode(raw.as_bytes()), enc);
            assert_eq!(base64_decode(enc).unwrap(), raw.as_bytes());
        }
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(base64_decode(&base64_encode(&all)).unwrap(), all);
        assert_eq!(base64_decode("Zg").unwrap(), b"f");
        assert!(base64_decode("Z").is_none());
        assert!(base64_decode("Zm9v!").is_none());
        assert!(base64_decode("Zg===").is_none());
    }

    #[test]
    fn request_wire_shape() {
        let req = HttpRequest::post("https://api.example.com/x", "hi")
            .header("K", "v")
            .timeout(Duration::from_millis(5000));
        assert_eq!(
            req.to_wire().to_json_string(),
            r#"{"body":"aGk=","headers":{"K":["v"]},"method":"POST","timeoutMs":5000,"url":"https://api.example.com/x"}"#
        );
        assert_eq!(
            HttpRequest::new("", "http://a").to_wire().to_json_string(),
            r#"{"method":"GET","url":"http://a"}"#
        );
    }

    #[test]
    fn response_from_wire() {
        let r =
            HttpResponse::from_wire(br#"{"status":503,"headers":{"A":["1","2"]},"body":"b2s="}"#)
                .unwrap();
        assert_eq!(
            (r.status, r.text(), r.headers["A"].len()),
            (503, "ok".to_string(), 2)
        );
        let r = HttpResponse::from_wire(br#"{"status":204}"#).unwrap();
        assert!(r.body.is_empty() && r.headers.is_empty());
        assert_eq!(
            HttpResponse::from_wire(b"{}").unwrap_err().code,
            "http_failed"
        );
        assert_eq!(
            HttpResponse::from_wire(br#"{"status":200,"body":"*"}"#)
                .unwrap_err()
                .code,
            "http_failed"
        );
    }

    #[test]
    fn host_errors_keep_their_code() {
        let e = host_error(br#"{"code":"http_denied","message":"host not allowed"}"#);
        assert_eq!(e.to_string(), "http_denied: host not allowed");
        assert_eq!(host_error(b"garbage").code, "host_error");
    }
}
