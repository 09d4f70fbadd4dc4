//! The messages a read-only client sends: HELLO, REDISTRIBUTE_ADD/DELETE
//! and ROUTER_ID_ADD, in each release's layout. Their decoders exist for
//! tests and fake zebras, which check what the client said.

use bytes::{BufMut, BytesMut};

use super::body::Reader;
use super::error::ZapiError;
use super::frame::Frame;
use super::numbering::{Command, Dialect};
use crate::model::Family;

/// The model's family as ZAPI writes it (`AFI_IP` 1, `AFI_IP6` 2).
pub fn afi_code(family: Family) -> u8 {
    match family {
        Family::Ipv4 => 1,
        Family::Ipv6 => 2,
    }
}

/// The family of a ZAPI AFI value, if it is one.
pub fn family_of_afi(v: u8) -> Option<Family> {
    match v {
        1 => Some(Family::Ipv4),
        2 => Some(Family::Ipv6),
        _ => None,
    }
}

/// ZEBRA_HELLO's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Hello {
    /// The route type the client speaks for; 0 for a read-only client, so
    /// that zebra never flushes a real daemon's routes when it disconnects.
    pub proto: u8,
    /// The instance of that type.
    pub instance: u16,
    /// A session id.
    pub session_id: u32,
}

/// ZEBRA_REDISTRIBUTE_ADD/DELETE's body.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Redistribute {
    /// The address family.
    pub afi: Family,
    /// The route type (e.g. [`Dialect::route_table`]).
    pub route_type: u8,
    /// The instance: the table id for TABLE and TABLE_DIRECT.
    pub instance: u16,
}

impl Dialect {
    /// HELLO as a frame, in this release's body layout (9 bytes before 10.0,
    /// 8 from 10.0), never synchronous (a synchronous client gets no deletes).
    pub fn encode_hello(self, h: Hello) -> Frame {
        let mut b = BytesMut::with_capacity(9);
        b.put_u8(h.proto);
        b.put_u16(h.instance);
        b.put_u32(h.session_id);
        if self.hello_has_notify() {
            b.put_u8(0); // receive_notify
        }
        b.put_u8(0); // synchronous
        Frame {
            vrf_id: 0,
            command: self.command(Command::Hello),
            body: b.freeze(),
        }
    }

    /// Decodes a HELLO body (for tests and fakes).
    pub fn decode_hello(self, f: &Frame) -> Result<Hello, ZapiError> {
        let mut r = Reader::new(f);
        Ok(Hello {
            proto: r.u8("proto")?,
            instance: r.u16("instance")?,
            session_id: r.u32("session_id")?,
        })
    }

    /// REDISTRIBUTE_ADD (`add`) or REDISTRIBUTE_DELETE as a frame, for VRF `vrf_id`.
    pub fn encode_redistribute(self, add: bool, vrf_id: u32, r: Redistribute) -> Frame {
        let mut b = BytesMut::with_capacity(4);
        b.put_u8(afi_code(r.afi));
        b.put_u8(r.route_type);
        b.put_u16(r.instance);
        let c = if add {
            Command::RedistributeAdd
        } else {
            Command::RedistributeDelete
        };
        Frame {
            vrf_id,
            command: self.command(c),
            body: b.freeze(),
        }
    }

    /// Decodes a REDISTRIBUTE_ADD/DELETE body (for tests and fakes).
    pub fn decode_redistribute(self, f: &Frame) -> Result<Redistribute, ZapiError> {
        let mut r = Reader::new(f);
        let afi = r.u8("afi")?;
        let afi = family_of_afi(afi).ok_or_else(|| r.invalid(format!("unknown afi {afi}")))?;
        Ok(Redistribute {
            afi,
            route_type: r.u8("type")?,
            instance: r.u16("instance")?,
        })
    }

    /// ROUTER_ID_ADD for `afi`: zebra answers at once with ROUTER_ID_UPDATE,
    /// which, as zebra handles a client's messages in order, arrives after
    /// the dumps of every REDISTRIBUTE_ADD sent before it (the client uses it
    /// as the end-of-dump marker ZAPI lacks).
    pub fn encode_router_id_add(self, afi: Family) -> Frame {
        let mut b = BytesMut::with_capacity(2);
        b.put_u16(u16::from(afi_code(afi)));
        Frame {
            vrf_id: 0,
            command: self.command(Command::RouterIdAdd),
            body: b.freeze(),
        }
    }

    /// Decodes a ROUTER_ID_ADD body (for tests and fakes).
    pub fn decode_router_id_add(self, f: &Frame) -> Result<Family, ZapiError> {
        let mut r = Reader::new(f);
        let afi = r.u16("afi")?;
        u8::try_from(afi)
            .ok()
            .and_then(family_of_afi)
            .ok_or_else(|| r.invalid(format!("unknown afi {afi}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frr::zapi::codec::Numbering;
    use crate::frr::zapi::codec::frame::testing::{bytes_of, one};

    #[test]
    fn client_messages_match_the_reference_bytes() {
        let v8 = Dialect::new(Numbering::V8_2);
        let v10 = Dialect::new(Numbering::V10_3);
        let hello = Hello {
            proto: 0,
            instance: 0,
            session_id: 0,
        };
        let h8 = bytes_of(v8.encode_hello(hello));
        assert_eq!(
            h8,
            [&[0, 0x13, 0xfe, 6, 0, 0, 0, 0, 0, 0x12][..], &[0; 9]].concat()
        );
        let h10 = bytes_of(v10.encode_hello(hello));
        assert_eq!(
            h10,
            [&[0, 0x12, 0xfe, 6, 0, 0, 0, 0, 0, 0x13][..], &[0; 8]].concat()
        );
        let sub = |d: Dialect, t| {
            bytes_of(d.encode_redistribute(
                true,
                0,
                Redistribute {
                    afi: Family::Ipv4,
                    route_type: t,
                    instance: 198,
                },
            ))
        };
        let hdr = |c: u8| vec![0, 0x0e, 0xfe, 6, 0, 0, 0, 0, 0, c];
        assert_eq!(
            sub(v8, v8.route_table()),
            [hdr(0x0b), vec![1, 0x0f, 0, 0xc6]].concat()
        );
        assert_eq!(
            sub(v10, v10.route_table()),
            [hdr(0x0c), vec![1, 0x10, 0, 0xc6]].concat()
        );
        let td = v10.route_table_direct().unwrap();
        assert_eq!(sub(v10, td), [hdr(0x0c), vec![1, 0x1f, 0, 0xc6]].concat());
        assert_eq!(v8.route_table_direct(), None);
    }

    #[test]
    fn every_client_message_round_trips_in_every_dialect() {
        for n in Numbering::ALL {
            let d = Dialect::new(n);
            let h = Hello {
                proto: 0,
                instance: 7,
                session_id: 0xdead_beef,
            };
            let f = one(&bytes_of(d.encode_hello(h)));
            assert_eq!(d.command_of(f.command), Some(Command::Hello));
            assert_eq!(d.decode_hello(&f).unwrap(), h);
            for add in [true, false] {
                let r = Redistribute {
                    afi: Family::Ipv6,
                    route_type: d.route_table(),
                    instance: 198,
                };
                let f = one(&bytes_of(d.encode_redistribute(add, 5, r)));
                assert_eq!(f.vrf_id, 5);
                let want = if add {
                    Command::RedistributeAdd
                } else {
                    Command::RedistributeDelete
                };
                assert_eq!(d.command_of(f.command), Some(want));
                assert_eq!(d.decode_redistribute(&f).unwrap(), r);
            }
            let f = one(&bytes_of(d.encode_router_id_add(Family::Ipv4)));
            assert_eq!(d.command_of(f.command), Some(Command::RouterIdAdd));
            assert_eq!(d.decode_router_id_add(&f).unwrap(), Family::Ipv4);
        }
    }
}
