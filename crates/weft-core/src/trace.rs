//! `WEFT_TRACE=path`: every MPI call of every thread with its start and end, and for
//! point-to-point calls the bytes and the peer, as Chrome/Perfetto trace events.
//!
//! Each thread appends to a buffer of its own (a mutex only the thread itself and the final
//! flush take), at most `MAX_EVENTS` per thread (later ones are counted, not kept). At
//! `MPI_Finalize` each rank writes `path.<rank>` (a complete trace of its own) and, once every
//! rank has, rank 0 merges them into `path` and removes them; a rank that aborts writes its
//! part. Off, the cost is one load per point-to-point call (`on`, for `note`); the calls
//! themselves are measured by a QMPI link of the ABI layer, installed only while on.
#![forbid(unsafe_code)]

use std::cell::{Cell, OnceCell};
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{SystemTime, UNIX_EPOCH};

/// Events a thread keeps.
pub const MAX_EVENTS: usize = 1 << 20;

static ON: AtomicBool = AtomicBool::new(false);
/// The trace's path and this process's rank, from `start`.
static TARGET: OnceLock<(String, u32)> = OnceLock::new();
static DROPPED: AtomicU64 = AtomicU64::new(0);
static NEXT_TID: AtomicU64 = AtomicU64::new(1);

struct Event {
    name: &'static str,
    start_ns: u64,
    end_ns: u64,
    comm: Option<usize>,
    note: Option<(i64, i64)>,
}

struct ThreadBuf {
    tid: u64,
    events: Mutex<Vec<Event>>,
}

static THREADS: Mutex<Vec<Arc<ThreadBuf>>> = Mutex::new(Vec::new());

thread_local! {
    static MINE: OnceCell<Arc<ThreadBuf>> = const { OnceCell::new() };
    static NOTE: Cell<Option<(i64, i64)>> = const { Cell::new(None) };
}

/// Whether calls are traced.
#[inline]
pub fn on() -> bool {
    ON.load(Relaxed)
}

/// Nanoseconds of the wall clock (comparable between the processes of a job).
pub fn now_ns() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as u64)
}

/// Start tracing into `path` as rank `rank` (first `MPI_Init` only).
pub fn start(path: &str, rank: u32) {
    if TARGET.set((path.to_owned(), rank)).is_ok() {
        ON.store(true, Relaxed);
        crate::stats::set_measured(crate::stats::MEASURED_TRACE, true);
    }
}

/// Bytes and peer of the call this thread is in (recorded with it).
#[inline]
pub fn note(bytes: i64, peer: i64) {
    NOTE.with(|n| n.set(Some((bytes, peer))));
}

/// Record a call of `name` from `start_ns` to now, on communicator handle `comm` if any.
pub fn record(name: &'static str, start_ns: u64, comm: Option<usize>) {
    let note = NOTE.with(|n| n.take());
    let end_ns = now_ns();
    MINE.with(|m| {
        let buf = m.get_or_init(|| {
            let b = Arc::new(ThreadBuf {
                tid: NEXT_TID.fetch_add(1, Relaxed),
                events: Mutex::new(Vec::new()),
            });
            lock(&THREADS).push(b.clone());
            b
        });
        let mut events = lock(&buf.events);
        if events.len() >= MAX_EVENTS {
            DROPPED.fetch_add(1, Relaxed);
            return;
        }
        events.push(Event {
            name,
            start_ns,
            end_ns,
            comm,
            note,
        });
    });
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn part_path(path: &str, rank: u32) -> String {
    format!("{path}.{rank}")
}

const HEAD: &str = "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[";

/// This rank's events as a complete trace: the head line, one event per line (each ending
/// with a comma), and a last line with the process name that closes the document.
fn render(rank: u32) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "{HEAD}");
    for t in lock(&THREADS).iter() {
        for e in lock(&t.events).drain(..) {
            let _ = write!(
                out,
                "{{\"name\":\"{}\",\"ph\":\"X\",\"pid\":{rank},\"tid\":{},\"ts\":{}.{:03},\"dur\":{}.{:03},\"args\":{{",
                e.name,
                t.tid,
                e.start_ns / 1000,
                e.start_ns % 1000,
                (e.end_ns - e.start_ns.min(e.end_ns)) / 1000,
                (e.end_ns - e.start_ns.min(e.end_ns)) % 1000
            );
            let mut sep = "";
            if let Some(c) = e.comm {
                let _ = write!(out, "\"comm\":\"{c:#x}\"");
                sep = ",";
            }
            if let Some((bytes, peer)) = e.note {
                let _ = write!(out, "{sep}\"bytes\":{bytes},\"peer\":{peer}");
            }
            let _ = writeln!(out, "}}}},");
        }
    }
    let _ = writeln!(
        out,
        "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{rank},\"args\":{{\"name\":\"rank {rank}\",\"dropped_events\":{}}}}}]}}",
        DROPPED.load(Relaxed)
    );
    out
}

/// Stop tracing and write this rank's part (`path.<rank>`). Returns the trace's path and
/// rank when tracing was on.
pub fn write_part() -> Option<(String, u32)> {
    if !ON.swap(false, Relaxed) {
        return None;
    }
    let (path, rank) = TARGET.get()?.clone();
    if let Err(e) = std::fs::write(part_path(&path, rank), render(rank)) {
        eprintln!("Weft: WEFT_TRACE={path}: cannot write rank {rank}'s part ({e})");
    }
    Some((path, rank))
}

/// Merge the parts of ranks `0..size` into `path` (rank 0, after every rank wrote its part)
/// and remove them.
pub fn merge(path: &str, size: u32) {
    let mut out = String::new();
    let _ = writeln!(out, "{HEAD}");
    let mut last = Vec::new();
    for rank in 0..size {
        let part = part_path(path, rank);
        let Ok(text) = std::fs::read_to_string(&part) else {
            eprintln!("Weft: WEFT_TRACE={path}: rank {rank}'s part {part} is missing");
            continue;
        };
        let lines: Vec<&str> = text.lines().collect();
        if lines.len() >= 2 {
            lines[1..lines.len() - 1].iter().for_each(|l| {
                out.push_str(l);
                out.push('\n');
            });
            last.push(lines[lines.len() - 1].trim_end_matches("]}").to_owned());
        }
        let _ = std::fs::remove_file(&part);
    }
    let _ = writeln!(out, "{}]}}", last.join(",\n"));
    if let Err(e) = std::fs::write(path, out) {
        eprintln!("Weft: WEFT_TRACE={path}: cannot write the trace ({e})");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parts_merge_into_one_document() {
        let dir = std::env::temp_dir().join(format!("weft-trace-{}", std::process::id()));
        let path = dir.to_string_lossy().into_owned();
        start(&path, 0);
        note(8, 1);
        record("MPI_Send", now_ns(), Some(0x44000000));
        record("MPI_Barrier", now_ns(), None);
        assert_eq!(write_part(), Some((path.clone(), 0)));
        // A second rank's part, as that process would write it.
        std::fs::write(
            part_path(&path, 1),
            format!("{HEAD}\n{{\"name\":\"MPI_Recv\",\"ph\":\"X\",\"pid\":1,\"tid\":1,\"ts\":1.000,\"dur\":2.000,\"args\":{{}}}},\n{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":1,\"args\":{{\"name\":\"rank 1\",\"dropped_events\":0}}}}]}}\n"),
        )
        .unwrap();
        merge(&path, 2);
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::remove_file(&path).unwrap();
        assert!(text.starts_with(HEAD));
        assert!(text.contains("\"name\":\"MPI_Send\",\"ph\":\"X\",\"pid\":0"));
        assert!(text.contains("\"comm\":\"0x44000000\",\"bytes\":8,\"peer\":1"));
        assert!(text.contains("\"name\":\"MPI_Recv\""));
        assert!(text.trim_end().ends_with("\"dropped_events\":0}}]}"));
        assert_eq!(text.matches("process_name").count(), 2);
        assert!(!std::path::Path::new(&part_path(&path, 1)).exists());
    }
}
