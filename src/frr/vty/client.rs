//! The vty client: one unix-socket session to one daemon (zebra.vty or
//! bgpd.vty), typed show commands, and allowlisted configuration.
//!
//! Contract:
//! - One command in flight per socket: commands queue on a mutex, and each
//!   waits for its trailer before the next is written (FRR can lose
//!   pipelined commands).
//! - Every command has a timeout. A timeout or socket error drops the
//!   session (its reply stream is out of step); the next command reconnects
//!   and re-sends `enable`. A command that fails on a reused session with a
//!   socket error (the daemon restarted) is retried once on a fresh one.
//! - Configuration goes through `configure terminal` ... `end`, and only for
//!   the commands healing needs ([`allowed_config`], [`allowed_exec`]);
//!   anything else is refused here, before a byte is sent.

use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use tokio::net::UnixStream;
use tokio::sync::Mutex;
use tokio_util::codec::Framed;

use super::codec::{VtyCodec, VtyError, VtyReply, check_command};
use super::json::{
    AdvertisedRoutes, BgpSummary, Negotiated, RouteTableView, TableMode, parse_negotiated,
    parse_route_table, parse_summary, table_mode_from_config,
};
use super::scan::{KeyScan, KeysOf};
use crate::frr::release::Release;
use crate::model::Family;
use crate::model::PrefixSet;

/// Default per-command timeout: generous, as 10.x may hold a reply until
/// mgmtd finishes a transaction.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// A session to one daemon's vty socket.
#[derive(Debug)]
pub struct VtyClient {
    path: PathBuf,
    timeout: Duration,
    conn: Mutex<Option<Framed<UnixStream, VtyCodec>>>,
}

/// The largest read buffer a connection keeps between replies.
const KEEP_READ_BUFFER: usize = 64 << 10;

impl VtyClient {
    /// Connects to `path` (e.g. `/var/run/frr/bgpd.vty`) and enters enable mode.
    pub async fn connect(path: impl AsRef<Path>) -> Result<VtyClient, VtyError> {
        let c = VtyClient::lazy(path, DEFAULT_TIMEOUT);
        {
            let mut g = c.conn.lock().await;
            *g = Some(c.open().await?);
        }
        Ok(c)
    }

    /// A client that connects on its first command.
    pub fn lazy(path: impl AsRef<Path>, timeout: Duration) -> VtyClient {
        VtyClient {
            path: path.as_ref().to_path_buf(),
            timeout,
            conn: Mutex::new(None),
        }
    }

    /// Sets the per-command timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> VtyClient {
        self.timeout = timeout;
        self
    }

    /// The socket path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    async fn open(&self) -> Result<Framed<UnixStream, VtyCodec>, VtyError> {
        let s = tokio::time::timeout(self.timeout, UnixStream::connect(&self.path))
            .await
            .map_err(|_| self.timeout_err("connect"))?
            .map_err(|e| VtyError::Io {
                what: format!(
                    "connect {}{}",
                    self.path.display(),
                    crate::frr::access::refusal(&self.path, &e)
                ),
                source: e,
            })?;
        let mut f = Framed::new(s, VtyCodec::default());
        // Like vtysh: enable at once, so that exec-level show commands
        // (`show running-config`) and `configure terminal` work.
        let (r, _) = self.exchange(&mut f, "enable", None).await?;
        if !r.status.is_success() {
            return Err(VtyError::Failed {
                command: "enable".into(),
                status: r.status,
                text: r.text,
            });
        }
        Ok(f)
    }

    fn timeout_err(&self, command: &str) -> VtyError {
        VtyError::Timeout {
            command: command.to_string(),
            ms: u64::try_from(self.timeout.as_millis()).unwrap_or(u64::MAX),
        }
    }

    async fn exchange(
        &self,
        f: &mut Framed<UnixStream, VtyCodec>,
        cmd: &str,
        keys: Option<KeysOf>,
    ) -> Result<(VtyReply, Option<KeyScan>), VtyError> {
        let work = async {
            if let Some(k) = keys {
                f.codec_mut().stream_into(KeyScan::new(k));
            }
            f.send(cmd).await?;
            let reply = match f.next().await {
                Some(r) => r,
                None => Err(VtyError::Closed(format!(
                    "{} closed the connection",
                    self.path.display()
                ))),
            };
            // The read buffer grew to the largest reply (a table of 100 000
            // routes is ~64 MiB of JSON) and would keep that capacity for
            // the life of the connection: give it back once it is empty.
            if f.read_buffer().is_empty() && f.read_buffer().capacity() > KEEP_READ_BUFFER {
                *f.read_buffer_mut() = bytes::BytesMut::new();
            }
            Ok((reply?, f.codec_mut().take_scan()))
        };
        tokio::time::timeout(self.timeout, work)
            .await
            .map_err(|_| self.timeout_err(cmd))?
    }

    /// Runs one command and returns its reply, whatever its status. This is
    /// the raw path: it applies no allowlist, so it accepts only `show`
    /// commands; use [`VtyClient::configure`] or [`VtyClient::exec`] for
    /// anything that changes state.
    pub async fn command(&self, cmd: &str) -> Result<VtyReply, VtyError> {
        check_command(cmd)?;
        let words: Vec<&str> = cmd.split_whitespace().collect();
        if words.first() != Some(&"show") {
            return Err(VtyError::NotAllowed(cmd.to_string()));
        }
        self.run(cmd).await
    }

    async fn run(&self, cmd: &str) -> Result<VtyReply, VtyError> {
        let mut g = self.conn.lock().await;
        Ok(self.run_locked(&mut g, cmd, None).await?.0)
    }

    async fn run_locked(
        &self,
        g: &mut Option<Framed<UnixStream, VtyCodec>>,
        cmd: &str,
        keys: Option<KeysOf>,
    ) -> Result<(VtyReply, Option<KeyScan>), VtyError> {
        let reused = g.is_some();
        for attempt in 0..2 {
            let mut f = match g.take() {
                Some(f) => f,
                None => self.open().await?,
            };
            match self.exchange(&mut f, cmd, keys).await {
                Ok(r) => {
                    *g = Some(f);
                    return Ok(r);
                }
                // The daemon restarted under a reused session: one retry.
                Err(VtyError::Io { .. } | VtyError::Closed(_)) if reused && attempt == 0 => {
                    continue;
                }
                Err(e) => return Err(e),
            }
        }
        Err(VtyError::Closed(format!(
            "{}: retry failed",
            self.path.display()
        )))
    }

    /// Runs a show command and fails unless it succeeded.
    async fn show_ok(&self, cmd: &str) -> Result<String, VtyError> {
        let r = self.command(cmd).await?;
        if !r.status.is_success() {
            return Err(VtyError::Failed {
                command: cmd.to_string(),
                status: r.status,
                text: r.text,
            });
        }
        Ok(r.text)
    }

    /// `show version` as zebra prints it: whether it was built with realm
    /// support (a kernel route's realm is then its tag); None when the text
    /// does not say.
    pub async fn realms(&self) -> Result<Option<bool>, VtyError> {
        let t = self.show_ok("show version").await?;
        Ok(crate::model::intent::realms_from_show_version(&t))
    }

    /// `show version`: the FRR release.
    pub async fn show_version(&self) -> Result<Release, VtyError> {
        let t = self.show_ok("show version").await?;
        Release::from_show_version(&t).map_err(VtyError::Release)
    }

    /// zebra's view of kernel table `table` (`show ip|ipv6 route table N json`).
    pub async fn route_table(&self, afi: Family, table: u32) -> Result<RouteTableView, VtyError> {
        let cmd = format!("show {} route table {table} json", ip_word(afi));
        let t = self.show_ok(&cmd).await?;
        parse_route_table(&t).map_err(|error| VtyError::Json {
            command: cmd,
            error,
        })
    }

    /// The destinations of zebra's table `table` only (the same command as
    /// [`VtyClient::route_table`], read as it streams: the text is never
    /// held, only the prefixes).
    pub async fn route_prefixes(&self, afi: Family, table: u32) -> Result<PrefixSet, VtyError> {
        let cmd = format!("show {} route table {table} json", ip_word(afi));
        self.show_keys(cmd, KeysOf::TopLevel).await
    }

    /// Runs a show command whose JSON reply streams into a [`KeyScan`] of
    /// `keys`; fails unless it succeeded and the keys are prefixes.
    async fn show_keys(&self, cmd: String, keys: KeysOf) -> Result<PrefixSet, VtyError> {
        check_command(&cmd)?;
        let (r, scan) = {
            let mut g = self.conn.lock().await;
            self.run_locked(&mut g, &cmd, Some(keys)).await?
        };
        if !r.status.is_success() {
            return Err(VtyError::Failed {
                command: cmd,
                status: r.status,
                text: r.text,
            });
        }
        let scan =
            scan.ok_or_else(|| VtyError::Closed(format!("{cmd}: the reply was not streamed")))?;
        scan.finish().map_err(|error| VtyError::Json {
            command: cmd,
            error,
        })
    }

    /// bgpd's per-AFI summary: peers and their state.
    pub async fn bgp_summary(&self, afi: Family) -> Result<BgpSummary, VtyError> {
        let cmd = format!("show bgp {} unicast summary json", afi.name());
        let t = self.show_ok(&cmd).await?;
        parse_summary(&t).map_err(|error| VtyError::Json {
            command: cmd,
            error,
        })
    }

    /// Which unicast families `peer`'s session negotiated (read once per
    /// session by the poller: it changes only when the session does).
    pub async fn negotiated(&self, peer: &str) -> Result<Negotiated, VtyError> {
        check_peer(peer)?;
        let cmd = format!("show bgp neighbors {peer} json");
        let t = self.show_ok(&cmd).await?;
        parse_negotiated(&t).map_err(|error| VtyError::Json {
            command: cmd,
            error,
        })
    }

    /// The prefixes bgpd sends to `peer`.
    pub async fn advertised_routes(
        &self,
        afi: Family,
        peer: &str,
    ) -> Result<AdvertisedRoutes, VtyError> {
        check_peer(peer)?;
        let cmd = format!(
            "show bgp {} unicast neighbors {peer} advertised-routes json",
            afi.name()
        );
        // Read as it streams: at 100 000 routes the text is ~55 MB.
        let prefixes = self
            .show_keys(cmd, KeysOf::Member("advertisedRoutes"))
            .await?;
        Ok(AdvertisedRoutes {
            prefixes,
            total_prefix_counter: None,
        })
    }

    /// One route-map as bgpd reports it (`show route-map NAME json`): a
    /// few hundred bytes, for noticing a change without reading the whole
    /// configuration.
    pub async fn route_map_json(&self, name: &str) -> Result<String, VtyError> {
        if !is_policy_name(name) {
            return Err(VtyError::BadCommand(format!("route-map '{name}'")));
        }
        self.show_ok(&format!("show route-map {name} json")).await
    }

    /// One prefix-list as bgpd reports it (`show ip|ipv6 prefix-list NAME
    /// json`), for noticing a change.
    pub async fn prefix_list_json(&self, afi: Family, name: &str) -> Result<String, VtyError> {
        if !is_policy_name(name) {
            return Err(VtyError::BadCommand(format!("prefix-list '{name}'")));
        }
        let family = ip_word(afi);
        self.show_ok(&format!("show {family} prefix-list {name} json"))
            .await
    }

    /// The daemon's running configuration.
    pub async fn running_config(&self) -> Result<String, VtyError> {
        self.show_ok("show running-config").await
    }

    /// How bgpd redistributes kernel table `table` (call on bgpd.vty).
    pub async fn table_mode(&self, table: u32) -> Result<Option<TableMode>, VtyError> {
        Ok(table_mode_from_config(&self.running_config().await?, table))
    }

    /// Applies allowlisted configuration commands inside `configure terminal`
    /// ... `end`. Every command is checked before anything is sent; the first
    /// failing command stops the batch (the session still leaves config mode).
    /// Any status but success is a failure: note that bgpd 10.7 answers
    /// CMD_WARNING, with no text, to a `redistribute` line that is already
    /// configured, so healing sends the `no` form first.
    pub async fn configure(&self, cmds: &[&str]) -> Result<(), VtyError> {
        for c in cmds {
            check_command(c)?;
            allowed_config(c)?;
        }
        let mut g = self.conn.lock().await;
        self.expect_ok(&mut g, "configure terminal").await?;
        let mut result = Ok(());
        for c in cmds {
            if let Err(e) = self.expect_ok(&mut g, c).await {
                result = Err(e);
                break;
            }
        }
        // Leave config mode whatever happened: the session is shared.
        let end = self.expect_ok(&mut g, "end").await;
        result.and(end)
    }

    /// Runs one allowlisted exec-level command (e.g. `clear bgp ipv4
    /// unicast 198.18.1.1 soft out`).
    pub async fn exec(&self, cmd: &str) -> Result<(), VtyError> {
        check_command(cmd)?;
        allowed_exec(cmd)?;
        let mut g = self.conn.lock().await;
        self.expect_ok(&mut g, cmd).await
    }

    async fn expect_ok(
        &self,
        g: &mut Option<Framed<UnixStream, VtyCodec>>,
        cmd: &str,
    ) -> Result<(), VtyError> {
        let (r, _) = self.run_locked(g, cmd, None).await?;
        if r.status.is_success() {
            Ok(())
        } else {
            Err(VtyError::Failed {
                command: cmd.to_string(),
                status: r.status,
                text: r.text,
            })
        }
    }
}

fn ip_word(afi: Family) -> &'static str {
    match afi {
        Family::Ipv4 => "ip",
        Family::Ipv6 => "ipv6",
    }
}

fn check_peer(peer: &str) -> Result<(), VtyError> {
    if peer.parse::<IpAddr>().is_ok() || is_name(peer) {
        Ok(())
    } else {
        Err(VtyError::BadCommand(format!("peer '{peer}'")))
    }
}

fn is_num(s: &str, lo: u64, hi: u64) -> bool {
    s.parse::<u64>().is_ok_and(|n| (lo..=hi).contains(&n))
}

fn is_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A route-map's or prefix-list's name as bgpd's configuration has it:
/// frr-k8s names them after the peer (`fdbb:0:0:1::1-out`), so `:` is
/// allowed beside [`is_name`]'s characters; never a space.
fn is_policy_name(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 128
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

fn is_afi(s: &str) -> bool {
    matches!(s, "ipv4" | "ipv6")
}

use crate::model::{DRAIN_MARK, Prefix, WITHDRAW_LIST_V4, WITHDRAW_LIST_V6, WITHDRAW_MARK};

/// ribbridge's withdrawal prefix-list of a family (`ip` or `ipv6`).
fn withdraw_list_of(kw: &str) -> Option<&'static str> {
    match kw {
        "ip" => Some(WITHDRAW_LIST_V4),
        "ipv6" => Some(WITHDRAW_LIST_V6),
        _ => None,
    }
}

/// A host prefix of the family `kw` names (a VIP: /32 or /128).
fn is_host_prefix(kw: &str, p: &str) -> bool {
    p.parse::<Prefix>().is_ok_and(|p| match kw {
        "ip" => p.addr().is_ipv4() && p.prefix_len() == 32,
        _ => p.addr().is_ipv6() && p.prefix_len() == 128,
    })
}

/// The configuration commands healing and the drain may send, checked word by word:
/// `[no] ip import-table N [distance D]` (zebra), `router bgp ASN`,
/// `address-family ipv4|ipv6 unicast`, `[no] redistribute table|table-direct
/// N [route-map NAME]`, `exit-address-family`, `exit` (bgpd); for the
/// drain, `[no] route-map NAME deny SEQ` (SEQ 1-65535: the drain picks a
/// free one ahead of the route-map's first entry, and removes only its
/// marked entries) and `description ribbridge-drain`; for a VIP's
/// withdrawal, `description ribbridge-withdraw`, `match ip|ipv6 address
/// prefix-list ribbridge-withdraw-v4|v6` and `[no] ip|ipv6 prefix-list
/// ribbridge-withdraw-v4|v6 seq N permit HOST-PREFIX`. A `permit` entry,
/// or a whole route-map or prefix-list, is never allowed.
pub fn allowed_config(cmd: &str) -> Result<(), VtyError> {
    let all: Vec<&str> = cmd.split_whitespace().collect();
    // `no` only undoes what healing re-applies: never a BGP instance or an AFI.
    let (negated, w): (bool, &[&str]) = match all.as_slice() {
        ["no", rest @ ..] => (true, rest),
        all => (false, all),
    };
    let ok = match w {
        ["ip", "import-table", n] => is_num(n, 1, 252),
        ["ip", "import-table", n, "distance", d] => is_num(n, 1, 252) && is_num(d, 1, 255),
        ["redistribute", "table" | "table-direct", n] => is_num(n, 1, 65535),
        ["redistribute", "table" | "table-direct", n, "route-map", m] => {
            is_num(n, 1, 65535) && is_name(m)
        }
        ["router", "bgp", asn] => !negated && is_num(asn, 1, u64::from(u32::MAX)),
        ["address-family", afi, "unicast"] => !negated && is_afi(afi),
        ["exit-address-family"] | ["exit"] => !negated,
        // The drain: one deny entry ahead of the redistribution route-map's
        // permits, marked by its description (docs/FRR-BEHAVIOUR.md, Drain).
        ["route-map", m, "deny", seq] => is_name(m) && is_num(seq, 1, 65_535),
        ["description", d] => !negated && (*d == DRAIN_MARK || *d == WITHDRAW_MARK),
        // A withdrawal: ribbridge's own prefix-list, host prefixes only,
        // and the marked entry's match on it.
        [kw, "prefix-list", l, "seq", n, "permit", p] => {
            withdraw_list_of(kw) == Some(*l)
                && is_num(n, 1, u64::from(u32::MAX))
                && is_host_prefix(kw, p)
        }
        ["match", kw, "address", "prefix-list", l] => !negated && withdraw_list_of(kw) == Some(*l),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(VtyError::NotAllowed(cmd.to_string()))
    }
}

/// The exec-level commands healing may send: an outbound soft refresh,
/// `clear bgp [ipv4|ipv6 unicast] PEER|* soft out` or `clear ip bgp PEER|*
/// soft out`. A hard reset (no `soft`) is never allowed.
pub fn allowed_exec(cmd: &str) -> Result<(), VtyError> {
    let w: Vec<&str> = cmd.split_whitespace().collect();
    let peer_ok = |p: &str| p == "*" || p.parse::<IpAddr>().is_ok();
    let ok = match w.as_slice() {
        ["clear", "bgp", afi, "unicast", p, "soft", "out"] => is_afi(afi) && peer_ok(p),
        ["clear", "bgp", p, "soft", "out"] | ["clear", "ip", "bgp", p, "soft", "out"] => peer_ok(p),
        _ => false,
    };
    if ok {
        Ok(())
    } else {
        Err(VtyError::NotAllowed(cmd.to_string()))
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn policy_names_as_frr_k8s_writes_them_pass_and_spaces_do_not() {
        assert!(super::is_policy_name("fdbb:0:0:1::1-out"));
        assert!(super::is_policy_name("BGP-VIP-ROUTES-V4"));
        assert!(!super::is_policy_name("A B"));
        assert!(!super::is_policy_name(""));
    }

    use super::*;

    #[test]
    fn allowlist_accepts_what_healing_needs() {
        for c in [
            "ip import-table 198",
            "no ip import-table 198",
            "ip import-table 198 distance 15",
            "router bgp 64512",
            "address-family ipv6 unicast",
            "redistribute table-direct 198 route-map KUBE-VIP-ROUTES-V4",
            "no redistribute table 198",
            "exit-address-family",
            "exit",
            "route-map KUBE-VIP-ROUTES-V4 deny 1",
            "no route-map KUBE-VIP-ROUTES-V6 deny 1",
            "route-map KUBE-VIP-ROUTES-V4 deny 5",
            "no route-map KUBE-VIP-ROUTES-V4 deny 65535",
            "description ribbridge-drain",
        ] {
            allowed_config(c).unwrap_or_else(|e| panic!("{c}: {e}"));
        }
        for c in [
            "clear bgp ipv4 unicast 198.18.1.1 soft out",
            "clear bgp * soft out",
            "clear ip bgp fdbb::1 soft out",
        ] {
            allowed_exec(c).unwrap_or_else(|e| panic!("{c}: {e}"));
        }
    }

    #[test]
    fn allowlist_refuses_everything_else() {
        for c in [
            "ip import-table 253",
            "ip import-table 198 route-map X",
            "no router bgp 64512",
            "no address-family ipv4 unicast",
            "no exit",
            "neighbor 1.2.3.4 remote-as 1",
            "write memory",
            "ip route 0.0.0.0/0 blackhole",
            "redistribute connected",
            "redistribute table 198 route-map a;b",
            "route-map KUBE-VIP-ROUTES-V4 deny 0",
            "route-map KUBE-VIP-ROUTES-V4 deny 65536",
            "route-map KUBE-VIP-ROUTES-V4 deny one",
            "route-map KUBE-VIP-ROUTES-V4 deny 1 extra",
            "route-map KUBE-VIP-ROUTES-V4 permit 1",
            "no route-map KUBE-VIP-ROUTES-V4 permit 10",
            "route-map a;b deny 1",
            "no route-map KUBE-VIP-ROUTES-V4",
            "description anything else",
            "no description ribbridge-drain",
            "",
        ] {
            assert!(
                matches!(allowed_config(c), Err(VtyError::NotAllowed(_))),
                "{c}"
            );
        }
        for c in [
            "clear bgp 198.18.1.1",
            "clear bgp * soft",
            "clear ip bgp * soft in",
            "clear bgp ipv4 unicast evil soft out",
        ] {
            assert!(
                matches!(allowed_exec(c), Err(VtyError::NotAllowed(_))),
                "{c}"
            );
        }
    }

    #[tokio::test]
    async fn non_show_commands_are_refused_before_connecting() {
        // A path that does not exist: a refused command must not even try it.
        let c = VtyClient::lazy("/nonexistent/zebra.vty", DEFAULT_TIMEOUT);
        for cmd in ["configure terminal", "write memory", "clear bgp *"] {
            assert!(matches!(c.command(cmd).await, Err(VtyError::NotAllowed(_))));
        }
        assert!(matches!(
            c.configure(&["write memory"]).await,
            Err(VtyError::NotAllowed(_))
        ));
        assert!(matches!(
            c.exec("clear bgp *").await,
            Err(VtyError::NotAllowed(_))
        ));
    }
}
