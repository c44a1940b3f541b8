//! A PMI client driven by its arguments, used by the launcher's integration tests.
//!
//! `pmi-rank-probe [--pmi1|--pmi2] ACTION...` connects with `PmiClient::from_env`, runs
//! the actions in order, then finalizes and exits 0. Actions:
//!
//! | action         | effect                                                         |
//! |----------------|----------------------------------------------------------------|
//! | `info`         | print `rank R size N mode M appnum A universe U kvs K`         |
//! | `exchange`     | put a value, fence, check every rank's value                   |
//! | `nodes`        | print the node of every rank                                   |
//! | `psets`        | print each process set of the job as `pset NAME RANKLIST`      |
//! | `pid`          | print `pid R PID`                                              |
//! | `shm`          | create `/dev/shm/weft.<kvs>.probe<R>` (a segment left behind)  |
//! | `stdin`        | print the first line of stdin                                  |
//! | `env NAME`     | print the variable NAME                                        |
//! | `fence`        | a fence                                                        |
//! | `fd`           | print whether the `PMI_FD` socket is close-on-exec             |
//! | `finalize`     | finalize, print whether `PMI_FD` got closed, exit 0            |
//! | `abort R CODE` | rank R aborts the job with CODE, then waits                    |
//! | `exit R CODE`  | rank R finalizes and exits with CODE                           |
//! | `quit R`       | rank R exits 0 without finalizing                              |
//! | `kill R SIG`   | rank R sends itself signal SIG                                 |
//! | `spin`         | wait forever                                                   |

use std::io::BufRead;
use std::process::exit;
use std::thread::sleep;
use std::time::Duration;

use weft_pmi::{decode_psets, format_ranklist, PmiClient, PSETS_KEY};

fn main() {
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let version = match args.first().map(String::as_str) {
        Some("--pmi1") => Some(1),
        Some("--pmi2") => Some(2),
        _ => None,
    };
    if version.is_some() {
        args.remove(0);
    }
    let mut pmi = PmiClient::from_env(version).unwrap_or_else(|e| fail(&e.to_string()));
    let me = pmi.rank();
    let mut args = args.into_iter();
    while let Some(action) = args.next() {
        let mut next = |what: &str| -> String {
            args.next()
                .unwrap_or_else(|| fail(&format!("missing {what}")))
        };
        let number = |text: String| -> i32 {
            text.parse()
                .unwrap_or_else(|_| fail(&format!("{text:?} is not a number")))
        };
        match action.as_str() {
            "info" => {
                let appnum = pmi.appnum().unwrap_or_else(|e| fail(&e.to_string()));
                let universe = pmi.universe_size().unwrap_or_else(|e| fail(&e.to_string()));
                println!(
                    "rank {me} size {} mode {:?} appnum {appnum} universe {universe:?} kvs {}",
                    pmi.size(),
                    pmi.mode(),
                    pmi.kvs_name()
                )
            }
            "exchange" => {
                pmi.put("probe", &format!("value-of-{me}"))
                    .unwrap_or_else(|e| fail(&e.to_string()));
                pmi.fence().unwrap_or_else(|e| fail(&e.to_string()));
                for r in 0..pmi.size() {
                    let got = pmi.get(r, "probe").unwrap_or_else(|e| fail(&e.to_string()));
                    if got.as_deref() != Some(format!("value-of-{r}").as_str()) {
                        fail(&format!("rank {r}'s value is {got:?}"));
                    }
                }
                println!("rank {me} exchange ok");
            }
            "nodes" => println!(
                "rank {me} nodes {:?}",
                pmi.node_of_ranks().unwrap_or_else(|e| fail(&e.to_string()))
            ),
            "psets" => {
                let value = pmi
                    .get_job_attr(PSETS_KEY)
                    .unwrap_or_else(|e| fail(&e.to_string()));
                for pset in decode_psets(&value.unwrap_or_default())
                    .unwrap_or_else(|e| fail(&e.to_string()))
                {
                    println!(
                        "rank {me} pset {} {}",
                        pset.name,
                        format_ranklist(&pset.ranks)
                    );
                }
            }
            "pid" => println!("pid {me} {}", std::process::id()),
            "shm" => {
                let path = format!("/dev/shm/weft.{}.probe{me}", pmi.kvs_name());
                std::fs::write(&path, b"left behind")
                    .unwrap_or_else(|e| fail(&format!("{path}: {e}")));
                println!("rank {me} shm {path}");
            }
            "stdin" => {
                let mut line = String::new();
                let n = std::io::stdin().lock().read_line(&mut line).unwrap_or(0);
                let text = if n == 0 { "<eof>" } else { line.trim_end() };
                println!("rank {me} stdin: {text}");
            }
            "env" => {
                let name = next("a variable name");
                println!(
                    "rank {me} env {name}={}",
                    std::env::var(&name).unwrap_or_default()
                );
            }
            "fence" => pmi.fence().unwrap_or_else(|e| fail(&e.to_string())),
            "fd" => println!("rank {me} pmi-fd cloexec {}", pmi_fd_is_cloexec()),
            "finalize" => {
                pmi.finalize().unwrap_or_else(|e| fail(&e.to_string()));
                let fd = std::env::var("PMI_FD").unwrap_or_default();
                let open = std::path::Path::new(&format!("/proc/self/fd/{fd}")).exists();
                println!("rank {me} pmi-fd open after finalize {open}");
                exit(0);
            }
            "abort" => {
                let (rank, code) = (number(next("a rank")), number(next("a code")));
                if rank == me as i32 {
                    pmi.abort(code, &format!("probe abort; from rank {me}"));
                    spin();
                }
            }
            "exit" => {
                let (rank, code) = (number(next("a rank")), number(next("a code")));
                if rank == me as i32 {
                    pmi.finalize().unwrap_or_else(|e| fail(&e.to_string()));
                    exit(code);
                }
            }
            "quit" => {
                if number(next("a rank")) == me as i32 {
                    exit(0);
                }
            }
            "kill" => {
                let (rank, sig) = (number(next("a rank")), number(next("a signal")));
                if rank == me as i32 {
                    // SAFETY: kill has no memory effects; it signals this very process.
                    unsafe { libc::kill(libc::getpid(), sig) };
                    spin();
                }
            }
            "spin" => spin(),
            other => fail(&format!("unknown action {other:?}")),
        }
    }
    pmi.finalize().unwrap_or_else(|e| fail(&e.to_string()));
}

/// Whether the inherited `PMI_FD` descriptor has `O_CLOEXEC` set, from `/proc/self/fdinfo`.
fn pmi_fd_is_cloexec() -> bool {
    let fd = std::env::var("PMI_FD").unwrap_or_else(|_| fail("PMI_FD is not set"));
    let info = std::fs::read_to_string(format!("/proc/self/fdinfo/{fd}"))
        .unwrap_or_else(|e| fail(&e.to_string()));
    let flags = info
        .lines()
        .find_map(|l| l.strip_prefix("flags:"))
        .and_then(|f| i64::from_str_radix(f.trim(), 8).ok())
        .unwrap_or_else(|| fail("no flags in fdinfo"));
    flags & i64::from(libc::O_CLOEXEC) != 0
}

/// Waits forever, without using the CPU.
fn spin() -> ! {
    loop {
        sleep(Duration::from_millis(100));
    }
}

/// Reports a failed check and exits 99.
fn fail(msg: &str) -> ! {
    eprintln!("pmi-rank-probe: {msg}");
    exit(99)
}
