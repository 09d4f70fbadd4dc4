//! The prefixes of a JSON vty reply, read as the reply streams in.
//!
//! zebra's `show ip route table N json` and bgpd's `... advertised-routes
//! json` are objects keyed by prefix; at 100 000 routes the text is ~55 MB
//! (~550-670 bytes a route), and the core needs only the keys. A
//! [`KeyScan`] is fed the reply in the chunks the socket delivers and keeps
//! only the prefixes, so the text is never held whole.
//!
//! Contract: it tracks JSON structure (objects, arrays, strings and their
//! escapes), not the full grammar: brackets must balance and nest at most
//! [`MAX_DEPTH`] deep, the reply must be one object with nothing after it,
//! and every collected key must be a prefix; anything else is a
//! [`JsonError`] value, never a panic. Scalars are skipped unchecked. A key
//! without a length (`10.0.0.0`) is completed from its entry's `prefixLen`,
//! as bgpd prints for some address families. Depends on `model` only.

use super::json::JsonError;
use crate::model::{Prefix, PrefixSet};

/// Deepest nesting accepted (serde_json's own recursion limit).
pub const MAX_DEPTH: usize = 128;
/// Longest key kept: a prefix is at most ~43 bytes; longer keys at the
/// collected level are an error, elsewhere they are never compared.
const MAX_KEY: usize = 64;

/// Which object's keys are collected.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeysOf {
    /// The reply's own keys (zebra's route table).
    TopLevel,
    /// The keys of the object under this top-level key (bgpd's
    /// `advertisedRoutes`).
    Member(&'static str),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Role {
    /// Nothing collected here or below.
    Other,
    /// The reply itself when the keys are a member's.
    Container,
    /// The object whose keys are collected.
    Target,
    /// An entry of the target (its `prefixLen` may complete a key).
    Entry,
}

#[derive(Debug)]
struct Frame {
    object: bool,
    expect_key: bool,
    role: Role,
    /// This object's current key, when its role needs it.
    key: Vec<u8>,
}

/// An incremental reader of a reply's prefixes (see the module doc).
#[derive(Debug)]
pub struct KeyScan {
    keys_of: KeysOf,
    stack: Vec<Frame>,
    in_string: bool,
    escaped: bool,
    /// The string being read is a key to keep.
    capturing: bool,
    capture: Vec<u8>,
    /// A target key without a length, waiting for its entry's `prefixLen`.
    pending: Option<String>,
    pending_len: Option<u64>,
    /// Reading the digits of a `prefixLen`.
    in_len: bool,
    seen_value: bool,
    done: bool,
    /// In the reply's order; sorted once, at the end ([`PrefixSet`]).
    prefixes: Vec<Prefix>,
    error: Option<JsonError>,
}

impl KeyScan {
    /// A scan collecting the keys of `keys_of`.
    pub fn new(keys_of: KeysOf) -> KeyScan {
        KeyScan {
            keys_of,
            stack: Vec::new(),
            in_string: false,
            escaped: false,
            capturing: false,
            capture: Vec::new(),
            pending: None,
            pending_len: None,
            in_len: false,
            seen_value: false,
            done: false,
            prefixes: Vec::new(),
            error: None,
        }
    }

    /// Reads the next chunk of the reply. After the first error the rest is
    /// skipped (the reply must still be read to its trailer).
    pub fn feed(&mut self, chunk: &[u8]) {
        for &b in chunk {
            if self.error.is_some() {
                return;
            }
            if let Err(e) = self.byte(b) {
                self.error = Some(e);
            }
        }
    }

    /// The prefixes, once the whole reply was fed.
    pub fn finish(mut self) -> Result<PrefixSet, JsonError> {
        if let Some(e) = self.error.take() {
            return Err(e);
        }
        if !self.done {
            return Err(shape(if self.seen_value {
                "the reply ended inside its JSON object"
            } else {
                "the reply holds no JSON object"
            }));
        }
        Ok(PrefixSet::from(self.prefixes))
    }

    fn byte(&mut self, b: u8) -> Result<(), JsonError> {
        if self.in_string {
            if self.escaped {
                self.escaped = false;
            } else if b == b'\\' {
                self.escaped = true;
            } else if b == b'"' {
                self.in_string = false;
                return self.end_string();
            }
            if self.capturing && self.capture.len() <= MAX_KEY {
                self.capture.push(b);
            }
            return Ok(());
        }
        if self.in_len && !b.is_ascii_digit() {
            self.in_len = false;
        }
        if self.done && !b.is_ascii_whitespace() {
            return Err(shape("text after the reply's JSON object"));
        }
        if self.stack.is_empty() && !b.is_ascii_whitespace() && b != b'{' {
            return Err(shape("the reply is not a JSON object"));
        }
        match b {
            b'"' => {
                self.in_string = true;
                self.capture.clear();
                self.capturing = self
                    .stack
                    .last()
                    .is_some_and(|f| f.object && f.expect_key && f.role != Role::Other);
            }
            b'{' | b'[' => self.open(b == b'{')?,
            b'}' | b']' => self.close(b == b'}')?,
            b':' => {
                if let Some(f) = self.stack.last_mut() {
                    f.expect_key = false;
                }
            }
            b',' => {
                self.end_target_scalar()?;
                if let Some(f) = self.stack.last_mut() {
                    f.expect_key = f.object;
                }
            }
            b'0'..=b'9' => {
                let in_entry_len = self.stack.last().is_some_and(|f| {
                    f.role == Role::Entry && f.object && !f.expect_key && f.key == b"prefixLen"
                });
                if in_entry_len {
                    let d = u64::from(b - b'0');
                    let now = if self.in_len {
                        self.pending_len.unwrap_or(0)
                    } else {
                        0
                    };
                    self.pending_len = now.checked_mul(10).and_then(|n| n.checked_add(d));
                    self.in_len = true;
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn open(&mut self, object: bool) -> Result<(), JsonError> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(shape("the reply nests deeper than 128 levels"));
        }
        let role = match self.stack.last() {
            None => match self.keys_of {
                KeysOf::TopLevel => Role::Target,
                KeysOf::Member(_) => Role::Container,
            },
            Some(f) => match (f.role, self.keys_of) {
                (Role::Container, KeysOf::Member(m)) if object && f.key == m.as_bytes() => {
                    Role::Target
                }
                (Role::Target, _) => Role::Entry,
                _ => Role::Other,
            },
        };
        self.seen_value = true;
        self.stack.push(Frame {
            object,
            expect_key: object,
            role,
            key: Vec::new(),
        });
        Ok(())
    }

    fn close(&mut self, object: bool) -> Result<(), JsonError> {
        self.end_target_scalar()?;
        let Some(f) = self.stack.pop() else {
            return Err(shape("a bracket closes what was never opened"));
        };
        if f.object != object {
            return Err(shape("a bracket closes a different kind of bracket"));
        }
        if f.role == Role::Entry {
            self.complete_pending()?;
        }
        if self.stack.is_empty() {
            self.done = true;
        }
        Ok(())
    }

    /// A key has been read: kept as its frame's key, and collected when it
    /// is a target key.
    fn end_string(&mut self) -> Result<(), JsonError> {
        if !self.capturing {
            return Ok(());
        }
        self.capturing = false;
        let key = std::mem::take(&mut self.capture);
        let Some(f) = self.stack.last_mut() else {
            return Ok(());
        };
        if f.role != Role::Target {
            f.key = key;
            return Ok(());
        }
        if key.len() > MAX_KEY {
            return Err(shape("a route key is longer than any prefix"));
        }
        let key = String::from_utf8_lossy(&key).into_owned();
        if key.contains('/') {
            let p = key
                .parse::<Prefix>()
                .map_err(|source| JsonError::Prefix { key, source })?;
            self.prefixes.push(p);
        } else {
            self.pending = Some(key);
            self.pending_len = None;
        }
        Ok(())
    }

    /// A key without a length whose value is not an object still counts
    /// (length 0, as the typed parse read a missing `prefixLen`).
    fn end_target_scalar(&mut self) -> Result<(), JsonError> {
        if self.stack.last().is_some_and(|f| f.role == Role::Target) {
            self.complete_pending()?;
        }
        Ok(())
    }

    fn complete_pending(&mut self) -> Result<(), JsonError> {
        let Some(key) = self.pending.take() else {
            return Ok(());
        };
        let len = self.pending_len.take().unwrap_or(0);
        let p = format!("{key}/{len}")
            .parse::<Prefix>()
            .map_err(|source| JsonError::Prefix { key, source })?;
        self.prefixes.push(p);
        Ok(())
    }
}

fn shape(what: &str) -> JsonError {
    JsonError::Shape(what.to_string())
}

/// The keys of `keys_of` in a whole reply text.
pub fn scan_text(text: &str, keys_of: KeysOf) -> Result<PrefixSet, JsonError> {
    let mut s = KeyScan::new(keys_of);
    s.feed(text.as_bytes());
    s.finish()
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn set(ps: &[&str]) -> PrefixSet {
        ps.iter().map(|p| p.parse().unwrap()).collect()
    }

    #[test]
    fn top_level_keys_and_nothing_below() {
        let t = r#"{"192.0.2.10/32":[{"prefix":"198.51.100.1/32","nexthops":[{"x":"}]\"{"}]}],
                    "2001:db8::1/128":[]}"#;
        assert_eq!(
            scan_text(t, KeysOf::TopLevel).unwrap(),
            set(&["192.0.2.10/32", "2001:db8::1/128"])
        );
        assert!(scan_text("{}", KeysOf::TopLevel).unwrap().is_empty());
    }

    #[test]
    fn member_keys_with_and_without_length() {
        let t = r#"{"bgpStatusCodes":{"192.0.2.99/32":"x"},"advertisedRoutes":{"192.0.2.10/32":{"prefixLen":31},
                    "10.0.0.0":{"addrPrefix":"10.0.0.0","prefixLen":8,"path":"{"}},"totalPrefixCounter":2}"#;
        assert_eq!(
            scan_text(t, KeysOf::Member("advertisedRoutes")).unwrap(),
            set(&["192.0.2.10/32", "10.0.0.0/8"])
        );
        let t = r#"{"advertisedRoutes":{"0.0.0.0":{}}}"#;
        assert_eq!(
            scan_text(t, KeysOf::Member("advertisedRoutes")).unwrap(),
            set(&["0.0.0.0/0"])
        );
    }

    #[test]
    fn malformed_replies_are_errors() {
        for bad in [
            "",
            "  ",
            "% Unknown command",
            "[]",
            r#"{"192.0.2.10/32":[}"#,
            r#"{"192.0.2.10/32":[]"#,
            r#"{"x":[]}"#,
            r#"{} {}"#,
            "}",
        ] {
            assert!(scan_text(bad, KeysOf::TopLevel).is_err(), "{bad:?}");
        }
        let deep = format!("{{\"a\":{}{}}}", "[".repeat(200), "]".repeat(200));
        assert!(scan_text(&deep, KeysOf::TopLevel).is_err());
        let long = format!("{{\"{}\":[]}}", "1".repeat(100));
        assert!(scan_text(&long, KeysOf::TopLevel).is_err());
    }

    proptest! {
        #[test]
        fn any_chunking_gives_the_same_answer(cut in proptest::collection::vec(0usize..200, 0..8)) {
            let t = r#"{"advertisedRoutes":{"192.0.2.10/32":{"prefixLen":32,"s":"a\"}"},"10.1.0.0":{"prefixLen":16}},"n":1}"#;
            let mut cuts: Vec<usize> = cut.into_iter().map(|c| c % t.len()).collect();
            cuts.sort_unstable();
            let mut s = KeyScan::new(KeysOf::Member("advertisedRoutes"));
            let mut at = 0;
            for c in cuts {
                s.feed(&t.as_bytes()[at..c]);
                at = c;
            }
            s.feed(&t.as_bytes()[at..]);
            prop_assert_eq!(s.finish().unwrap(), set(&["192.0.2.10/32", "10.1.0.0/16"]));
        }

        #[test]
        fn arbitrary_bytes_never_panic(raw in proptest::collection::vec(any::<u8>(), 0..400)) {
            let mut s = KeyScan::new(KeysOf::Member("advertisedRoutes"));
            s.feed(&raw);
            let _ = s.finish();
        }
    }
}
