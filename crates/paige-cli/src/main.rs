//! `paige`: the command-line face of Paige.

mod doctor;
mod serve;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};

#[derive(Debug, Parser)]
#[command(name = "paige", version, about = "Paige, a coding coach that never writes your code for you")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run Paige without a window: the core plus its localhost server (/health, /mcp).
    ///
    /// Settings come from the environment, then `.env` in the working directory; flags win
    /// over both. Required: PROJECT_DIR (or --project) and ANTHROPIC_API_KEY. Optional:
    /// PORT (3000), DATA_DIR (~/.paige/), CHROMADB_URL, PAIGE_TOKEN (random per launch).
    Serve(ServeArgs),
    /// Check that Paige can run here: configuration, DATA_DIR, the database, and the
    /// Anthropic API key.
    ///
    /// The key is checked with the cheapest authenticated request (listing one model; no
    /// model runs) against ANTHROPIC_BASE_URL (default https://api.anthropic.com). Prints one
    /// line per check and exits 1 if any check fails.
    Doctor(DoctorArgs),
}

#[derive(Debug, Args)]
struct DoctorArgs {
    /// The project to check with [env: PROJECT_DIR]
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Where Paige keeps its database and run files [env: DATA_DIR] [default: ~/.paige/]
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
}

#[derive(Debug, Args)]
struct ServeArgs {
    /// The project to coach on [env: PROJECT_DIR]
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// Port on 127.0.0.1; 0 picks a free one [env: PORT] [default: 3000]
    #[arg(long, value_name = "N")]
    port: Option<u16>,
    /// Where Paige keeps its database and run files [env: DATA_DIR] [default: ~/.paige/]
    #[arg(long, value_name = "DIR")]
    data_dir: Option<PathBuf>,
    /// The built web UI to serve at / (a Vite `dist` folder) [env: PAIGE_UI_DIR]
    /// [default: ./ui/dist, else the checkout's ui/dist]
    #[arg(long, value_name = "DIR", env = "PAIGE_UI_DIR")]
    ui_dir: Option<PathBuf>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Serve(args) => serve::run(args).map(|()| true),
        Command::Doctor(args) => doctor::run(args),
    };
    match result {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::FAILURE,
        Err(err) => {
            eprintln!("error: {err:#}");
            ExitCode::FAILURE
        }
    }
}
