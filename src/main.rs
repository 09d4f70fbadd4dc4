//! The `ribbridge` binary: parses the command line and hands over to
//! [`ribbridge::cli`]. Exit codes (`ribbridge::cli::Exit`): 0 success, 1 drift
//! found (`status`) or not done in time (`drain`, `undrain`), 2 error, 3
//! unchanged (`render --out`), 4 an essential task ended (`run`: restart it).

use std::process::ExitCode;

fn main() -> ExitCode {
    ribbridge::cli::main()
}
