//! The prefixes of a withdrawn routes or NLRI field (classic or MP), with
//! their add-path ids.

use super::*;

/// Reads a field of prefixes of one family, appending them to `out`.
pub(super) fn prefixes(
    field_bytes: &[u8],
    family: Family,
    add_path: bool,
    field: Field,
    out: &mut Vec<Path>,
) -> Result<(), UpdateError> {
    let overrun = UpdateError::PrefixOverrun { field, add_path };
    let mut c = Cursor(field_bytes);
    while !c.is_empty() {
        let path_id = if add_path {
            Some(c.u32().ok_or(overrun.clone())?)
        } else {
            None
        };
        let len = c.u8().ok_or(overrun.clone())?;
        if len > family.max_len() {
            return Err(UpdateError::PrefixLength { field, family, len });
        }
        let bytes = c
            .take(usize::from(len).div_ceil(8))
            .ok_or(overrun.clone())?;
        let addr = match family {
            Family::Ipv4 => {
                let mut o = [0u8; 4];
                for (d, s) in o.iter_mut().zip(bytes) {
                    *d = *s;
                }
                let bits =
                    u32::from_be_bytes(o) & u32::MAX.checked_shl(32 - u32::from(len)).unwrap_or(0);
                IpAddr::V4(Ipv4Addr::from(bits))
            }
            Family::Ipv6 => {
                let mut o = [0u8; 16];
                for (d, s) in o.iter_mut().zip(bytes) {
                    *d = *s;
                }
                let bits = u128::from_be_bytes(o)
                    & u128::MAX.checked_shl(128 - u32::from(len)).unwrap_or(0);
                IpAddr::V6(Ipv6Addr::from(bits))
            }
        };
        let prefix =
            Prefix::new(addr, len).map_err(|_| UpdateError::PrefixLength { field, family, len })?;
        out.push(Path { prefix, path_id });
    }
    Ok(())
}
