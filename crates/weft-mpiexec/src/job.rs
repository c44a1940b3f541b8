//! The running job: one event loop over the ranks' PMI sockets and output pipes, the
//! launcher's signals (through a `signalfd`) and two timers (the job's time limit and
//! the grace period between SIGTERM and SIGKILL).
//!
//! A rank that dies by a signal, exits while connected to PMI without finalizing, or
//! breaks the PMI protocol ends the job; so do a PMI abort, the time limit and SIGINT/
//! SIGTERM/SIGHUP sent to the launcher. Ending means: SIGTERM (or the received signal)
//! to every live rank, SIGKILL to those still alive after [`GRACE`], and reaping them all.
#![forbid(unsafe_code)]

use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::AsRawFd;
use std::os::unix::net::UnixStream;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use weft_pmi::{Event, PeerState, Server};

use crate::output::LineForwarder;
use crate::spawn::Started;
use crate::status::{describe, exit_code, signal_symbol};
use crate::sys::{self, SignalFd};

/// Time the ranks get between SIGTERM and SIGKILL.
pub const GRACE: Duration = Duration::from_millis(500);

/// The signals the launcher handles through its `signalfd`.
pub const HANDLED_SIGNALS: [i32; 4] = [libc::SIGCHLD, libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Why the job is being ended early; decides the launcher's exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ending {
    /// The time limit passed: exit 124.
    Timeout,
    /// A rank called PMI abort with this code.
    Abort(i32),
    /// The launcher received this signal: exit 128+signal.
    Signal(i32),
    /// A rank failed; its exit code.
    Failure(i32),
}

/// One output stream of a rank.
struct Output {
    file: File,
    forwarder: LineForwarder,
    is_stderr: bool,
}

/// A rank as the launcher tracks it.
struct Rank {
    child: Child,
    status: Option<ExitStatus>,
    pmi: Option<UnixStream>,
    outputs: [Option<Output>; 2],
}

/// What a poll entry stands for.
#[derive(Clone, Copy)]
enum Source {
    Signals,
    Pmi(usize),
    Output(usize, usize),
}

/// A launched job.
pub struct Job {
    ranks: Vec<Rank>,
    server: Server,
    signals: SignalFd,
    deadline: Option<(Instant, Duration)>,
    grace_end: Option<Instant>,
    ending: Option<Ending>,
    /// Scratch space for reading the ranks' output.
    buf: Vec<u8>,
}

impl Job {
    /// Takes over started ranks; `timeout` limits the job's run time.
    pub fn new(
        started: Vec<Started>,
        server: Server,
        signals: SignalFd,
        tag_output: bool,
        timeout: Option<Duration>,
    ) -> Job {
        let ranks = started
            .into_iter()
            .enumerate()
            .map(|(rank, s)| {
                let prefix = if tag_output {
                    format!("[{rank}] ")
                } else {
                    String::new()
                };
                let [stdout, stderr] = s.outputs;
                let output = |file, is_stderr| {
                    Some(Output {
                        file,
                        forwarder: LineForwarder::new(prefix.clone()),
                        is_stderr,
                    })
                };
                Rank {
                    child: s.child,
                    status: None,
                    pmi: Some(s.pmi),
                    outputs: [output(stdout, false), output(stderr, true)],
                }
            })
            .collect();
        Job {
            ranks,
            server,
            signals,
            deadline: timeout.map(|t| (Instant::now() + t, t)),
            grace_end: None,
            ending: None,
            buf: vec![0; 64 * 1024],
        }
    }

    /// Runs the job to its end and returns the launcher's exit code.
    pub fn run(mut self) -> i32 {
        while self.ranks.iter().any(|r| r.status.is_none()) {
            let (mut fds, sources) = self.poll_set();
            if let Err(e) = sys::poll(&mut fds, self.next_timer()) {
                eprintln!("mpiexec: poll failed: {e}; killing the job");
                return self.abandon();
            }
            for (fd, source) in fds.iter().zip(sources) {
                if fd.revents == 0 {
                    continue;
                }
                match source {
                    Source::Signals => self.on_signals(),
                    Source::Pmi(rank) => self.read_pmi(rank),
                    Source::Output(rank, stream) => self.read_output(rank, stream),
                }
            }
            self.on_timers();
        }
        self.drain_outputs();
        self.exit_code()
    }

    /// The descriptors to wait on and what each one is.
    fn poll_set(&self) -> (Vec<libc::pollfd>, Vec<Source>) {
        let mut fds = vec![sys::readable(self.signals.as_raw_fd())];
        let mut sources = vec![Source::Signals];
        for (i, rank) in self.ranks.iter().enumerate() {
            if let Some(pmi) = &rank.pmi {
                fds.push(sys::readable(pmi.as_raw_fd()));
                sources.push(Source::Pmi(i));
            }
            for (s, out) in rank.outputs.iter().enumerate() {
                if let Some(out) = out {
                    fds.push(sys::readable(out.file.as_raw_fd()));
                    sources.push(Source::Output(i, s));
                }
            }
        }
        (fds, sources)
    }

    /// How long until the nearest timer fires; `None` when no timer is armed.
    fn next_timer(&self) -> Option<Duration> {
        let deadline = self
            .deadline
            .filter(|_| self.ending.is_none())
            .map(|(at, _)| at);
        let now = Instant::now();
        [deadline, self.grace_end]
            .into_iter()
            .flatten()
            .min()
            .map(|at| at.saturating_duration_since(now))
    }

    /// Fires the time limit and the end of the grace period.
    fn on_timers(&mut self) {
        let now = Instant::now();
        if let Some((at, limit)) = self.deadline {
            if now >= at && self.ending.is_none() {
                eprintln!("mpiexec: job timed out after {} s", limit.as_secs());
                self.end(Ending::Timeout);
            }
        }
        if self.grace_end.is_some_and(|at| now >= at) {
            self.grace_end = None;
            self.kill_all(libc::SIGKILL);
        }
    }

    /// Handles every pending signal.
    fn on_signals(&mut self) {
        loop {
            match self.signals.next() {
                Ok(Some(libc::SIGCHLD)) => self.reap(),
                Ok(Some(sig)) if self.ending.is_none() => {
                    eprintln!(
                        "mpiexec: received {}, ending the job (exit status {})",
                        signal_symbol(sig),
                        128 + sig
                    );
                    self.end(Ending::Signal(sig));
                }
                // A second interruption while ending: no more grace.
                Ok(Some(sig)) => {
                    eprintln!(
                        "mpiexec: received {} while ending the job, killing the ranks",
                        signal_symbol(sig)
                    );
                    self.kill_all(libc::SIGKILL);
                }
                Ok(None) => return,
                Err(e) => {
                    eprintln!("mpiexec: reading signals failed: {e}");
                    return;
                }
            }
        }
    }

    /// Collects every rank that has exited.
    fn reap(&mut self) {
        for i in 0..self.ranks.len() {
            if self.ranks[i].status.is_some() {
                continue;
            }
            if let Ok(Some(status)) = self.ranks[i].child.try_wait() {
                self.on_exit(i, status);
            }
        }
    }

    /// Judges a rank's exit, once everything it sent to PMI has been read.
    fn on_exit(&mut self, i: usize, status: ExitStatus) {
        while self.ranks[i].pmi.is_some() && self.pmi_ready(i) {
            self.read_pmi(i);
        }
        self.ranks[i].status = Some(status);
        if self.ending.is_some() {
            return;
        }
        let code = exit_code(status);
        if status.code().is_none() {
            self.fail(i, &describe(status), code);
        } else if self.server.state(i as u32) == PeerState::Active {
            let why = format!("{} without finalizing PMI", describe(status));
            self.fail(i, &why, code.max(1));
        }
    }

    /// Whether rank `i`'s PMI socket has bytes (or its end) waiting.
    fn pmi_ready(&self, i: usize) -> bool {
        let Some(pmi) = &self.ranks[i].pmi else {
            return false;
        };
        let mut fd = [sys::readable(pmi.as_raw_fd())];
        matches!(sys::poll(&mut fd, Some(Duration::ZERO)), Ok(1))
    }

    /// Reads from rank `i`'s PMI socket and carries out the server's answers.
    fn read_pmi(&mut self, i: usize) {
        let Some(pmi) = self.ranks[i].pmi.as_mut() else {
            return;
        };
        let mut buf = [0u8; 4096];
        let n = match pmi.read(&mut buf) {
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => return,
            Err(_) => 0,
        };
        if n == 0 {
            self.ranks[i].pmi = None;
            return;
        }
        for event in self.server.receive(i as u32, &buf[..n]) {
            match event {
                Event::Send { rank, bytes } => {
                    if let Some(pmi) = self.ranks[rank as usize].pmi.as_mut() {
                        // A rank that is gone cannot be answered; its exit is judged elsewhere.
                        let _ = pmi.write_all(&bytes);
                    }
                }
                Event::Abort {
                    rank,
                    exit_code,
                    message,
                } => {
                    eprintln!(
                        "mpiexec: rank {rank} aborted the job with code {exit_code}: {message}"
                    );
                    self.end(Ending::Abort(exit_code));
                }
                Event::ProtocolError { rank, reason } => {
                    self.fail(
                        rank as usize,
                        &format!("broke the PMI protocol ({reason})"),
                        1,
                    );
                }
            }
        }
    }

    /// Forwards what rank `i` wrote to output stream `s`.
    fn read_output(&mut self, i: usize, s: usize) {
        let Some(out) = self.ranks[i].outputs[s].as_mut() else {
            return;
        };
        match out.file.read(&mut self.buf) {
            Ok(0) | Err(_) => {
                forward(out, None);
                self.ranks[i].outputs[s] = None;
            }
            Ok(n) => forward(out, Some(&self.buf[..n])),
        }
    }

    /// After the last rank exited: forwards what is still buffered in the pipes, without
    /// waiting for processes the ranks may have left holding them.
    fn drain_outputs(&mut self) {
        for i in 0..self.ranks.len() {
            for s in 0..2 {
                while let Some(out) = &self.ranks[i].outputs[s] {
                    let mut fd = [sys::readable(out.file.as_raw_fd())];
                    if matches!(sys::poll(&mut fd, Some(Duration::ZERO)), Ok(1)) {
                        self.read_output(i, s);
                    } else if let Some(mut out) = self.ranks[i].outputs[s].take() {
                        forward(&mut out, None);
                    }
                }
            }
        }
    }

    /// Reports rank `i`'s failure and ends the job with `code`.
    fn fail(&mut self, i: usize, why: &str, code: i32) {
        if self.ending.is_some() {
            return;
        }
        let pid = self.ranks[i].child.id();
        eprintln!("mpiexec: rank {i} (pid {pid}) {why}; ending the job");
        self.end(Ending::Failure(code));
    }

    /// Starts ending the job: a first signal now, SIGKILL after the grace period.
    fn end(&mut self, ending: Ending) {
        if self.ending.is_some() {
            return;
        }
        self.ending = Some(ending);
        let signal = match ending {
            Ending::Signal(sig) => sig,
            _ => libc::SIGTERM,
        };
        self.kill_all(signal);
        self.grace_end = Some(Instant::now() + GRACE);
    }

    /// Kills every rank outright and waits for each; the way out when the event loop
    /// itself fails.
    fn abandon(&mut self) -> i32 {
        self.ending = Some(Ending::Failure(1));
        self.kill_all(libc::SIGKILL);
        for rank in self.ranks.iter_mut().filter(|r| r.status.is_none()) {
            rank.status = rank.child.wait().ok();
        }
        1
    }

    /// Sends `signal` to every rank not reaped yet.
    fn kill_all(&self, signal: i32) {
        for rank in self.ranks.iter().filter(|r| r.status.is_none()) {
            sys::kill(rank.child.id(), signal);
        }
    }

    /// The launcher's exit code: set by the ending, else the worst rank's.
    fn exit_code(&self) -> i32 {
        match self.ending {
            Some(Ending::Timeout) => 124,
            Some(Ending::Abort(code) | Ending::Failure(code)) => code,
            Some(Ending::Signal(sig)) => 128 + sig,
            None => self
                .ranks
                .iter()
                .filter_map(|r| r.status.map(exit_code))
                .max()
                .unwrap_or(0),
        }
    }
}

/// Passes data (or, with `None`, the end of the stream) to the launcher's own output.
fn forward(out: &mut Output, data: Option<&[u8]>) {
    let mut write = |sink: &mut dyn Write| match data {
        Some(bytes) => out.forwarder.feed(bytes, sink),
        None => out.forwarder.flush(sink),
    };
    if out.is_stderr {
        write(&mut io::stderr().lock());
    } else {
        write(&mut io::stdout().lock());
    }
}
