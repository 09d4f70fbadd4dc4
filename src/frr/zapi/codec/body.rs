//! Reading and writing message bodies: bounds-checked reads that turn a
//! short body into [`ZapiError::Truncated`], and the prefix encoding that
//! routes and source prefixes share.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

#[cfg(any(test, feature = "testing"))]
use bytes::{BufMut, BytesMut};

use super::error::ZapiError;
use super::frame::Frame;
use crate::model::Prefix;

/// `AF_INET` as zebra writes it in prefixes (the Linux value). ZAPI's own,
/// not `kernel::wire`'s: another protocol, and `frr` depends on no kernel code.
pub(super) const AF_INET: u8 = 2;
/// `AF_INET6` as zebra writes it in prefixes (the Linux value).
pub(super) const AF_INET6: u8 = 10;

/// Bounds-checked reads of a frame body; every error names the command and
/// the field, so a log line says where the body ended.
pub(super) struct Reader<'a> {
    /// What is left of the body.
    pub(super) buf: &'a [u8],
    /// The frame's command number, for the errors.
    pub(super) command: u16,
}

impl<'a> Reader<'a> {
    /// A reader over `f`'s body.
    pub(super) fn new(f: &'a Frame) -> Reader<'a> {
        Reader {
            buf: &f.body,
            command: f.command,
        }
    }

    fn take(&mut self, n: usize, field: &'static str) -> Result<&'a [u8], ZapiError> {
        if self.buf.len() < n {
            return Err(ZapiError::Truncated {
                command: self.command,
                field,
            });
        }
        let (a, b) = self.buf.split_at(n);
        self.buf = b;
        Ok(a)
    }

    /// The next `N` bytes.
    pub(super) fn array<const N: usize>(
        &mut self,
        field: &'static str,
    ) -> Result<[u8; N], ZapiError> {
        let mut a = [0u8; N];
        a.copy_from_slice(self.take(N, field)?);
        Ok(a)
    }

    /// A byte.
    pub(super) fn u8(&mut self, field: &'static str) -> Result<u8, ZapiError> {
        Ok(self.take(1, field)?[0])
    }

    /// A big-endian u16.
    pub(super) fn u16(&mut self, field: &'static str) -> Result<u16, ZapiError> {
        Ok(u16::from_be_bytes(self.array(field)?))
    }

    /// A big-endian u32.
    pub(super) fn u32(&mut self, field: &'static str) -> Result<u32, ZapiError> {
        Ok(u32::from_be_bytes(self.array(field)?))
    }

    /// A big-endian u64.
    pub(super) fn u64(&mut self, field: &'static str) -> Result<u64, ZapiError> {
        Ok(u64::from_be_bytes(self.array(field)?))
    }

    /// An out-of-range value in this frame.
    pub(super) fn invalid(&self, what: String) -> ZapiError {
        ZapiError::Invalid {
            command: self.command,
            what,
        }
    }

    /// `family u8, len u8, PSIZE(len) bytes` (or, with `family` given, only
    /// the length and bytes, as for the source prefix).
    pub(super) fn prefix(&mut self, family: Option<u8>) -> Result<Prefix, ZapiError> {
        let family = match family {
            Some(f) => f,
            None => self.u8("family")?,
        };
        let len = self.u8("prefixlen")?;
        let (max, v6) = match family {
            AF_INET => (32u8, false),
            AF_INET6 => (128u8, true),
            f => return Err(self.invalid(format!("unknown address family {f}"))),
        };
        if len > max {
            return Err(self.invalid(format!("prefix length {len} above {max}")));
        }
        let bytes = self.take(usize::from(len).div_ceil(8), "prefix")?;
        let addr = if v6 {
            let mut a = [0u8; 16];
            a[..bytes.len()].copy_from_slice(bytes);
            IpAddr::V6(Ipv6Addr::from(a))
        } else {
            let mut a = [0u8; 4];
            a[..bytes.len()].copy_from_slice(bytes);
            IpAddr::V4(Ipv4Addr::from(a))
        };
        // zebra sends the network address; a set host bit is a corrupt frame.
        Prefix::new(addr, len).map_err(|e| self.invalid(e.to_string()))
    }
}

/// The inverse of [`Reader::prefix`]: family (when `with_family`), length,
/// then only the bytes the length covers.
#[cfg(any(test, feature = "testing"))]
pub(super) fn put_prefix(b: &mut BytesMut, p: &Prefix, with_family: bool) {
    if with_family {
        b.put_u8(if p.is_ipv4() { AF_INET } else { AF_INET6 });
    }
    b.put_u8(p.prefix_len());
    let n = usize::from(p.prefix_len()).div_ceil(8);
    match p.addr() {
        IpAddr::V4(a) => b.put_slice(&a.octets()[..n]),
        IpAddr::V6(a) => b.put_slice(&a.octets()[..n]),
    }
}

/// Reads an optional field: `read` runs only when its message bit is set.
pub(super) fn opt<T>(
    bit: u32,
    read: impl FnOnce() -> Result<T, ZapiError>,
) -> Result<Option<T>, ZapiError> {
    if bit != 0 { read().map(Some) } else { Ok(None) }
}
