//! `ribbridge kernel`: a watched table as the mirror holds it, printed the
//! way `ip route` prints it.

use std::process::ExitCode;

use super::Exit;
use crate::kernel::{self, ShowInput};
use crate::model::{Family, TableId};

/// `ribbridge kernel` flags.
#[derive(Debug, clap::Args)]
#[command(after_help = "Exit status: 0 printed, 2 error (no netlink, table unreadable).")]
pub struct Args {
    /// Routing table to print.
    #[arg(long, value_name = "ID", default_value_t = crate::model::VIP_TABLE)]
    table: TableId,
    /// JSON in the shape of `ip -json route show table N`.
    #[arg(long)]
    json: bool,
    /// Only one family: 4 or 6 (default: both, IPv4 first).
    #[arg(long, value_name = "4|6", value_parser = kernel::family_word)]
    family: Option<Family>,
}

/// `ribbridge kernel`.
pub fn run(args: Args) -> ExitCode {
    const CMD: &str = "ribbridge kernel";
    let rt = match super::runtime(CMD) {
        Ok(rt) => rt,
        Err(code) => return code,
    };
    let input = ShowInput {
        table: args.table,
        family: args.family,
        json: args.json,
    };
    match rt.block_on(kernel::show_table(&input)) {
        Ok(out) => {
            println!("{out}");
            ExitCode::from(Exit::Ok)
        }
        Err(e) => super::fail_err(CMD, &e),
    }
}
