//! The `ribbridge` binary: parses the command line and hands over to
//! [`ribbridge::cli`]. Exit codes: 0 success, 1 drift found (status), 2 error.

use std::process::ExitCode;

fn main() -> ExitCode {
    ribbridge::cli::main()
}
