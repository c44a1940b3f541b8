//! `mpiexec`: Weft's embedded single-node launcher and PMI server.
//!
//! It starts the ranks with a PMI socket each (`PMI_FD`), serves PMI-1 and PMI-2 from a
//! single event loop, forwards the ranks' output line by line, and ends the whole job
//! as soon as one rank fails.

mod cli;
mod job;
mod output;
mod shm;
mod spawn;
mod status;
mod sys;

use std::io::{self, Read};
use std::path::Path;
use std::process::ExitCode;

use weft_pmi::{encode_psets, Pset, Server, PSETS_KEY};

use cli::{Bind, Options, Request};
use job::Job;
use spawn::JobEnv;

fn main() -> ExitCode {
    let mut args = Vec::new();
    for arg in std::env::args_os().skip(1) {
        match arg.into_string() {
            Ok(a) => args.push(a),
            Err(bad) => return usage_error(&format!("argument {bad:?} is not valid UTF-8")),
        }
    }
    // MPIEXEC_TIMEOUT is the name MPICH's Hydra (and test harnesses written for it) use.
    let timeout_env = std::env::var("WEFT_MPIEXEC_TIMEOUT")
        .or_else(|_| std::env::var("MPIEXEC_TIMEOUT"))
        .ok();
    let code = match cli::parse(&args, timeout_env.as_deref()) {
        Ok(Request::Help) => {
            print!("{}", cli::USAGE);
            0
        }
        Ok(Request::Version) => {
            println!("mpiexec (Weft) {}", env!("CARGO_PKG_VERSION"));
            0
        }
        Ok(Request::Run(opts)) => launch(&opts),
        Err(msg) => return usage_error(&msg),
    };
    ExitCode::from(u8::try_from(code).unwrap_or(1))
}

/// Reports a command-line mistake: the message, the usage text, exit code 2.
fn usage_error(msg: &str) -> ExitCode {
    eprint!("mpiexec: {msg}\n\n{}", cli::USAGE);
    ExitCode::from(2)
}

/// Runs the job `opts` describes and returns the launcher's exit code.
fn launch(opts: &Options) -> i32 {
    if let Err(message) = check_config(opts, |name| std::env::var(name).ok()) {
        eprintln!("mpiexec: {message}; no rank was started");
        return 2;
    }
    let size = opts.size();
    let psets = match opts
        .psets
        .iter()
        .map(|p| Pset::parse(p, size))
        .collect::<Result<Vec<_>, _>>()
    {
        Ok(psets) => psets,
        Err(e) => {
            eprintln!("mpiexec: --pset: {e}");
            return 2;
        }
    };
    // Segments of jobs whose launcher was killed before it could remove them.
    shm::sweep_dead_jobs(Path::new("/dev/shm"), shm::launcher_running);
    let kvsname = shm::job_name(&random_hex());
    let mut server = Server::new(&kvsname, size);
    if !psets.is_empty() {
        server.set_job_attr(PSETS_KEY, &encode_psets(&psets));
    }
    let signals = match sys::SignalFd::new(&job::HANDLED_SIGNALS) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("mpiexec: cannot set up signal handling: {e}");
            return 1;
        }
    };
    let env = JobEnv {
        size,
        hostname: spawn::hostname(),
        genv: opts.genv.clone(),
        cpus: match opts.bind {
            Bind::Core => sys::allowed_cpus(),
            Bind::None => Vec::new(),
        },
    };
    let mut started = Vec::new();
    let mut rank = 0;
    for (appnum, program) in opts.programs.iter().enumerate() {
        for _ in 0..program.ranks {
            server.set_appnum(rank, appnum as i32);
            match spawn::start(&env, rank, program) {
                Ok(s) => started.push(s),
                Err(e) => {
                    eprintln!(
                        "mpiexec: cannot start rank {rank} ({}): {e}",
                        program.command
                    );
                    for mut s in started {
                        let _ = s.child.kill();
                        let _ = s.child.wait();
                    }
                    return if e.kind() == io::ErrorKind::NotFound {
                        127
                    } else {
                        126
                    };
                }
            }
            rank += 1;
        }
    }
    let code = Job::new(started, server, signals, opts.tag_output, opts.timeout).run();
    shm::remove_job_segments(Path::new("/dev/shm"), &kvsname);
    code
}

/// Checks the `WEFT_*` variables each program's ranks will see (the launcher's environment
/// `inherited`, then `-genv`, then the program's `-env`, later settings winning) with the
/// library's own parser, so that a bad value is reported once, here, rather than by every
/// rank. (The library still checks them: it may run under another launcher, or none.)
fn check_config(opts: &Options, inherited: impl Fn(&str) -> Option<String>) -> Result<(), String> {
    let last = |pairs: &[(String, String)], name: &str| {
        pairs
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
    };
    for program in &opts.programs {
        weft_core::config::Config::from_lookup(|name| {
            last(&program.env, name)
                .or_else(|| last(&opts.genv, name))
                .or_else(|| inherited(name))
        })
        .map_err(|e| e.message)?;
    }
    Ok(())
}

/// Eight random bytes in hex, to make the job's name unique.
fn random_hex() -> String {
    let mut bytes = [0u8; 8];
    let read = std::fs::File::open("/dev/urandom").and_then(|mut f| f.read_exact(&mut bytes));
    if read.is_err() {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or_default();
        bytes = nanos.to_le_bytes();
    }
    weft_pmi::hex_encode(&bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn options(line: &str) -> Options {
        let args: Vec<String> = line.split_whitespace().map(String::from).collect();
        match cli::parse(&args, None) {
            Ok(Request::Run(o)) => o,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_ranks_configuration_is_checked_with_the_librarys_parser() {
        let bad_inherited = |name: &str| (name == "WEFT_NUM_VCIS").then(|| "0".to_string());
        let e = check_config(&options("-n 2 prog"), bad_inherited).unwrap_err();
        assert!(e.contains("WEFT_NUM_VCIS=\"0\""), "{e}");
        // -genv overrides the launcher's environment, -env overrides -genv.
        assert!(check_config(&options("-genv WEFT_NUM_VCIS 2 prog"), bad_inherited).is_ok());
        let e = check_config(
            &options("-genv WEFT_SHM_LARGE x -env WEFT_SHM_LARGE cma a : b"),
            |_| None,
        )
        .unwrap_err();
        assert!(
            e.contains("WEFT_SHM_LARGE=\"x\""),
            "the second program sees -genv: {e}"
        );
        assert!(check_config(&options("-env WEFT_COLL_BCAST linear prog"), |_| None).is_ok());
    }
}
