//! The path attributes of an UPDATE: located and bounded (a header or
//! length past the field is a session reset), MP_REACH/MP_UNREACH found
//! once each, and the mandatory ones checked for RFC 7606's anomalies.

use super::*;

/// The anomalies of an announcing UPDATE's attributes, in the module's
/// order; `classic`: classic NLRI are announced (they need NEXT_HOP).
pub(super) fn anomalies(attrs: &Attrs<'_>, classic: bool) -> Vec<Anomaly> {
    let next_hop = if classic { attrs.next_hop } else { Seen::Good };
    // (what was seen, the anomaly when absent, the anomaly when malformed)
    let checks = [
        (
            attrs.origin,
            Some(Anomaly::MissingOrigin),
            Anomaly::MalformedOrigin,
        ),
        (
            attrs.as_path,
            Some(Anomaly::MissingAsPath),
            Anomaly::MalformedAsPath,
        ),
        (
            next_hop,
            Some(Anomaly::MissingNextHop),
            Anomaly::MalformedNextHop,
        ),
        // Optional attributes: absence is normal.
        (attrs.local_pref, None, Anomaly::MalformedLocalPref),
        (attrs.med, None, Anomaly::MalformedMed),
    ];
    checks
        .into_iter()
        .filter_map(|(seen, missing, malformed)| match seen {
            Seen::Good => None,
            Seen::Absent => missing,
            Seen::Bad => Some(malformed),
        })
        .collect()
}

/// Walks the attribute field: records what the anomaly rules need, locates the unicast MP NLRI, counts the skipped families.
pub(super) fn attributes<'a>(
    field: &'a [u8],
    options: Options,
    skipped: &mut Vec<Skipped>,
) -> Result<Attrs<'a>, UpdateError> {
    let mut a = Attrs {
        seen: [0; 4],
        origin: Seen::Absent,
        as_path: Seen::Absent,
        next_hop: Seen::Absent,
        local_pref: Seen::Absent,
        med: Seen::Absent,
        count: 0,
        only_unreach: None,
        mp_reach: None,
        mp_unreach: None,
    };
    let mut c = Cursor(field);
    while !c.is_empty() {
        let header = |c: &Cursor<'_>, len| UpdateError::Length {
            what: "path attribute header",
            len,
            available: c.len(),
        };
        let (Some(flags), Some(type_code)) = (c.u8(), c.u8()) else {
            return Err(header(&c, 3));
        };
        let len = if flags & FLAG_EXTENDED != 0 {
            c.u16().map(usize::from).ok_or_else(|| header(&c, 4))?
        } else {
            c.u8().map(usize::from).ok_or_else(|| header(&c, 3))?
        };
        let value = c.take(len).ok_or(UpdateError::Attribute {
            type_code,
            len,
            available: c.len(),
        })?;
        a.count += 1;
        let first = a.first(type_code);
        let well_known_ok = flags & FLAG_OPTIONAL == 0;
        match type_code {
            MP_REACH | MP_UNREACH => {
                let field = if type_code == MP_REACH {
                    Field::MpReach
                } else {
                    Field::MpUnreach
                };
                if !first {
                    return Err(UpdateError::Duplicate(field));
                }
                let (afi, safi, nlri) = mp(value, field, skipped)?;
                a.only_unreach =
                    (type_code == MP_UNREACH && a.count == 1).then_some((afi, safi, value.len()));
                if field == Field::MpReach {
                    a.mp_reach = nlri;
                } else {
                    a.mp_unreach = nlri;
                }
            }
            _ if !first => {}
            ORIGIN => {
                a.origin = check(well_known_ok && matches!(value, [v] if *v <= 2));
            }
            AS_PATH => a.as_path = check(well_known_ok && as_path(value, options.asn4)),
            NEXT_HOP => a.next_hop = check(well_known_ok && value.len() == 4),
            MED => a.med = check(value.len() == 4),
            LOCAL_PREF => a.local_pref = check(value.len() == 4),
            // ATOMIC_AGGREGATE and AGGREGATOR, malformed or not, and every
            // other attribute: nothing the count depends on (a malformed
            // one is discarded, RFC 7606 7.6, 7.7).
            _ => {}
        }
        if a.count > 1 {
            a.only_unreach = None;
        }
    }
    Ok(a)
}

/// True when AS_PATH's segments fill it exactly (RFC 4271 4.3, RFC 7606 7.2).
pub(super) fn as_path(value: &[u8], asn4: bool) -> bool {
    let width = if asn4 { 4 } else { 2 };
    let mut c = Cursor(value);
    while !c.is_empty() {
        let (Some(kind), Some(count)) = (c.u8(), c.u8()) else {
            return false;
        };
        if !(1..=4).contains(&kind) || c.take(usize::from(count) * width).is_none() {
            return false;
        }
    }
    true
}

/// One MP_REACH/MP_UNREACH value: its (AFI, SAFI) and, when unicast, its
/// family and NLRI (past the next hop); other families are counted in
/// `skipped` and not looked into.
pub(super) fn mp<'a>(
    value: &'a [u8],
    field: Field,
    skipped: &mut Vec<Skipped>,
) -> Result<(u16, u8, Option<UnicastNlri<'a>>), UpdateError> {
    let mut c = Cursor(value);
    let (Some(afi), Some(safi)) = (c.u16(), c.u8()) else {
        return Err(UpdateError::MpShort {
            field,
            len: value.len(),
        });
    };
    let Some(family) = family_of(afi, safi) else {
        match skipped.iter_mut().find(|s| s.afi == afi && s.safi == safi) {
            Some(s) => s.count = s.count.saturating_add(1),
            None => skipped.push(Skipped {
                afi,
                safi,
                count: 1,
            }),
        }
        return Ok((afi, safi, None));
    };
    if field == Field::MpUnreach {
        return Ok((afi, safi, Some((family, c.0))));
    }
    let nh_len = usize::from(c.u8().ok_or(UpdateError::MpReachShort(family))?);
    let allowed = match family {
        Family::Ipv4 => matches!(nh_len, 4 | 16 | 32),
        Family::Ipv6 => matches!(nh_len, 16 | 32),
    };
    if !allowed {
        return Err(UpdateError::NextHop {
            family,
            len: nh_len,
        });
    }
    // The next hop, then the reserved byte (RFC 4760 section 3).
    c.take(nh_len + 1)
        .ok_or(UpdateError::MpReachShort(family))?;
    Ok((afi, safi, Some((family, c.0))))
}
