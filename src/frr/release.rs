//! Which FRR release runs, and which ZAPI numbering it uses.
//!
//! Contract: the release comes from zebra's own `show version` (first line
//! `FRRouting X.Y[.Z] (host) on ...`), never from a guess. A release outside
//! the supported ranges (8.2-8.4, 9.0, 9.1, 10.0-10.1, 10.2, 10.3 and later
//! 10.x) is an error that names the release found.

use std::fmt;

use serde::{Deserialize, Serialize};

use super::zapi::codec::{Dialect, Numbering};

/// An FRR release, as `show version` reports it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Release {
    /// Major number (8, 9, 10).
    pub major: u32,
    /// Minor number.
    pub minor: u32,
    /// Patch number, when printed.
    pub patch: Option<u32>,
    /// The version text as printed (e.g. `10.7.1`, `10.4-dev`).
    pub text: String,
}

/// Why the release could not be determined or is not supported.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReleaseError {
    /// `show version` did not start with `FRRouting <version>`.
    Unparsable(String),
    /// A release this client has no ZAPI numbering table for.
    Unsupported(String),
}

impl fmt::Display for ReleaseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ReleaseError::Unparsable(l) => write!(
                f,
                "zebra's 'show version' does not start with 'FRRouting <version>' (first line: '{l}'): is this FRR's zebra.vty?"
            ),
            ReleaseError::Unsupported(v) => write!(
                f,
                "FRR {v} is not supported: ribbridge knows the ZAPI numbering of FRR 8.2-8.4, 9.0, 9.1 and 10.x only; run a supported release"
            ),
        }
    }
}

impl std::error::Error for ReleaseError {}

impl fmt::Display for Release {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.text)
    }
}

impl Release {
    /// Parses the output of `show version`.
    pub fn from_show_version(text: &str) -> Result<Release, ReleaseError> {
        let first = text.lines().next().unwrap_or("").trim();
        let bad = || ReleaseError::Unparsable(first.chars().take(120).collect());
        let rest = first.strip_prefix("FRRouting ").ok_or_else(bad)?;
        let ver = rest.split_whitespace().next().ok_or_else(bad)?;
        Release::parse(ver).ok_or_else(bad)
    }

    /// Parses a version like `8.4.4`, `10.3`, `10.4-dev`.
    pub fn parse(ver: &str) -> Option<Release> {
        // Only the leading dotted numbers count: `10.4-dev` is 10.4.
        let numeric: String = ver
            .chars()
            .take_while(|c| c.is_ascii_digit() || *c == '.')
            .collect();
        let mut it = numeric.split('.').filter(|s| !s.is_empty());
        let major = it.next()?.parse().ok()?;
        let minor = it.next()?.parse().ok()?;
        let patch = it.next().and_then(|p| p.parse().ok());
        Some(Release {
            major,
            minor,
            patch,
            text: ver.to_string(),
        })
    }

    /// The numbering table, or an error naming this release.
    pub fn numbering(&self) -> Result<Numbering, ReleaseError> {
        match (self.major, self.minor) {
            (8, 2..=4) => Ok(Numbering::V8_2),
            (9, 0) => Ok(Numbering::V9_0),
            (9, 1) => Ok(Numbering::V9_1),
            (10, 0 | 1) => Ok(Numbering::V10_0),
            (10, 2) => Ok(Numbering::V10_2),
            (10, 3..) => Ok(Numbering::V10_3),
            _ => Err(ReleaseError::Unsupported(self.text.clone())),
        }
    }

    /// The ZAPI dialect: numbering plus the nexthop weight width (u64 from 10.1).
    pub fn dialect(&self) -> Result<Dialect, ReleaseError> {
        let n = self.numbering()?;
        let weight_u64 = (self.major, self.minor) >= (10, 1);
        Ok(Dialect::new(n).with_weight_u64(weight_u64))
    }

    /// True when bgpd has `redistribute table-direct` (10.0 and later).
    pub fn has_table_direct(&self) -> bool {
        self.major >= 10
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_three_lab_releases() {
        let cases = [
            (
                "FRRouting 8.4.4 (rb-node1) on Linux(6.18.44).\nCopyright",
                Numbering::V8_2,
                false,
            ),
            (
                "FRRouting 10.3 (rb-node1) on Linux(6.18.44).\n",
                Numbering::V10_3,
                true,
            ),
            (
                "FRRouting 10.7.1 (rb-node1) on Linux(6.18.44).\n",
                Numbering::V10_3,
                true,
            ),
            ("FRRouting 10.1.2 (x) on Linux", Numbering::V10_0, true),
            ("FRRouting 10.0 (x) on Linux", Numbering::V10_0, false),
            ("FRRouting 10.4-dev (x) on Linux", Numbering::V10_3, true),
        ];
        for (text, numbering, w64) in cases {
            let r = Release::from_show_version(text).unwrap();
            let d = r.dialect().unwrap();
            assert_eq!((d.numbering, d.weight_u64), (numbering, w64), "{text}");
        }
    }

    #[test]
    fn unknown_release_is_an_error_naming_it() {
        let e = Release::from_show_version("FRRouting 7.5.1 (h) on Linux")
            .unwrap()
            .dialect()
            .unwrap_err();
        assert!(e.to_string().contains("FRR 7.5.1 is not supported"), "{e}");
        let e = Release::from_show_version("FRRouting 11.0 (h)")
            .unwrap()
            .numbering()
            .unwrap_err();
        assert!(e.to_string().contains("11.0"), "{e}");
        let e = Release::from_show_version("Quagga 1.2 (h)").unwrap_err();
        assert!(e.to_string().contains("Quagga 1.2"), "{e}");
        assert!(Release::from_show_version("").is_err());
    }
}
