//! The descriptors the daemon may hold at once, against `RLIMIT_NOFILE`.

/// What the daemon's descriptors go to ([`super::Settings::descriptors_needed`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DescriptorBudget {
    /// `http_max_connections`.
    pub http: u64,
    /// `bmp_max_sessions` at the bmp vantage, else 0.
    pub bmp: u64,
    /// The daemon's own files and sockets.
    pub reserve: u64,
}

impl DescriptorBudget {
    /// The whole budget.
    pub fn total(&self) -> u64 {
        self.http + self.bmp + self.reserve
    }

    /// Whether it fits under the soft `RLIMIT_NOFILE` limit `soft`: when it
    /// does not, the caps could take descriptors the daemon's own sockets
    /// need, which is what the caps are for.
    pub fn check(&self, soft: u64, hard: u64) -> Result<(), DescriptorError> {
        if self.total() <= soft {
            Ok(())
        } else {
            Err(DescriptorError {
                budget: *self,
                soft,
                hard,
            })
        }
    }
}

/// The connection caps do not fit under the descriptor limit.
#[derive(Debug, Clone, thiserror::Error)]
#[error(
    "the descriptor limit (RLIMIT_NOFILE soft {soft}, hard {hard}) is below what the daemon may hold: {need} = {http} HTTP connections (http_max_connections) + {bmp} BMP sessions (bmp_max_sessions) + {reserve} of its own: raise the limit to at least {need} (systemd: LimitNOFILE=; a shell: ulimit -n; a container: the runtime's nofile ulimit), or lower --http-max-connections / --bmp-max-sessions",
    need = budget.total(),
    http = budget.http,
    bmp = budget.bmp,
    reserve = budget.reserve
)]
pub struct DescriptorError {
    /// The budget asked for.
    pub budget: DescriptorBudget,
    /// The soft limit.
    pub soft: u64,
    /// The hard limit.
    pub hard: u64,
}
