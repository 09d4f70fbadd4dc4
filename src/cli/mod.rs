//! The command line: the only place that parses arguments, sets up logging,
//! builds a runtime, prints, and turns errors into exit codes.
//!
//! Contract: one file per subcommand, each with its clap `Args` and a `run`
//! that calls a library function with a plain input struct and maps the
//! typed error it returns to an exit code. Nothing here decides anything
//! about routes. Exit codes, for every subcommand: 0 success, 1 `status`
//! found drift (`cluster`: or a router disagreeing) or `drain`/`undrain` not done within its timeout, 2 error (usage, input, a view that cannot be seen), 3
//! `render --out` left an unchanged file alone, 4 `run` stopped because an
//! essential task ended (the runtime is to restart it).

mod check_config;
mod cluster;
mod drain;
mod frr;
mod kernel;
mod render;
mod run;
mod status;

pub use run::settings_of as run_settings;

use std::fmt::Display;
use std::process::ExitCode;
use std::sync::LazyLock;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};

use crate::config::Settings;

/// What a daemon runs with when neither the file nor a flag sets a key
/// (`Settings::default`, where `Settings::resolve` starts): the defaults
/// the flags' help shows.
static DEFAULTS: LazyLock<Settings> = LazyLock::new(Settings::default);

/// A node's own defaults, for the help of the keys only a node reads.
static NODE_DEFAULTS: LazyLock<crate::config::NodeRole> =
    LazyLock::new(crate::config::NodeRole::default);

/// A station's own defaults, for the help of the keys only it reads.
static STATION_DEFAULTS: LazyLock<crate::config::StationRole> =
    LazyLock::new(crate::config::StationRole::default);

/// A flag's help ending in its default as clap writes its own
/// (`[default: VALUE]`), from the value the code uses, so that `--help`
/// cannot say another. For flags that are `Option`s (a flag overrides the
/// file's key only when given), which clap's `default_value` would always
/// set.
fn defaulted(help: &str, default: impl Display) -> String {
    format!("{help} [default: {default}]")
}

/// A list default as clap shows one: its values, space-separated.
fn words<T: Display>(values: &[T]) -> String {
    values
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(" ")
}

/// The process's exit codes, every one of them: the only place they are
/// numbered (`main.rs`'s doc and each subcommand's `--help` list them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    /// 0: success.
    Ok = 0,
    /// 1: `status` found a VIP in drift; `drain`/`undrain` not done in time.
    Drift = 1,
    /// 2: a failure (usage, bad input, unreachable FRR, a view it cannot see).
    Error = 2,
    /// 3: `render --out` found the file already holding the text.
    Unchanged = 3,
    /// 4: `run` stopped because an essential task ended
    /// ([`crate::daemon::DaemonError::TaskEnded`]): the runtime is to restart it.
    TaskEnded = 4,
}

impl Exit {
    /// The number the process exits with.
    pub const fn code(self) -> u8 {
        self as u8
    }
}

impl From<Exit> for ExitCode {
    fn from(e: Exit) -> Self {
        ExitCode::from(e.code())
    }
}

/// `--version`: the version, the git revision and the source's date.
const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (revision ",
    env!("RIBBRIDGE_REVISION"),
    ", ",
    env!("RIBBRIDGE_BUILD_DATE"),
    ")"
);

#[derive(Debug, Parser)]
#[command(
    name = "ribbridge",
    version = VERSION,
    about = "Joins kernel routing tables, zebra and bgpd per VIP; heals silent drift; exports it",
    long_about = format!("ribbridge runs beside FRR on a node that advertises VIPs over BGP. It watches the \
kernel's VIP table ({} by default) over rtnetlink, zebra over its ZAPI socket and bgpd over its vty \
socket, joins the three views for every VIP, names each difference, heals the ones with a proven \
safe action, counts ECMP paths, and exports everything to Prometheus and a status command.", crate::model::VIP_TABLE),
    after_help = "Exit status: 0 success, 1 drift found (status) or not done in time (drain, undrain), 2 error, 3 unchanged (render --out), 4 an essential task ended (run: restart it)."
)]
struct Cli {
    /// Log filter, in tracing's EnvFilter syntax, e.g. `info` or
    /// `ribbridge=debug,warn` (RUST_LOG overrides it).
    #[arg(long, global = true, default_value = "info")]
    log: String,
    /// Log line format on standard error.
    #[arg(long, global = true, value_enum, default_value_t = LogFormat::Text)]
    log_format: LogFormat,
    #[command(subcommand)]
    command: Command,
}

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum LogFormat {
    /// One human-readable line per event.
    Text,
    /// One JSON object per line (for log collectors).
    Json,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the daemon: watch, join, classify, heal, export.
    Run(Box<run::Args>),
    /// Check the settings `run` would start with (the same flags and
    /// --config), print them resolved as TOML, exit 0; or say what is
    /// wrong (the file, line and key, or the flag), exit 2.
    CheckConfig(Box<run::Args>),
    /// Print the per-VIP join table, from a running daemon or in one shot.
    Status(status::Args),
    /// Which nodes serve each VIP, which do not and why, and what the
    /// router holds: the cluster's answer, from Prometheus.
    Cluster(Box<cluster::Args>),
    /// Render this node's frr.conf from the cluster's BGP peer mapping.
    Render(render::Args),
    /// Take this node's VIPs out of BGP (every peer) and wait until no peer
    /// is sent one: before a reboot or a shutdown.
    Drain(drain::Args),
    /// Advertise this node's VIPs again after a drain and wait until each is.
    Undrain(drain::Args),
    /// Debug: print a watched kernel table the way `ip route` does.
    Kernel(kernel::Args),
    /// Debug: print what the ZAPI and vty clients see of FRR.
    Frr(frr::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) of ribbridge and its subcommands.
    Man,
}

/// Entry point of the binary.
pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // RUST_LOG wins when set and valid; an invalid filter is an error, not
    // a silent `info`.
    let filter = match log_filter(&cli.log) {
        Ok(f) => f,
        Err(e) => return fail("ribbridge", &e),
    };
    // Held to the end of main: dropping it flushes the queued lines.
    let _log = init_tracing(filter, cli.log_format);
    match cli.command {
        Command::Run(a) => run::run(*a),
        Command::CheckConfig(a) => check_config::run(*a),
        Command::Status(a) => status::run(a),
        Command::Cluster(a) => cluster::run(*a),
        Command::Render(a) => render::run(a),
        Command::Drain(a) => drain::run_drain(a),
        Command::Undrain(a) => drain::run_undrain(a),
        Command::Kernel(a) => kernel::run(a),
        Command::Frr(a) => frr::run(a),
        Command::Completions { shell } => {
            let mut cmd = Cli::command();
            clap_complete::generate(shell, &mut cmd, "ribbridge", &mut std::io::stdout());
            Exit::Ok.into()
        }
        Command::Man => man(),
    }
}

/// A log filter that does not parse, and where it came from.
#[derive(Debug, thiserror::Error)]
#[error("{origin} '{text}' is not a log filter: {source}; use e.g. info or ribbridge=debug,warn")]
struct LogFilterError {
    origin: &'static str,
    text: String,
    source: tracing_subscriber::filter::ParseError,
}

/// The filter from RUST_LOG, else `--log`; names the bad one.
fn log_filter(flag: &str) -> Result<tracing_subscriber::EnvFilter, LogFilterError> {
    use tracing_subscriber::EnvFilter;
    let (origin, text) = match std::env::var("RUST_LOG") {
        Ok(env) => ("RUST_LOG", env),
        Err(_) => ("--log", flag.to_string()),
    };
    EnvFilter::try_new(&text).map_err(|source| LogFilterError {
        origin,
        text,
        source,
    })
}

/// The subscriber, writing through `logging`'s non-blocking writer: a log
/// reader that stalls never stops the daemon (lines are dropped, counted).
fn init_tracing(filter: tracing_subscriber::EnvFilter, format: LogFormat) -> crate::logging::Guard {
    let (writer, guard) = crate::logging::writer();
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(writer);
    // try_init: a second initialisation (in tests) is not an error worth dying for.
    let _ = match format {
        LogFormat::Text => builder
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .try_init(),
        LogFormat::Json => builder.json().with_ansi(false).try_init(),
    };
    guard
}

/// The man page of the command and of every subcommand, one after another.
fn man() -> ExitCode {
    let cmd = Cli::command();
    let mut out = Vec::new();
    let mut pages = vec![cmd.clone()];
    pages.extend(cmd.get_subcommands().cloned().map(|s| {
        let name = format!("ribbridge-{}", s.get_name());
        s.name(name)
    }));
    for page in pages {
        if let Err(e) = clap_mangen::Man::new(page).render(&mut out) {
            return fail("ribbridge man", &format!("cannot render the man page: {e}"));
        }
    }
    print_bytes("ribbridge man", &out)
}

/// Write bytes to standard output; a closed pipe is an error, not a panic.
fn print_bytes(cmd: &str, bytes: &[u8]) -> ExitCode {
    use std::io::Write;
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => Exit::Ok.into(),
        Err(e) => fail(cmd, &format!("cannot write to standard output: {e}")),
    }
}

/// Print `cmd: error` (with its chain of causes) and return the error code.
fn fail(cmd: &str, e: &dyn std::fmt::Display) -> ExitCode {
    eprintln!("{cmd}: {e}");
    Exit::Error.into()
}

/// Print an error value and its causes not already in its message.
fn fail_err(cmd: &str, e: &(dyn std::error::Error + 'static)) -> ExitCode {
    let mut msg = e.to_string();
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !msg.contains(&text) {
            msg = format!("{msg}: {text}");
        }
        cause = c.source();
    }
    fail(cmd, &msg)
}

/// What the process holds once started, said once; root left as it is
/// and repair without CAP_NET_ADMIN are warnings with what to change.
fn log_privileges(held: &crate::privilege::Held) {
    if held.untouched_root {
        tracing::warn!(
            privileges = %held,
            "running as root with what the launcher gave: pass --user UID:GID (FRR's user) to \
             run as that user with CAP_NET_ADMIN alone (docs/DEPLOY.md, \"Privileges\")"
        );
    } else if let Some(cap) = held.missing {
        tracing::warn!(
            privileges = %held,
            "repair mode without {cap}: the kernel will refuse every heal (reported in /status); \
             add NET_ADMIN to securityContext.capabilities.add (Kubernetes, with --user), \
             --cap-add=NET_ADMIN (podman) or AmbientCapabilities=CAP_NET_ADMIN (systemd)"
        );
    } else {
        tracing::info!(privileges = %held, "privileges set");
    }
}

/// A runtime for one subcommand (current-thread: nothing here needs more).
fn runtime(cmd: &str) -> Result<tokio::runtime::Runtime, ExitCode> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| fail(cmd, &format!("cannot start the async runtime: {e}")))
}
