//! A workflow's flow control and completion hooks (abi/ABI.md §7, a description's `flow` and
//! `onEnd`), with the host's rules. The host checks a description when the module is uploaded
//! and refuses the upload naming the fault; `Workflow::check` applies the same rules in the
//! SDK, so a native `#[test]` of a module's declarations fails before any upload, and a module
//! that breaks them traps in `wfhost_describe` with the reason on stderr (which the host quotes
//! in the upload's error).

use std::time::Duration;

use crate::json::{Map, ToJson, Value};
use crate::millis;

/// Bounds of abi/ABI.md §7, as abi/flow.go and abi/hooks.go hold them.
pub const MAX_FLOW_CONCURRENCY: u32 = 10_000;
pub const MAX_FLOW_RATE: u32 = 1_000;
/// MAX_FLOW_PERIOD bounds a rate's and a debounce's period: 7 days.
pub const MAX_FLOW_PERIOD: Duration = Duration::from_secs(7 * 24 * 3600);
pub const MIN_PRIORITY: i32 = -600;
pub const MAX_PRIORITY: i32 = 600;
pub const MAX_HOOKS: usize = 16;
pub const MAX_WEBHOOK_URL_BYTES: usize = 2048;
const MAX_PATH_LEN: usize = 200;
const MAX_PATH_SEGMENTS: usize = 16;
const MAX_PATH_INDEX: u64 = 1_000_000;
const MAX_NAME_LEN: usize = 200;

/// Flow is a workflow's flow control: how many of its runs may run at once per key, how many
/// may start per period per key, which starts replace a pending run, and the default priority
/// of its runs. A key is a path into the run's input (`"$.customerId"`, `"$.items[0].sku"`);
/// an empty key is one key for the whole workflow. The host enforces it across every host that
/// shares its store.
///
/// ```ignore
/// Flow::new()
///     .concurrency("$.customerId", 2)
///     .rate("$.customerId", 10, Duration::from_secs(60))
///     .debounce("$.customerId", Duration::from_secs(5))
///     .priority(-30)
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Flow {
    /// concurrency bounds the runs of a key started and not ended; a start past it waits.
    pub concurrency: Option<Concurrency>,
    /// rate bounds the runs of a key that start per period; a start past it is delayed.
    pub rate: Option<Rate>,
    /// debounce delays a start by its period; a later start of its key within it replaces the
    /// pending run's input.
    pub debounce: Option<Debounce>,
    /// priority is a run's default head start in seconds (-600 to 600); a start may give its own.
    pub priority: i32,
}

/// Concurrency is `Flow::concurrency`: at most `limit` (1 to 10000) runs of one key at once.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Concurrency {
    pub key: String,
    pub limit: u32,
}

/// Rate is `Flow::rate`: at most `limit` (1 to 1000) runs of one key start per `period`
/// (1 ms to 7 days, sent in whole milliseconds).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rate {
    pub key: String,
    pub limit: u32,
    pub period: Duration,
}

/// Debounce is `Flow::debounce`: starts of one key within `period` (1 ms to 7 days) of each
/// other make one run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Debounce {
    pub key: String,
    pub period: Duration,
}

impl Flow {
    pub fn new() -> Flow {
        Flow::default()
    }
    pub fn concurrency(mut self, key: &str, limit: u32) -> Flow {
        self.concurrency = Some(Concurrency {
            key: key.to_string(),
            limit,
        });
        self
    }
    pub fn rate(mut self, key: &str, limit: u32, period: Duration) -> Flow {
        self.rate = Some(Rate {
            key: key.to_string(),
            limit,
            period,
        });
        self
    }
    pub fn debounce(mut self, key: &str, period: Duration) -> Flow {
        self.debounce = Some(Debounce {
            key: key.to_string(),
            period,
        });
        self
    }
    pub fn priority(mut self, seconds: i32) -> Flow {
        self.priority = seconds;
        self
    }

    /// check applies abi/ABI.md §7 to the flow: limits, periods and the priority in range, key
    /// paths that parse. The messages are worded as the host's.
    pub fn check(&self) -> Result<(), String> {
        if let Some(c) = &self.concurrency {
            if c.limit < 1 || c.limit > MAX_FLOW_CONCURRENCY {
                return Err(format!(
                    "flow.concurrency.limit {} out of range 1..{}",
                    c.limit, MAX_FLOW_CONCURRENCY
                ));
            }
            check_path(&c.key).map_err(|e| format!("flow.concurrency.key: {}", e))?;
        }
        if let Some(r) = &self.rate {
            if r.limit < 1 || r.limit > MAX_FLOW_RATE {
                return Err(format!(
                    "flow.rate.limit {} out of range 1..{}",
                    r.limit, MAX_FLOW_RATE
                ));
            }
            check_period("flow.rate.periodMs", r.period)?;
            check_path(&r.key).map_err(|e| format!("flow.rate.key: {}", e))?;
        }
        if let Some(d) = &self.debounce {
            check_period("flow.debounce.periodMs", d.period)?;
            check_path(&d.key).map_err(|e| format!("flow.debounce.key: {}", e))?;
        }
        if self.priority < MIN_PRIORITY || self.priority > MAX_PRIORITY {
            return Err(format!(
                "flow.priority {} out of range {}..{} (seconds)",
                self.priority, MIN_PRIORITY, MAX_PRIORITY
            ));
        }
        Ok(())
    }
}

fn check_period(what: &str, d: Duration) -> Result<(), String> {
    let ms = millis(d);
    if ms < 1 || ms > millis(MAX_FLOW_PERIOD) {
        return Err(format!(
            "{} {} out of range 1..{}",
            what,
            ms,
            millis(MAX_FLOW_PERIOD)
        ));
    }
    Ok(())
}

/// check_path parses a key path as the host does: "" (no key), or `$` followed by 1 to 16
/// segments, each `.field` (letters, digits, `_`, `-`) or `[index]` (0 to 1000000), at most
/// 200 bytes in all.
fn check_path(s: &str) -> Result<(), String> {
    if s.is_empty() {
        return Ok(());
    }
    if s.len() > MAX_PATH_LEN {
        return Err(format!(
            "path is {} bytes, the limit is {}",
            s.len(),
            MAX_PATH_LEN
        ));
    }
    let b = s.as_bytes();
    if b[0] != b'$' {
        return Err(format!("path {:?} does not start with $", s));
    }
    let mut i = 1;
    let mut segments = 0;
    while i < b.len() {
        if segments == MAX_PATH_SEGMENTS {
            return Err(format!(
                "path {:?} has more than {} segments",
                s, MAX_PATH_SEGMENTS
            ));
        }
        match b[i] {
            b'.' => {
                let start = i + 1;
                let mut end = start;
                while end < b.len()
                    && (b[end].is_ascii_alphanumeric() || b[end] == b'_' || b[end] == b'-')
                {
                    end += 1;
                }
                if end == start {
                    return Err(format!(
                        "path {:?}: a field name after . must be letters, digits, _ or -",
                        s
                    ));
                }
                i = end;
            }
            b'[' => {
                let close = match b[i..].iter().position(|&c| c == b']') {
                    Some(n) if n >= 2 => i + n,
                    _ => return Err(format!("path {:?}: [ must hold an array index", s)),
                };
                let inner = &s[i + 1..close];
                if !is_index(inner) {
                    return Err(format!("path {:?}: [{}] is not an array index", s, inner));
                }
                i = close + 1;
            }
            c => {
                let shown = s[i..].chars().next().unwrap_or(c as char);
                return Err(format!(
                    "path {:?}: unexpected {:?} (a path is $ then .field or [index] segments)",
                    s, shown
                ));
            }
        }
        segments += 1;
    }
    if segments == 0 {
        return Err(format!(
            "path {:?} names the whole input; name a field of it",
            s
        ));
    }
    Ok(())
}

/// is_index is the host's test of an array index (Go's strconv.Atoi, then 0 to 1000000, no
/// `+`): digits, or a `-` before digits that read as zero.
fn is_index(s: &str) -> bool {
    let (neg, digits) = match s.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|c| c.is_ascii_digit()) {
        return false;
    }
    let mut n: u64 = 0;
    for c in digits.bytes() {
        n = n * 10 + u64::from(c - b'0');
        if n > MAX_PATH_INDEX {
            return false;
        }
    }
    !neg || n == 0
}

/// The ABI's Flow JSON, as the Go SDK writes it: absent parts, an empty key and a zero
/// priority are left out; periods are whole milliseconds.
impl ToJson for Flow {
    fn to_json(&self) -> Value {
        fn part(key: &str, limit: Option<u32>, period: Option<Duration>) -> Value {
            let mut m = Map::new();
            if !key.is_empty() {
                m.insert("key".into(), key.to_json());
            }
            if let Some(l) = limit.filter(|&l| l != 0) {
                m.insert("limit".into(), l.to_json());
            }
            if let Some(p) = period.map(millis).filter(|&p| p != 0) {
                m.insert("periodMs".into(), p.to_json());
            }
            Value::Object(m)
        }
        let mut m = Map::new();
        if let Some(c) = &self.concurrency {
            m.insert("concurrency".into(), part(&c.key, Some(c.limit), None));
        }
        if let Some(r) = &self.rate {
            m.insert("rate".into(), part(&r.key, Some(r.limit), Some(r.period)));
        }
        if let Some(d) = &self.debounce {
            m.insert("debounce".into(), part(&d.key, None, Some(d.period)));
        }
        if self.priority != 0 {
            m.insert("priority".into(), self.priority.to_json());
        }
        Value::Object(m)
    }
}

/// RunEnd is a status a run ends with, which a hook may fire on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunEnd {
    Completed,
    Failed,
    Cancelled,
}

impl RunEnd {
    fn as_str(self) -> &'static str {
        match self {
            RunEnd::Completed => "completed",
            RunEnd::Failed => "failed",
            RunEnd::Cancelled => "cancelled",
        }
    }
}

/// HookTarget is what a hook does: start a workflow of the tenant (`version` "" for its latest
/// version when the run ends), or POST to a webhook (an http or https URL), signed with the
/// tenant's secret. Either gets the ended run: `{"runId", "workflow", "version", "status",
/// "output", "error", "endedAt"}`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HookTarget {
    Start { workflow: String, version: String },
    Webhook(String),
}

/// Hook is a completion hook (a workflow's `onEnd`): when a run of the workflow ends with a
/// status in `when`, the host does `target`. What a hook does never changes the ended run.
///
/// ```ignore
/// Hook::start(&[RunEnd::Completed], "welcome-email")
/// Hook::webhook(&[RunEnd::Failed, RunEnd::Cancelled], "https://ops.example.com/wfhost")
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hook {
    pub when: Vec<RunEnd>,
    pub target: HookTarget,
}

impl Hook {
    /// start starts the latest version of `workflow` when a run ends with a status in `when`.
    pub fn start(when: &[RunEnd], workflow: &str) -> Hook {
        Hook {
            when: when.to_vec(),
            target: HookTarget::Start {
                workflow: workflow.to_string(),
                version: String::new(),
            },
        }
    }

    /// webhook POSTs the ended run to `url` when a run ends with a status in `when`.
    pub fn webhook(when: &[RunEnd], url: &str) -> Hook {
        Hook {
            when: when.to_vec(),
            target: HookTarget::Webhook(url.to_string()),
        }
    }

    /// version pins a start hook to that version of its workflow; a webhook has none to pin.
    pub fn version(mut self, v: &str) -> Hook {
        if let HookTarget::Start { version, .. } = &mut self.target {
            *version = v.to_string();
        }
        self
    }

    /// check applies abi/ABI.md §7 to the hook: 1 to 3 distinct statuses, a start's workflow
    /// name and version, a webhook's URL. The messages are worded as the host's.
    pub fn check(&self) -> Result<(), String> {
        if self.when.is_empty() {
            return Err(
                "when is empty: name at least one of completed, failed, cancelled".to_string(),
            );
        }
        for (i, s) in self.when.iter().enumerate() {
            if self.when[..i].contains(s) {
                return Err(format!("when: {:?} is named twice", s.as_str()));
            }
        }
        match &self.target {
            HookTarget::Start { workflow, version } => {
                check_name("start workflow", workflow)?;
                check_text("start version", version, MAX_NAME_LEN)
            }
            HookTarget::Webhook(url) => check_webhook_url(url),
        }
    }
}

/// The ABI's Hook JSON, as the Go SDK writes it.
impl ToJson for Hook {
    fn to_json(&self) -> Value {
        let mut m = Map::new();
        let when: Vec<&str> = self.when.iter().map(|s| s.as_str()).collect();
        m.insert("when".into(), when.to_json());
        match &self.target {
            HookTarget::Start { workflow, version } => {
                let mut s = Map::new();
                s.insert("workflow".into(), workflow.to_json());
                if !version.is_empty() {
                    s.insert("version".into(), version.to_json());
                }
                m.insert("start".into(), Value::Object(s));
            }
            HookTarget::Webhook(url) => {
                m.insert("webhook".into(), url.to_json());
            }
        }
        Value::Object(m)
    }
}

/// check_hooks applies the bound on a workflow's onEnd and each hook's rules.
pub(crate) fn check_hooks(hooks: &[Hook]) -> Result<(), String> {
    if hooks.len() > MAX_HOOKS {
        return Err(format!(
            "onEnd has {} hooks, the limit is {}",
            hooks.len(),
            MAX_HOOKS
        ));
    }
    for (i, h) in hooks.iter().enumerate() {
        h.check().map_err(|e| format!("onEnd[{}]: {}", i, e))?;
    }
    Ok(())
}

/// is_control is the host's set of control characters: C0, DEL and C1.
fn is_control(c: char) -> bool {
    c < '\u{20}' || ('\u{7f}'..'\u{a0}').contains(&c)
}

/// check_name is abi.CheckName: 1 to 200 bytes, no `#`, no `/`, no control character.
pub(crate) fn check_name(what: &str, name: &str) -> Result<(), String> {
    if name.is_empty() {
        return Err(format!("{} name is empty", what));
    }
    if name.len() > MAX_NAME_LEN {
        return Err(format!(
            "{} name is {} bytes, the limit is {}",
            what,
            name.len(),
            MAX_NAME_LEN
        ));
    }
    if name.contains('#') {
        return Err(format!(
            "{} name {:?} contains \"#\", which marks repeated steps",
            what, name
        ));
    }
    if name.contains('/') {
        return Err(format!("{} name {:?} contains \"/\"", what, name));
    }
    if let Some(c) = name.chars().find(|&c| is_control(c)) {
        return Err(format!(
            "{} name {:?} contains the control character U+{:04X}",
            what, name, c as u32
        ));
    }
    Ok(())
}

/// check_text is abi.CheckText for a Rust string (always UTF-8): at most max bytes, no NUL.
pub(crate) fn check_text(what: &str, s: &str, max: usize) -> Result<(), String> {
    if s.len() > max {
        return Err(format!(
            "not storable: {} is {} bytes, the limit is {}",
            what,
            s.len(),
            max
        ));
    }
    if s.contains('\0') {
        return Err(format!(
            "not storable: {} contains a NUL character",
            what
        ));
    }
    Ok(())
}

/// check_webhook_url is abi.CheckWebhookURL as far as a guest without Go's URL parser can
/// follow it: at most 2048 bytes, no NUL, control character or space, scheme http or https,
/// a host, no user information, no fragment. The host parses the URL too, and refuses at
/// upload what its parser refuses (a malformed port or escape, say).
fn check_webhook_url(raw: &str) -> Result<(), String> {
    check_text("webhook URL", raw, MAX_WEBHOOK_URL_BYTES)?;
    if let Some(c) = raw.chars().find(|&c| is_control(c) || c == ' ') {
        return Err(format!(
            "webhook URL contains the character U+{:04X}",
            c as u32
        ));
    }
    let shown = truncate(raw, 80);
    let rest = match raw.find("://") {
        Some(i)
            if raw[..i].eq_ignore_ascii_case("http") || raw[..i].eq_ignore_ascii_case("https") =>
        {
            &raw[i + 3..]
        }
        _ => {
            return Err(format!(
                "webhook URL {:?}: the scheme must be http or https",
                shown
            ))
        }
    };
    let authority = &rest[..rest
        .find(|c| c == '/' || c == '?' || c == '#')
        .unwrap_or(rest.len())];
    // As Go's parser reads it: user information ends at the last '@'; an IPv6 host is in [].
    let (user, host_port) = match authority.rfind('@') {
        Some(i) => (true, &authority[i + 1..]),
        None => (false, authority),
    };
    let host = if let Some(v6) = host_port.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        host_port.split(':').next().unwrap_or("")
    };
    if host.is_empty() {
        return Err(format!("webhook URL {:?} has no host", shown));
    }
    if user {
        return Err(format!(
            "webhook URL {:?} carries user information; sign with the tenant's secret instead",
            shown
        ));
    }
    if raw.contains('#') {
        return Err(format!("webhook URL {:?} has a fragment", shown));
    }
    Ok(())
}

/// truncate is the host's: the first n bytes and "..." (cut at a character boundary here).
fn truncate(s: &str, n: usize) -> String {
    if s.len() <= n {
        return s.to_string();
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}...", &s[..end])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flow_wire_shape() {
        let f = Flow::new()
            .concurrency("$.customerId", 2)
            .rate("$.customerId", 10, Duration::from_secs(60))
            .debounce("", Duration::from_secs(5))
            .priority(-30);
        assert_eq!(f.check(), Ok(()));
        // Keys in the order of the SDK's JSON objects (sorted); the host reads the same Flow
        // as from the Go SDK's {"concurrency":..,"rate":..,"debounce":..,"priority":-30}.
        assert_eq!(
            f.to_json().to_json_string(),
            r#"{"concurrency":{"key":"$.customerId","limit":2},"debounce":{"periodMs":5000},"priority":-30,"rate":{"key":"$.customerId","limit":10,"periodMs":60000}}"#
        );
        assert_eq!(Flow::new().to_json().to_json_string(), "{}");
    }

    #[test]
    fn flow_bounds() {
        let day = Duration::from_secs(24 * 3600);
        let cases: Vec<(Flow, &str)> = vec![
            (
                Flow::new().concurrency("", 0),
                "flow.concurrency.limit 0 out of range 1..10000",
            ),
            (
                Flow::new().concurrency("", 10_001),
                "flow.concurrency.limit 10001 out of range 1..10000",
            ),
            (
                Flow::new().rate("", 1_001, day),
                "flow.rate.limit 1001 out of range 1..1000",
            ),
            (
                Flow::new().rate("", 0, day),
                "flow.rate.limit 0 out of range 1..1000",
            ),
            (
                Flow::new().rate("", 1, Duration::ZERO),
                "flow.rate.periodMs 0 out of range 1..604800000",
            ),
            // Under a millisecond is sent as 0, which the host refuses.
            (
                Flow::new().rate("", 1, Duration::from_micros(999)),
                "flow.rate.periodMs 0 out of range 1..604800000",
            ),
            (
                Flow::new().debounce("", 7 * day + Duration::from_millis(1)),
                "flow.debounce.periodMs 604800001 out of range 1..604800000",
            ),
            (
                Flow::new().debounce("", Duration::MAX),
                "flow.debounce.periodMs 9223372036854775807 out of range 1..604800000",
            ),
            (
                Flow::new().priority(601),
                "flow.priority 601 out of range -600..600 (seconds)",
            ),
            (
                Flow::new().priority(i32::MIN),
                "flow.priority -2147483648 out of range -600..600 (seconds)",
            ),
        ];
        for (f, want) in cases {
            assert_eq!(f.check(), Err(want.to_string()), "{:?}", f);
        }
        let edges = Flow::new()
            .concurrency("", 10_000)
            .rate("", 1_000, 7 * day)
            .debounce("", Duration::from_millis(1))
            .priority(-600);
        assert_eq!(edges.check(), Ok(()));
    }

    #[test]
    fn key_paths() {
        let long = format!("${}", ".a".repeat(100)); // 201 bytes
        let deep = "$".to_string() + &"[0]".repeat(17);
        for good in [
            "",
            "$.a",
            "$.customer_id-2.x",
            "$[0]",
            "$.items[1000000].sku",
            "$[-0]",
            "$[007]",
        ] {
            assert_eq!(
                Flow::new().concurrency(good, 1).check(),
                Ok(()),
                "{:?}",
                good
            );
        }
        let bad: Vec<(String, &str)> = vec![
            (
                "$".into(),
                r#"path "$" names the whole input; name a field of it"#,
            ),
            (
                "customerId".into(),
                r#"path "customerId" does not start with $"#,
            ),
            (
                "$.".into(),
                r#"path "$.": a field name after . must be letters, digits, _ or -"#,
            ),
            (
                "$.a b".into(),
                r#"path "$.a b": unexpected ' ' (a path is $ then .field or [index] segments)"#,
            ),
            (
                "$.é".into(),
                r#"path "$.é": a field name after . must be letters, digits, _ or -"#,
            ),
            (
                "$é".into(),
                r#"path "$é": unexpected 'é' (a path is $ then .field or [index] segments)"#,
            ),
            ("$[]".into(), r#"path "$[]": [ must hold an array index"#),
            ("$[0".into(), r#"path "$[0": [ must hold an array index"#),
            (
                "$[+1]".into(),
                r#"path "$[+1]": [+1] is not an array index"#,
            ),
            (
                "$[-1]".into(),
                r#"path "$[-1]": [-1] is not an array index"#,
            ),
            (
                "$[1000001]".into(),
                r#"path "$[1000001]": [1000001] is not an array index"#,
            ),
            (
                "$[99999999999999999999999]".into(),
                r#"path "$[99999999999999999999999]": [99999999999999999999999] is not an array index"#,
            ),
            ("$[a]".into(), r#"path "$[a]": [a] is not an array index"#),
            (long, "path is 201 bytes, the limit is 200"),
        ];
        for (path, want) in bad {
            assert_eq!(
                Flow::new().rate(&path, 1, Duration::from_secs(1)).check(),
                Err(format!("flow.rate.key: {}", want)),
                "{:?}",
                path
            );
        }
        assert_eq!(
            Flow::new().debounce(&deep, Duration::from_secs(1)).check(),
            Err(format!(
                "flow.debounce.key: path {:?} has more than 16 segments",
                deep
            ))
        );
    }

    #[test]
    fn hook_wire_shape() {
        let hooks = vec![
            Hook::start(&[RunEnd::Completed], "next"),
            Hook::webhook(
                &[RunEnd::Failed, RunEnd::Cancelled],
                "https://ops.example.com/wfhost",
            ),
            Hook::start(&[RunEnd::Completed], "audit").version("2"),
            Hook::webhook(&[RunEnd::Failed], "https://a.example.com/").version("ignored"),
        ];
        assert_eq!(check_hooks(&hooks), Ok(()));
        let text: Vec<String> = hooks.iter().map(|h| h.to_json().to_json_string()).collect();
        assert_eq!(
            text,
            vec![
                r#"{"start":{"workflow":"next"},"when":["completed"]}"#,
                r#"{"webhook":"https://ops.example.com/wfhost","when":["failed","cancelled"]}"#,
                r#"{"start":{"version":"2","workflow":"audit"},"when":["completed"]}"#,
                r#"{"webhook":"https://a.example.com/","when":["failed"]}"#,
            ]
        );
    }

    #[test]
    fn hook_rules() {
        let ok = |h: Hook| assert_eq!(h.check(), Ok(()), "{:?}", h);
        ok(Hook::webhook(&[RunEnd::Completed], "HTTP://example.com"));
        ok(Hook::webhook(
            &[RunEnd::Completed],
            "http://[::1]:8080/x?y=1",
        ));
        ok(Hook::start(
            &[RunEnd::Completed, RunEnd::Failed, RunEnd::Cancelled],
            &"w".repeat(200),
        )
        .version(&"v".repeat(200)));
        let long_url = format!("https://example.com/{}", "a".repeat(3000));
        let cases: Vec<(Hook, String)> = vec![
            (Hook::start(&[], "w"), "when is empty: name at least one of completed, failed, cancelled".into()),
            (Hook::start(&[RunEnd::Failed, RunEnd::Failed], "w"), r#"when: "failed" is named twice"#.into()),
            (Hook::start(&[RunEnd::Failed], ""), "start workflow name is empty".into()),
            (Hook::start(&[RunEnd::Failed], &"w".repeat(201)), "start workflow name is 201 bytes, the limit is 200".into()),
            (Hook::start(&[RunEnd::Failed], "a/b"), r#"start workflow name "a/b" contains "/""#.into()),
            (Hook::start(&[RunEnd::Failed], "a#1"), r##"start workflow name "a#1" contains "#", which marks repeated steps"##.into()),
            (Hook::start(&[RunEnd::Failed], "a\u{85}"), "start workflow name \"a\\u{85}\" contains the control character U+0085".into()),
            (Hook::start(&[RunEnd::Failed], "w").version("v\0"), "not storable: start version contains a NUL character".into()),
            (Hook::start(&[RunEnd::Failed], "w").version(&"v".repeat(201)), "not storable: start version is 201 bytes, the limit is 200".into()),
            (Hook::webhook(&[RunEnd::Failed], ""), r#"webhook URL "": the scheme must be http or https"#.into()),
            (Hook::webhook(&[RunEnd::Failed], "javascript:alert(1)"), r#"webhook URL "javascript:alert(1)": the scheme must be http or https"#.into()),
            (Hook::webhook(&[RunEnd::Failed], "ftp://example.com/"), r#"webhook URL "ftp://example.com/": the scheme must be http or https"#.into()),
            (Hook::webhook(&[RunEnd::Failed], "https://u:p@example.com/"), r#"webhook URL "https://u:p@example.com/" carries user information; sign with the tenant's secret instead"#.into()),
            (Hook::webhook(&[RunEnd::Failed], "https:///x"), r#"webhook URL "https:///x" has no host"#.into()),
            (Hook::webhook(&[RunEnd::Failed], "https://:80/"), r#"webhook URL "https://:80/" has no host"#.into()),
            (Hook::webhook(&[RunEnd::Failed], "https://example.com/#top"), r##"webhook URL "https://example.com/#top" has a fragment"##.into()),
            (Hook::webhook(&[RunEnd::Failed], "https://example.com/a b"), "webhook URL contains the character U+0020".into()),
            (Hook::webhook(&[RunEnd::Failed], "https://example.com/\n"), "webhook URL contains the character U+000A".into()),
            (Hook::webhook(&[RunEnd::Failed], "https://example.com/\0"), "not storable: webhook URL contains a NUL character".into()),
            (Hook::webhook(&[RunEnd::Failed], &long_url), "not storable: webhook URL is 3020 bytes, the limit is 2048".into()),
        ];
        for (h, want) in cases {
            assert_eq!(h.check(), Err(want), "{:?}", h);
        }
        let many = vec![Hook::start(&[RunEnd::Completed], "w"); 17];
        assert_eq!(
            check_hooks(&many),
            Err("onEnd has 17 hooks, the limit is 16".to_string())
        );
        assert_eq!(check_hooks(&many[..16]), Ok(()));
        let bad = vec![
            Hook::start(&[RunEnd::Completed], "w"),
            Hook::start(&[], "w"),
        ];
        assert_eq!(
            check_hooks(&bad),
            Err(
                "onEnd[1]: when is empty: name at least one of completed, failed, cancelled"
                    .to_string()
            )
        );
        // A long URL is cut in the message at a character boundary, as the host cuts it.
        let wide = format!("ftp://{}", "é".repeat(50));
        let err = Hook::webhook(&[RunEnd::Failed], &wide).check().unwrap_err();
        assert!(
            err.ends_with("...\": the scheme must be http or https"),
            "{}",
            err
        );
    }
}
