//! Nonblocking file operations (`MPI_File_iread*`, `_iwrite*`) as generalized requests
//! driven by MPI's own progress (seed 002): one request class for all of them, whose
//! `poll_fn` takes the completions that arrived and whose `wait_fn` sleeps in the kernel
//! until one does, so `MPI_Wait*`/`MPI_Test*` and any progress (a progress thread included)
//! complete them, with no thread of Weft's own; `MPI_Waitall` over many of them makes one
//! `wait_fn` call with all their states.
//!
//! Engines: io_uring (`uring.rs`), each file piece one queue entry, large pieces handed to
//! the kernel's workers at once so the copy overlaps the program's computation; where the
//! kernel refuses io_uring (or `WEFT_IO_ENGINE=posix`), `pread`/`pwrite` in slices of
//! `POSIX_SLICE` bytes inside `poll_fn` (and all at once inside `wait_fn`).
#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, Mutex, MutexGuard, OnceLock};
use std::time::Duration;

use crate::datatype::access::Scratch;
use crate::datatype::Buf;
use crate::error::{MpiError, MpiResult};
use crate::instance::Instance;
use crate::io::config::Engine;
use crate::io::file::File;
use crate::io::rw::{self, Conv, Mem};
use crate::io::two_phase::CollOp;
use crate::io::uring::Ring;
use crate::io::view::View;
use crate::message::Status;
use crate::progress;
use crate::request::grequest::GreqClass;
use crate::request::ReqId;

/// Bytes one queue entry moves at most.
const ENTRY_MAX: u64 = 8 << 20;
/// Pieces at least this large go to the kernel's workers at once.
const PUNT_MIN: u64 = 64 << 10;
/// Bytes the posix engine moves per `poll_fn` call.
const POSIX_SLICE: u64 = 4 << 20;

/// One queued file access: file offset, length, offset in the op's bytes.
#[derive(Clone, Copy)]
struct Part {
    off: u64,
    len: u64,
    at: u64,
}

/// Where an operation's bytes are: the user's contiguous buffer, or a copy owned here.
enum Bytes {
    User(Buf),
    Owned(Scratch),
}

struct Op {
    file: Arc<File>,
    mem: Mem,
    write: bool,
    bytes: Bytes,
    parts: Vec<Part>,
    /// Parts handed to the engine so far.
    next: usize,
    in_flight: usize,
    /// Reads: the first stream offset that was not read (end of file).
    short: Option<u64>,
    error: Option<MpiError>,
    len: u64,
    /// Memory bytes transferred, once finished.
    result: Option<u64>,
    req: Option<ReqId>,
    inst: Arc<Instance>,
    /// Completed in the request sense (`MPI_Grequest_complete` called).
    signalled: bool,
}

impl Op {
    /// The op's bytes `at..at+len` (contiguous).
    fn slice(&mut self, at: u64, len: u64) -> Buf {
        match &mut self.bytes {
            Bytes::User(b) => b.slice(at as usize, len as usize),
            Bytes::Owned(s) => s.buf().slice(at as usize, len as usize),
        }
    }

    fn finished(&self) -> bool {
        self.in_flight == 0
            && (self.next == self.parts.len() || self.error.is_some() || self.short.is_some())
    }

    /// After the last part: store what a read brought into the user's buffer.
    fn finish(&mut self) {
        if self.result.is_some() {
            return;
        }
        let got = self.short.unwrap_or(self.len).min(self.len);
        if self.write {
            self.result = Some(self.mem.mem_bytes(self.len));
            return;
        }
        let stored = match &self.bytes {
            Bytes::User(_) => Ok(got),
            Bytes::Owned(v) if !matches!(self.mem.conv, Conv::None) => self
                .mem
                .store_converted(&v.bytes()[..got as usize])
                .map(|_| self.mem.mem_bytes(got)),
            Bytes::Owned(v) => {
                self.mem.buf.unpack(0, &v.bytes()[..got as usize]);
                Ok(got)
            }
        };
        match stored {
            Ok(m) => self.result = Some(m),
            Err(e) => {
                self.error = Some(e);
                self.result = Some(0);
            }
        }
    }

    /// A part finished with the kernel's result.
    fn part_done(&mut self, idx: usize, res: i64) {
        self.in_flight -= 1;
        let p = self.parts[idx];
        if res < 0 {
            if self.error.is_none() {
                let e = std::io::Error::from_raw_os_error(-res as i32);
                self.error = Some(crate::io::errors::file_error(
                    "nonblocking access",
                    &self.file.name,
                    if self.write {
                        "write failed"
                    } else {
                        "read failed"
                    },
                    &e,
                ));
            }
        } else if (res as u64) < p.len {
            if self.write || res > 0 {
                // A short transfer: queue the rest as a new part.
                let n = res as u64;
                self.parts.push(Part {
                    off: p.off + n,
                    len: p.len - n,
                    at: p.at + n,
                });
            } else {
                let s = p.at + res as u64;
                self.short = Some(self.short.map_or(s, |old| old.min(s)));
            }
        }
    }
}

struct Engine_ {
    ops: HashMap<u64, Op>,
}

static OPS: LazyLock<Mutex<Engine_>> = LazyLock::new(|| {
    Mutex::new(Engine_ {
        ops: HashMap::new(),
    })
});
static NEXT: AtomicU64 = AtomicU64::new(1);
/// The ring (`None`: the kernel refused it, or the posix engine was asked for).
static RING: OnceLock<Option<Ring>> = OnceLock::new();

fn ops() -> MutexGuard<'static, Engine_> {
    OPS.lock().unwrap_or_else(|e| e.into_inner())
}

fn ring(inst: &Instance) -> Option<&'static Ring> {
    RING.get_or_init(|| {
        let cfg = &inst.config.io;
        match cfg.engine {
            Engine::Posix => None,
            Engine::Auto | Engine::Uring => Ring::new(cfg.uring_workers).ok(),
        }
    })
    .as_ref()
}

/// Set up the engine ahead of the first nonblocking access (the ABI's `MPI_File_open` calls it), so
/// that access does not pay for creating the ring.
pub fn prepare(inst: &Instance) {
    ring(inst);
}

/// Whether this kernel gives this process an io_uring ring (for `weft-info`).
pub fn probe_uring() -> std::io::Result<()> {
    Ring::new(0).map(|_| ())
}

/// Tags carry the op key (high 40 bits) and the part index (low 24 bits would limit parts;
/// parts beyond are tracked by index in a wider field).
fn tag(key: u64, idx: usize) -> u64 {
    (key << 32) | idx as u64
}

/// Hand parts of `op` to the ring while it has room; returns how many.
fn feed(r: &Ring, key: u64, op: &mut Op) -> usize {
    if op.error.is_some() || op.short.is_some() {
        return 0;
    }
    let before = op.next;
    let fd = std::os::fd::AsRawFd::as_raw_fd(&op.file.fd);
    while op.next < op.parts.len() {
        let p = op.parts[op.next];
        // The op, its copy and the file with its descriptor stay in the table until every
        // part has completed (`free` comes after the request completed).
        let buf = op.slice(p.at, p.len);
        let pushed = r.push(
            fd,
            op.write,
            &buf,
            p.off,
            tag(key, op.next),
            p.len >= PUNT_MIN,
        );
        if !pushed {
            break;
        }
        op.next += 1;
        op.in_flight += 1;
    }
    op.next - before
}

/// Posix engine: move up to `budget` bytes of `op` now.
fn work_posix(op: &mut Op, mut budget: u64) {
    while op.next < op.parts.len() && op.error.is_none() && op.short.is_none() && budget > 0 {
        let p = op.parts[op.next];
        op.next += 1;
        op.in_flight += 1;
        let n = p.len as usize;
        let buf = op.slice(p.at, p.len);
        let res = if op.write {
            buf.with_bytes(|b| rw::pwrite(&op.file, b, p.off, "nonblocking write"))
                .map(|_| n as i64)
        } else {
            buf.with_bytes_mut(|b| rw::pread(&op.file, b, p.off, "nonblocking read"))
                .map(|g| g as i64)
        };
        let idx = op.next - 1;
        match res {
            Ok(r) => op.part_done(idx, r),
            Err(e) => {
                op.in_flight -= 1;
                op.error.get_or_insert(e);
            }
        }
        budget = budget.saturating_sub(p.len);
    }
}

/// Take arrived completions, feed more parts, finish what is done. Returns the requests to
/// signal (completed outside the table's lock).
fn advance(inst: &Instance, blocking_posix: Option<&[usize]>) -> Vec<(Arc<Instance>, ReqId)> {
    let r = ring(inst);
    let mut table = ops();
    if let Some(r) = r {
        for (t, res) in r.reap() {
            let (key, idx) = (t >> 32, (t & 0xffff_ffff) as usize);
            if let Some(op) = table.ops.get_mut(&key) {
                op.part_done(idx, res as i64);
            }
        }
        let mut queued = 0;
        for (&key, op) in table.ops.iter_mut() {
            queued += feed(r, key, op);
        }
        // Only new entries need a system call: completions are read from shared memory.
        if queued > 0 {
            let _ = r.submit();
        }
    } else {
        for (&key, op) in table.ops.iter_mut() {
            let all = blocking_posix.is_some_and(|keys| keys.contains(&(key as usize)));
            work_posix(op, if all { u64::MAX } else { POSIX_SLICE });
        }
    }
    let mut done = Vec::new();
    for op in table.ops.values_mut() {
        if !op.signalled && op.finished() {
            if let Some(id) = op.req {
                op.finish();
                op.signalled = true;
                done.push((op.inst.clone(), id));
            }
        }
    }
    done
}

fn signal(done: Vec<(Arc<Instance>, ReqId)>) {
    for (inst, id) in done {
        let _ = progress::greq::complete(&inst, id, "MPI_File nonblocking access");
    }
}

/// The one class of all nonblocking file requests.
struct IoClass;

impl GreqClass for IoClass {
    fn query(&self, state: usize) -> Status {
        if let Some(c) = coll(state as u64) {
            let c = c.lock().unwrap_or_else(|e| e.into_inner());
            return match &c.outcome {
                Some(Ok(bytes)) => Status {
                    bytes: *bytes,
                    ..Status::default()
                },
                Some(Err(e)) => Status {
                    error: e.class(),
                    ..Status::default()
                },
                None => Status::default(),
            };
        }
        let table = ops();
        let Some(op) = table.ops.get(&(state as u64)) else {
            return Status::default();
        };
        Status {
            error: op.error.as_ref().map_or(0, |e| e.class()),
            bytes: op.result.unwrap_or(0),
            ..Status::default()
        }
    }

    fn free(&self, state: usize) -> i32 {
        if colls().remove(&(state as u64)).is_none() {
            ops().ops.remove(&(state as u64));
        }
        0
    }

    fn cancel(&self, _state: usize, _complete: bool) -> i32 {
        // File accesses cannot be taken back; the request completes normally.
        0
    }

    fn has_poll(&self) -> bool {
        true
    }

    fn poll(&self, state: usize) -> i32 {
        if let Some(c) = coll(state as u64) {
            step_coll(&c);
            return 0;
        }
        let inst = {
            let table = ops();
            match table.ops.get(&(state as u64)) {
                Some(op) if !op.signalled => op.inst.clone(),
                _ => return 0,
            }
        };
        signal(advance(&inst, None));
        0
    }

    fn has_wait(&self) -> bool {
        true
    }

    fn wait(&self, states: &[usize], timeout: f64) -> i32 {
        // Collective accesses need message progress, not sleep: step them and return.
        let mut any_coll = false;
        for &s in states {
            if let Some(c) = coll(s as u64) {
                any_coll = true;
                step_coll(&c);
            }
        }
        if any_coll {
            return 0;
        }
        let inst = {
            let table = ops();
            let pending: Vec<&Op> = states
                .iter()
                .filter_map(|s| table.ops.get(&(*s as u64)))
                .filter(|op| !op.signalled)
                .collect();
            match pending.first() {
                Some(op) => op.inst.clone(),
                None => return 0,
            }
        };
        let before = advance(&inst, None);
        if !before.is_empty() {
            signal(before);
            return 0;
        }
        match ring(&inst) {
            Some(r) => {
                let _ = r.wait(Duration::from_secs_f64(timeout.clamp(0.0, 10.0)));
                signal(advance(&inst, None));
            }
            None => signal(advance(&inst, Some(states))),
        }
        0
    }
}

static CLASS: LazyLock<Arc<IoClass>> = LazyLock::new(|| Arc::new(IoClass));

/// Start a nonblocking independent access of `mem` at stream position `pos` of `view`.
/// `owner` goes into the request (the ABI's file handle, for its errhandler).
pub fn start(
    file: &Arc<File>,
    view: &View,
    pos: u64,
    mem: Mem,
    write: bool,
    owner: usize,
    func: &str,
) -> MpiResult<ReqId> {
    if write {
        rw::check_writable(file, func)?;
    } else {
        rw::check_readable(file, func)?;
    }
    let len = mem.file_len();
    if file.state().atomic {
        // Atomic mode: done now under its byte-range lock; the request is already complete.
        let bytes = if write {
            rw::write(file, view, pos, &mem, func)?
        } else {
            rw::read(file, view, pos, &mem, func)?.1
        };
        let status = Status {
            bytes,
            ..Status::default()
        };
        let inst = &file.comm.session.instance;
        return Ok(progress::completed(inst, file.comm.vci, status, owner));
    }
    let bytes = if write {
        match mem.converted()? {
            Some(v) => {
                let mut s = Scratch::new(v.len());
                s.bytes_mut().copy_from_slice(&v);
                Bytes::Owned(s)
            }
            None if mem.buf.is_contiguous() => Bytes::User(mem.buf),
            None => Bytes::Owned(Scratch::copy_of(&mem.buf)),
        }
    } else if matches!(mem.conv, Conv::None) && mem.buf.is_contiguous() {
        Bytes::User(mem.buf)
    } else {
        Bytes::Owned(Scratch::new(len as usize))
    };
    let mut parts = Vec::new();
    let mut at = 0;
    view.pieces(pos, len, |off, l| {
        let mut done = 0;
        while done < l {
            let n = (l - done).min(ENTRY_MAX);
            parts.push(Part {
                off: off + done,
                len: n,
                at: at + done,
            });
            done += n;
        }
        at += l;
        true
    });

    let inst = file.comm.session.instance.clone();
    let key = NEXT.fetch_add(1, Ordering::Relaxed);
    ops().ops.insert(
        key,
        Op {
            file: file.clone(),
            mem,
            write,
            bytes,
            parts,
            next: 0,
            in_flight: 0,
            short: None,
            error: None,
            len,
            result: None,
            req: None,
            inst: inst.clone(),
            signalled: false,
        },
    );
    let class: Arc<dyn GreqClass> = CLASS.clone();
    let id = progress::greq::start(&inst, class, key as usize, owner);
    if let Some(op) = ops().ops.get_mut(&key) {
        op.req = Some(id);
    }
    // Hand it to the kernel now, so the transfer overlaps whatever the program does next.
    signal(advance(&inst, Some(&[])));
    Ok(id)
}

// ------------------------------------------------------------------ collective accesses

/// A nonblocking collective access: its state machine and outcome.
struct Coll {
    op: CollOp,
    inst: Arc<Instance>,
    req: Option<ReqId>,
    /// Memory bytes moved, or the error, once finished.
    outcome: Option<Result<u64, MpiError>>,
}

type CollRef = Arc<Mutex<Coll>>;

static COLLS: LazyLock<Mutex<HashMap<u64, CollRef>>> = LazyLock::new(|| Mutex::new(HashMap::new()));

fn colls() -> MutexGuard<'static, HashMap<u64, CollRef>> {
    COLLS.lock().unwrap_or_else(|e| e.into_inner())
}

fn coll(key: u64) -> Option<CollRef> {
    colls().get(&key).cloned()
}

/// Step collective access `key` (unless another thread or an outer frame is stepping it);
/// signal its request when it finished. Returns whether it is finished.
fn step_coll(c: &CollRef) -> bool {
    let Ok(mut c) = c.try_lock() else {
        return false;
    };
    if c.outcome.is_some() {
        return true;
    }
    if !c.op.step(false) {
        return false;
    }
    let r = c.op.result();
    c.outcome = Some(r.map(|(_, m)| m));
    if let Some(id) = c.req {
        let inst = c.inst.clone();
        drop(c);
        let _ = progress::greq::complete(&inst, id, "MPI_File nonblocking collective access");
    }
    true
}

/// Start a nonblocking collective access (every rank of the file's communicator starts its
/// collective accesses in the same order).
pub fn start_collective(
    file: &Arc<File>,
    view: &View,
    pos: u64,
    mem: Mem,
    write: bool,
    owner: usize,
    func: &str,
) -> MpiResult<ReqId> {
    let op = CollOp::start(file, view, pos, mem, write, func)?;
    let inst = file.comm.session.instance.clone();
    let key = NEXT.fetch_add(1, Ordering::Relaxed);
    let c = Arc::new(Mutex::new(Coll {
        op,
        inst: inst.clone(),
        req: None,
        outcome: None,
    }));
    colls().insert(key, c.clone());
    let class: Arc<dyn GreqClass> = CLASS.clone();
    let id = progress::greq::start(&inst, class, key as usize, owner);
    c.lock().unwrap_or_else(|e| e.into_inner()).req = Some(id);
    step_coll(&c);
    Ok(id)
}
