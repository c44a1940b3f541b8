//! End-to-end tests of `mpiexec` with `pmi-rank-probe` as the ranks.
//!
//! Every job runs under `--timeout` and every wait is bounded, so a regression fails
//! instead of hanging; the machine may have fewer cores than ranks.

use std::io::{BufRead, BufReader, Read, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdout, Command, Stdio};
use std::thread;
use std::time::{Duration, Instant};

const MPIEXEC: &str = env!("CARGO_BIN_EXE_mpiexec");
const PROBE: &str = env!("CARGO_BIN_EXE_pmi-rank-probe");

/// How long any launcher may take before the test gives up on it.
const LIMIT: Duration = Duration::from_secs(60);

/// The result of one launcher run.
struct Run {
    code: i32,
    stdout: String,
    stderr: String,
    elapsed: Duration,
}

impl Run {
    /// Stdout lines, sorted (ranks print concurrently).
    fn lines(&self) -> Vec<&str> {
        let mut lines: Vec<&str> = self.stdout.lines().collect();
        lines.sort_unstable();
        lines
    }
}

/// Arguments with `{probe}` replaced by the probe's path.
fn argv(args: &[&str]) -> Vec<String> {
    args.iter()
        .map(|a| {
            if *a == "{probe}" {
                PROBE.to_string()
            } else {
                a.to_string()
            }
        })
        .collect()
}

/// Starts `launcher` with `args`, all three standard streams piped.
fn start(launcher: &str, args: &[&str]) -> Child {
    Command::new(launcher)
        .args(argv(args))
        .env_remove("WEFT_MPIEXEC_TIMEOUT")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cannot start the launcher")
}

/// Collects a started launcher's output and exit code, killing it after [`LIMIT`].
/// Assert that the launcher's standard error holds `text`.
fn stderr_has(r: &Run, text: &str) {
    assert!(r.stderr.contains(text), "no {text:?} in: {}", r.stderr);
}

fn finish(mut child: Child, began: Instant) -> Run {
    let out = collect(child.stdout.take());
    let err = collect(child.stderr.take());
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if began.elapsed() > LIMIT {
            let _ = child.kill();
            panic!("the launcher did not finish within {LIMIT:?}");
        }
        thread::sleep(Duration::from_millis(10));
    };
    let elapsed = began.elapsed();
    let run = Run {
        code: status.code().unwrap_or(-1),
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
        elapsed,
    };
    eprintln!(
        "--- stdout\n{}--- stderr\n{}--- code {} in {:?}",
        run.stdout, run.stderr, run.code, run.elapsed
    );
    run
}

/// Reads a stream to its end on a thread (nothing when the test kept the stream).
fn collect(stream: Option<impl Read + Send + 'static>) -> thread::JoinHandle<String> {
    thread::spawn(move || {
        let mut s = String::new();
        if let Some(mut stream) = stream {
            let _ = stream.read_to_string(&mut s);
        }
        s
    })
}

/// Runs `launcher` with `args` and `input` on stdin.
fn run_with(launcher: &str, args: &[&str], input: &str) -> Run {
    let began = Instant::now();
    let mut child = start(launcher, args);
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    finish(child, began)
}

/// Runs our `mpiexec` with a safety time limit in front of `args`.
fn mpiexec(args: &[&str]) -> Run {
    let mut all = vec!["--timeout", "30"];
    all.extend_from_slice(args);
    run_with(MPIEXEC, &all, "")
}

/// The pids the ranks printed with the probe's `pid` action.
fn pids(stdout: &str) -> Vec<u32> {
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix("pid "))
        .map(|l| l.split(' ').nth(1).unwrap().parse().unwrap())
        .collect()
}

/// Whether `pid` still runs (a zombie awaiting an absent reaper counts as gone).
fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat
            .rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z'),
        Err(_) => false,
    }
}

/// The job's kvs name, from the probe's `info` line.
fn kvs_name(stdout: &str) -> String {
    let line = stdout
        .lines()
        .find(|l| l.contains(" kvs "))
        .expect("no info line");
    line.rsplit(' ').next().unwrap().to_string()
}

/// Files the job `kvs` left in /dev/shm.
fn leftover_segments(kvs: &str) -> Vec<PathBuf> {
    let prefix = format!("weft.{kvs}.");
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
                .map(|e| e.path())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn four_ranks_see_distinct_ranks_and_each_others_values() {
    for version in ["--pmi1", "--pmi2"] {
        let r = mpiexec(&["-n", "4", "{probe}", version, "info", "exchange", "nodes"]);
        assert_eq!(r.code, 0);
        let lines = r.lines();
        for rank in 0..4 {
            assert!(
                lines
                    .iter()
                    .any(|l| l.starts_with(&format!("rank {rank} size 4 mode Pmi"))),
                "{lines:?}"
            );
            assert!(lines.contains(&format!("rank {rank} exchange ok").as_str()));
            assert!(lines.contains(&format!("rank {rank} nodes [0, 0, 0, 0]").as_str()));
        }
        assert!(kvs_name(&r.stdout).starts_with("weft-"));
    }
}

#[test]
fn the_worst_exit_code_wins() {
    let r = mpiexec(&["-n", "3", "{probe}", "exit", "1", "3", "exit", "2", "5"]);
    assert_eq!(r.code, 5);
    let r = mpiexec(&["-n", "2", "false"]);
    assert_eq!(r.code, 1);
}

#[test]
fn programs_that_never_speak_pmi_are_fine() {
    let r = mpiexec(&["-n", "2", "sh", "-c", "echo hi; printf partial"]);
    assert_eq!(r.code, 0);
    assert_eq!(r.stdout.matches("hi\n").count(), 2);
    assert_eq!(r.stdout.matches("partial").count(), 2);
}

#[test]
fn abort_ends_the_job_with_its_code() {
    let r = mpiexec(&["-n", "3", "{probe}", "abort", "1", "7", "fence"]);
    assert_eq!(r.code, 7);
    stderr_has(
        &r,
        "mpiexec: rank 1 aborted the job with code 7: probe abort; from rank 1\n",
    );
    assert!(r.elapsed < Duration::from_secs(5));
}

#[test]
fn a_rank_killed_by_a_signal_ends_the_job_quickly_and_completely() {
    let r = mpiexec(&[
        "-n", "3", "{probe}", "info", "pid", "shm", "fence", "kill", "1", "9", "spin",
    ]);
    assert_eq!(r.code, 128 + 9);
    let pids = pids(&r.stdout);
    assert_eq!(pids.len(), 3);
    let line = format!(
        "mpiexec: rank 1 (pid {}) killed by signal 9 (Killed); ending the job",
        pids_of_rank(&r.stdout, 1)
    );
    assert!(r.stderr.contains(&line), "{}", r.stderr);
    assert!(r.elapsed < Duration::from_secs(3), "took {:?}", r.elapsed);
    assert!(pids.iter().all(|&p| !alive(p)), "a rank survived");
    assert_eq!(
        leftover_segments(&kvs_name(&r.stdout)),
        Vec::<PathBuf>::new()
    );
}

/// The pid rank `rank` printed.
fn pids_of_rank(stdout: &str, rank: u32) -> u32 {
    let prefix = format!("pid {rank} ");
    stdout
        .lines()
        .find_map(|l| l.strip_prefix(&prefix))
        .unwrap()
        .parse()
        .unwrap()
}

#[test]
fn exiting_without_finalize_ends_the_job() {
    let r = mpiexec(&["-n", "2", "{probe}", "pid", "fence", "quit", "0", "spin"]);
    assert_ne!(r.code, 0);
    let line = format!(
        "mpiexec: rank 0 (pid {}) exited with code 0 without finalizing PMI; ending the job",
        pids_of_rank(&r.stdout, 0)
    );
    assert!(r.stderr.contains(&line), "{}", r.stderr);
    assert!(r.elapsed < Duration::from_secs(3));
    assert!(!alive(pids_of_rank(&r.stdout, 1)));
}

#[test]
fn the_time_limit_ends_a_spinning_job() {
    let r = run_with(
        MPIEXEC,
        &["--timeout", "1", "-n", "2", "{probe}", "pid", "spin"],
        "",
    );
    assert_eq!(r.code, 124);
    assert!(r.stderr.contains("mpiexec: job timed out after 1 s"));
    assert!(r.elapsed < Duration::from_secs(4));
    assert!(pids(&r.stdout).iter().all(|&p| !alive(p)));
}

#[test]
fn tagged_output_names_the_rank() {
    let r = mpiexec(&["-l", "-n", "2", "{probe}", "info"]);
    assert_eq!(r.code, 0);
    for line in r.stdout.lines() {
        let rank = &line[1..2];
        assert!(
            line.starts_with(&format!("[{rank}] rank {rank} size 2")),
            "{line}"
        );
    }
    assert_eq!(r.stdout.lines().count(), 2);
}

#[test]
fn stdin_reaches_rank_0_only() {
    let r = run_with(
        MPIEXEC,
        &["--timeout", "30", "-n", "2", "{probe}", "stdin"],
        "hello\nmore\n",
    );
    assert_eq!(r.code, 0);
    assert_eq!(r.lines(), ["rank 0 stdin: hello", "rank 1 stdin: <eof>"]);
}

#[test]
fn process_sets_are_visible_through_the_kvs() {
    for version in ["--pmi1", "--pmi2"] {
        let r = mpiexec(&[
            "--pset",
            "app://evens=0,2",
            "--pset=odd=1",
            "-n",
            "3",
            "{probe}",
            version,
            "psets",
        ]);
        assert_eq!(r.code, 0);
        for rank in 0..3 {
            assert!(r
                .stdout
                .contains(&format!("rank {rank} pset app://evens 0,2\n")));
            assert!(r.stdout.contains(&format!("rank {rank} pset odd 1\n")));
        }
    }
    let r = mpiexec(&["--pset", "x=0,5", "-n", "2", "{probe}"]);
    assert_eq!(r.code, 2);
    stderr_has(&r, "rank 5 is out of range (the job has 2 ranks)");
}

#[test]
fn environment_and_mpmd() {
    let r = mpiexec(&[
        "-genv",
        "WEFT_T",
        "g",
        "-n",
        "1",
        "{probe}",
        "info",
        "env",
        "WEFT_T",
        "env",
        "WEFT_MPIEXEC",
        ":",
        "-n",
        "2",
        "-env",
        "WEFT_T",
        "local",
        "{probe}",
        "info",
        "env",
        "WEFT_T",
        "env",
        "MPI_LOCALRANKID",
    ]);
    assert_eq!(r.code, 0);
    let out = &r.stdout;
    assert!(out.contains("rank 0 size 3 mode Pmi1 appnum 0 "));
    assert!(out.contains("rank 2 size 3 mode Pmi1 appnum 1 "));
    assert!(out.contains("rank 0 env WEFT_T=g\n") && out.contains("rank 0 env WEFT_MPIEXEC=1\n"));
    assert!(
        out.contains("rank 1 env WEFT_T=local\n") && out.contains("rank 2 env MPI_LOCALRANKID=2\n")
    );
}

#[test]
fn a_bad_weft_variable_is_reported_once_and_no_rank_starts() {
    let r = mpiexec(&["-genv", "WEFT_NUM_VCIS", "0", "-n", "3", "{probe}", "pid"]);
    assert_eq!(r.code, 2);
    assert_eq!(
        r.stderr.matches("WEFT_NUM_VCIS=\"0\" is not valid").count(),
        1,
        "{}",
        r.stderr
    );
    assert!(r.stderr.starts_with("mpiexec: "), "{}", r.stderr);
    assert!(r.stdout.is_empty(), "ranks ran: {}", r.stdout);
}

#[test]
fn usage_mistakes_and_missing_programs() {
    let r = mpiexec(&["--bogus", "x"]);
    assert_eq!(r.code, 2);
    assert!(r.stderr.contains("unknown option --bogus") && r.stderr.contains("Usage: mpiexec"));
    let r = mpiexec(&["-n", "2", "/nonexistent/weft-program"]);
    assert_eq!(r.code, 127);
    assert!(r.stderr.contains("cannot start rank 0"));
    let r = run_with(MPIEXEC, &["--help"], "");
    assert_eq!(r.code, 0);
    assert!(r.stdout.contains("--tag-output"));
}

/// A job of `n` ranks that print their pids and spin, those pids, and the job's output (kept
/// open while the test runs).
fn spinning_job(n: usize) -> (Child, Vec<u32>, BufReader<ChildStdout>) {
    let ranks = n.to_string();
    let mut child = start(
        MPIEXEC,
        &["--timeout", "30", "-n", &ranks, "{probe}", "pid", "spin"],
    );
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut pids = Vec::new();
    while pids.len() < n {
        let mut line = String::new();
        assert!(reader.read_line(&mut line).unwrap() > 0, "no pid line");
        pids.extend(self::pids(&line));
    }
    (child, pids, reader)
}

#[test]
fn sigterm_to_mpiexec_reaches_every_rank() {
    let began = Instant::now();
    let (child, pids, _stdout) = spinning_job(2);
    send_signal(child.id(), "TERM");
    let r = finish(child, began);
    assert_eq!(r.code, 128 + 15);
    assert!(pids.iter().all(|&p| !alive(p)));
    stderr_has(
        &r,
        "mpiexec: received SIGTERM, ending the job (exit status 143)\n",
    );
}

#[test]
fn sigint_to_mpiexec_is_reported_and_gives_130() {
    let began = Instant::now();
    let (child, pids, _stdout) = spinning_job(1);
    let pid = pids[0];
    send_signal(child.id(), "INT");
    let r = finish(child, began);
    assert_eq!(r.code, 128 + 2);
    assert!(!alive(pid));
    stderr_has(
        &r,
        "mpiexec: received SIGINT, ending the job (exit status 130)\n",
    );
}

#[test]
fn ranks_die_with_a_killed_mpiexec() {
    let (mut child, pids, _stdout) = spinning_job(2);
    child.kill().unwrap();
    child.wait().unwrap();
    let began = Instant::now();
    while pids.iter().any(|&p| alive(p)) {
        assert!(
            began.elapsed() < Duration::from_secs(5),
            "ranks outlived mpiexec"
        );
        thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_killed_launchers_segments_are_swept_by_the_next_launch() {
    let mut child = start(
        MPIEXEC,
        &[
            "--timeout",
            "30",
            "-n",
            "1",
            "{probe}",
            "info",
            "shm",
            "pid",
            "spin",
        ],
    );
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut seen = String::new();
    while !seen.contains("pid ") {
        assert!(
            reader.read_line(&mut seen).unwrap() > 0,
            "no pid line: {seen}"
        );
    }
    let kvs = kvs_name(&seen);
    let rank = pids(&seen)[0];
    child.kill().unwrap();
    child.wait().unwrap();
    let began = Instant::now();
    while alive(rank) {
        assert!(
            began.elapsed() < Duration::from_secs(5),
            "the rank outlived mpiexec"
        );
        thread::sleep(Duration::from_millis(20));
    }
    // (Another test's launch may already have swept it: tests run in parallel.)
    assert!(
        seen.contains(" shm /dev/shm/weft."),
        "the segment was made: {seen}"
    );
    let r = mpiexec(&["-n", "1", "{probe}", "fence"]);
    assert_eq!(r.code, 0);
    assert!(
        leftover_segments(&kvs).is_empty(),
        "the next launch swept the dead job's segment"
    );
}

/// Sends a signal with the `kill` utility (keeps the tests free of `unsafe`).
fn send_signal(pid: u32, signal: &str) {
    let status = Command::new("kill")
        .args([format!("-{signal}"), pid.to_string()])
        .status()
        .unwrap();
    assert!(status.success());
}

#[test]
fn the_pmi_socket_is_close_on_exec_and_closed_at_finalize() {
    for version in ["--pmi1", "--pmi2"] {
        let r = mpiexec(&["-n", "2", "{probe}", version, "fd", "finalize"]);
        assert_eq!(r.code, 0);
        assert_eq!(
            r.lines(),
            [
                "rank 0 pmi-fd cloexec true",
                "rank 0 pmi-fd open after finalize false",
                "rank 1 pmi-fd cloexec true",
                "rank 1 pmi-fd open after finalize false"
            ]
        );
    }
}

#[test]
fn without_a_launcher_the_probe_is_a_singleton() {
    let began = Instant::now();
    let mut cmd = Command::new(PROBE);
    cmd.args(["info", "exchange", "nodes"]);
    for var in [
        "PMI_FD",
        "PMI_PORT",
        "PMI_ID",
        "PMI_JOBID",
        "PMI2_SUN_PATH",
        "PMI_RANK",
        "PMI_SIZE",
    ] {
        cmd.env_remove(var);
    }
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let r = finish(child, began);
    assert_eq!(r.code, 0);
    assert!(r
        .stdout
        .starts_with("rank 0 size 1 mode Singleton appnum 0 universe Some(1) kvs singleton-"));
    assert!(r.stdout.contains("rank 0 exchange ok\nrank 0 nodes [0]\n"));
}

#[test]
fn bind_to_core_pins_each_rank_to_its_own_cpu() {
    let script = "grep Cpus_allowed_list /proc/self/status";
    let r = mpiexec(&["-l", "-bind-to", "core", "-n", "2", "sh", "-c", script]);
    assert_eq!(r.code, 0);
    let cpus: Vec<&str> = r
        .lines()
        .iter()
        .map(|l| l.rsplit('\t').next().unwrap())
        .collect();
    assert_eq!(cpus.len(), 2);
    assert!(
        cpus.iter().all(|c| c.parse::<usize>().is_ok()),
        "not pinned to one CPU: {cpus:?}"
    );
    let ours = std::fs::read_to_string("/proc/self/status").unwrap();
    let allowed = ours
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim();
    if allowed.contains([',', '-']) {
        assert_ne!(
            cpus[0], cpus[1],
            "two ranks share a CPU although several are allowed"
        );
    }
    let r = mpiexec(&["-bind-to", "none", "-n", "1", "sh", "-c", script]);
    assert_eq!(r.stdout.rsplit('\t').next().unwrap().trim(), allowed);
}

#[test]
fn ranks_are_not_bound_by_default() {
    // Binding by default pinned rank 0 of every concurrent job to the same CPU.
    let script = "grep Cpus_allowed_list /proc/self/status";
    let ours = std::fs::read_to_string("/proc/self/status").unwrap();
    let allowed = ours
        .lines()
        .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
        .unwrap()
        .trim()
        .to_string();
    let r = mpiexec(&["-n", "2", "sh", "-c", script]);
    assert_eq!(r.code, 0);
    let cpus: Vec<&str> = r
        .lines()
        .iter()
        .map(|l| l.rsplit('\t').next().unwrap())
        .collect();
    assert_eq!(cpus, [allowed.as_str(), allowed.as_str()]);
}

/// MPICH's Hydra from the PyPI wheel, if this machine has it.
fn hydra() -> Option<String> {
    let path = PathBuf::from(std::env::var_os("HOME")?).join(".cache/weft/mpich/bin/mpiexec");
    path.exists().then(|| path.to_string_lossy().into_owned())
}

#[test]
fn the_probe_runs_under_hydra() {
    let Some(hydra) = hydra() else {
        println!(
            "note: ~/.cache/weft/mpich/bin/mpiexec is absent; Hydra interoperability not tested"
        );
        return;
    };
    for args in [
        &["-n", "2", "{probe}", "--pmi1", "info", "exchange", "nodes"][..],
        &["-n", "2", "{probe}", "--pmi2", "info", "exchange", "nodes"],
        &[
            "-pmi-port",
            "-n",
            "2",
            "{probe}",
            "--pmi1",
            "info",
            "exchange",
        ],
        &[
            "-pmi-port",
            "-n",
            "2",
            "{probe}",
            "--pmi2",
            "info",
            "exchange",
        ],
    ] {
        let r = run_with(&hydra, args, "");
        assert_eq!(r.code, 0);
        for rank in 0..2 {
            assert!(r.stdout.contains(&format!("rank {rank} size 2 mode Pmi")));
            assert!(r.stdout.contains(&format!("rank {rank} exchange ok\n")));
        }
        if args.contains(&"nodes") {
            assert!(r.stdout.contains("rank 0 nodes [0, 0]\n"));
        }
    }
    for version in ["--pmi1", "--pmi2"] {
        let r = run_with(
            &hydra,
            &["-n", "2", "{probe}", version, "abort", "1", "7", "fence"],
            "",
        );
        assert_eq!(r.code, 7);
    }
    // Hydra treats its own host name and "localhost" as two nodes: a multi-node mapping.
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname").unwrap_or_default();
    let hosts = format!("{}:1,localhost:2", host.trim());
    let r = run_with(
        &hydra,
        &["-n", "3", "-hosts", &hosts, "{probe}", "--pmi2", "nodes"],
        "",
    );
    if r.code == 0 && host.trim() != "localhost" {
        assert!(r.stdout.contains("rank 2 nodes [0, 1, 1]\n"));
    }
}
