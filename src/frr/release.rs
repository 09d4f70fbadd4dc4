//! Which ZAPI numbering an FRR release speaks.
//!
//! Contract: the release ([`Release`], the shared vocabulary's type) comes
//! from zebra's own `show version`, never from a guess. A release outside
//! the supported ranges (8.2-8.4, 9.0, 9.1, 10.0-10.1, 10.2, 10.3 and later
//! 10.x) is an [`Unsupported`] error that names the release found.

use super::zapi::codec::{Dialect, Numbering};
pub use crate::model::{Release, ReleaseError};

/// A release this client has no ZAPI numbering table for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "FRR {0} is not supported: ribbridge knows the ZAPI numbering of FRR 8.2-8.4, 9.0, 9.1 and 10.x only; run a supported release"
)]
pub struct Unsupported(pub Release);

/// What a release means for the ZAPI session (a trait because [`Release`]
/// belongs to the shared vocabulary, which knows nothing of ZAPI).
pub trait ReleaseNumbering {
    /// The numbering table, or an error naming this release.
    fn numbering(&self) -> Result<Numbering, Unsupported>;
    /// The ZAPI dialect: numbering plus the nexthop weight width (u64 from 10.1).
    fn dialect(&self) -> Result<Dialect, Unsupported>;
    /// True when bgpd has `redistribute table-direct` (10.0 and later).
    fn has_table_direct(&self) -> bool;
}

impl ReleaseNumbering for Release {
    fn numbering(&self) -> Result<Numbering, Unsupported> {
        match (self.major, self.minor) {
            (8, 2..=4) => Ok(Numbering::V8_2),
            (9, 0) => Ok(Numbering::V9_0),
            (9, 1) => Ok(Numbering::V9_1),
            (10, 0 | 1) => Ok(Numbering::V10_0),
            (10, 2) => Ok(Numbering::V10_2),
            (10, 3..) => Ok(Numbering::V10_3),
            _ => Err(Unsupported(*self)),
        }
    }

    fn dialect(&self) -> Result<Dialect, Unsupported> {
        let n = self.numbering()?;
        let weight_u64 = (self.major, self.minor) >= (10, 1);
        Ok(Dialect::new(n).with_weight_u64(weight_u64))
    }

    fn has_table_direct(&self) -> bool {
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
