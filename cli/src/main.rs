//! `wgml`: run, compare, trace, benchmark and profile graph files on any registered backend.
//!
//! Exit status: 0 success, 1 a comparison found a mismatch, 2 any error (bad arguments, a file
//! that cannot be read, a backend error). See docs/CLI.md.

mod args;
mod backends;
mod bench;
mod compare;
mod feeds;
mod io;
mod profile;
mod progress;
mod random;
mod report;
mod run;
mod session;

// The backends register themselves with `inventory`; a crate nothing refers to may be dropped by
// the linker together with its registration, so the tool names them explicitly.
use backend_cpu_ref as _;
use backend_wgpu as _;

use args::{Cli, Command};
use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Run(a) => run::run(a),
        Command::Compare(a) => compare::compare(a),
        Command::Backends => backends::backends(),
        Command::Report(a) => report::report(a),
        Command::Bench(a) => bench::bench(a),
        Command::Profile(a) => profile::profile(a),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            // `{:#}` prints the whole context chain: "cannot read x.npy: No such file…".
            eprintln!("wgml: error: {e:#}");
            ExitCode::from(2)
        }
    }
}
