//! Partitioned point-to-point (`MPI_Psend_init`, `MPI_Precv_init`, `MPI_Pready*`,
//! `MPI_Parrived`), on top of ordinary messages.
//!
//! **Pairing.** `MPI_Psend_init` sends a small *hello* message on the communicator's
//! point-to-point context with the internal tag `-1 - tag` (negative tags are never matched
//! by user receives, `MPI_ANY_TAG` included); `MPI_Precv_init` posts the receive for it at
//! once. Messages between two processes on one context and tag are matched in order, so the
//! k-th partitioned send to a peer with a tag pairs with the k-th partitioned receive from it
//! with that tag: matching in initialization order, as the standard asks. The hello carries
//! the sender's *key* (a number this process hands out to its live partitioned sends, at most
//! `MAX_KEYS` at a time), its partition count and the message size.
//!
//! **Data.** Each partition readied (`MPI_Pready` from any thread: it queues the index and
//! makes a progress pass) is sent at once as its own message on the communicator's
//! collective context with tag `-1 - (key << PART_BITS | partition)` (collectives use small
//! positive tags there, communicator creation tags at or below `-0x1000_0000`), in
//! `SendMode::Pulled`: a partition above the eager size is read by the receiver with one copy
//! in the receiver's own progress (where the kernel lets it), so readied partitions arrive
//! while the sender computes the others outside MPI (the pipelined rendezvous would move only
//! when the sending process makes progress again). Once the
//! hello has arrived, each `MPI_Start` of the receive posts one receive per *send* partition
//! straight into its byte range of the user buffer (through a scratch buffer only when the
//! range cuts an element of a non-contiguous receive type), so send and receive partition
//! counts may differ; `MPI_Parrived` reports a receive partition once every send partition
//! overlapping it has arrived.
//!
//! Both sides run a round as an internal schedule (`vci::schedule`) on the communicator's
//! VCI, which the persistent request waits for.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::datatype::access::Scratch;
use crate::datatype::{Buf, Type};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::message::{Pattern, SendMode, Status, Target};
use crate::object::Comm;
use crate::progress;
use crate::request::{ReqId, StartFn};
use crate::vci::schedule::{Cx, Step};

/// Bits of a data tag that hold the partition index.
const PART_BITS: u32 = 18;
/// The most partitions a partitioned send may have.
pub const MAX_SEND_PARTITIONS: usize = 1 << PART_BITS;
/// How many partitioned sends a process may have at once (keys).
pub const MAX_KEYS: u32 = 1 << (28 - PART_BITS);

/// The hello's size: key, partition count (u32 each), message bytes (u64).
pub(crate) const HELLO_BYTES: usize = 16;

fn hello_tag(tag: i32) -> i32 {
    -1 - tag
}

pub(crate) fn data_tag(key: u32, partition: usize) -> i32 {
    -1 - ((key << PART_BITS) | partition as u32) as i32
}

/// The keys of this process's live partitioned sends.
static KEYS: Mutex<KeyPool> = Mutex::new(KeyPool {
    next: 0,
    free: Vec::new(),
});

struct KeyPool {
    next: u32,
    free: Vec<u32>,
}

pub(crate) fn take_key() -> Option<u32> {
    let mut pool = KEYS.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(k) = pool.free.pop() {
        return Some(k);
    }
    (pool.next < MAX_KEYS).then(|| {
        pool.next += 1;
        pool.next - 1
    })
}

pub(crate) fn give_key(key: u32) {
    KEYS.lock()
        .unwrap_or_else(|p| p.into_inner())
        .free
        .push(key);
}

/// What the receiver learns from the sender's hello.
#[derive(Debug)]
pub(crate) struct Remote {
    pub key: u32,
    pub partitions: usize,
    pub bytes: usize,
    /// Per send partition: arrived in the current round.
    pub arrived: Box<[AtomicBool]>,
}

impl Remote {
    /// The hello of a send with `key`, `partitions` partitions and `bytes` bytes in all.
    pub(crate) fn hello(key: u32, partitions: usize, bytes: usize) -> Scratch {
        let mut hello = Scratch::new(HELLO_BYTES);
        hello.bytes_mut()[0..4].copy_from_slice(&key.to_le_bytes());
        hello.bytes_mut()[4..8].copy_from_slice(&(partitions as u32).to_le_bytes());
        hello.bytes_mut()[8..16].copy_from_slice(&(bytes as u64).to_le_bytes());
        hello
    }

    /// What a hello says (`None`: not a hello).
    pub(crate) fn from_hello(b: &[u8]) -> Option<Remote> {
        if b.len() < HELLO_BYTES {
            return None;
        }
        let word = |r: std::ops::Range<usize>| {
            let mut w = [0u8; 8];
            w[..r.len()].copy_from_slice(&b[r]);
            u64::from_le_bytes(w)
        };
        let partitions = word(4..8) as usize;
        Some(Remote {
            key: word(0..4) as u32,
            partitions,
            bytes: word(8..16) as usize,
            arrived: (0..partitions).map(|_| AtomicBool::new(false)).collect(),
        })
    }

    /// Whether every send partition overlapping receive partition `partition` arrived, for a
    /// receive of `partitions` partitions of `part_bytes` bytes each.
    pub(crate) fn all_arrived(
        &self,
        partition: usize,
        partitions: usize,
        part_bytes: usize,
    ) -> bool {
        overlapping(self, partition, partitions, part_bytes)
            .all(|i| self.arrived[i].load(Ordering::Acquire))
    }
}

/// The send partitions whose bytes overlap receive `partition` (of `partitions`, `pb` bytes
/// each). Empty partitions carry no bytes: they map by index, in proportion.
fn overlapping(
    r: &Remote,
    partition: usize,
    partitions: usize,
    pb: usize,
) -> std::ops::Range<usize> {
    if pb == 0 || r.bytes == 0 {
        let (ps, pr) = (r.partitions, partitions.max(1));
        let end = ((partition + 1) * ps).div_ceil(pr).min(ps);
        return (partition * ps / pr).min(end)..end;
    }
    let sb = (r.bytes / r.partitions.max(1)).max(1);
    let (start, end) = (partition * pb, ((partition + 1) * pb).min(r.bytes));
    if start >= end {
        return 0..0;
    }
    start / sb..end.div_ceil(sb)
}

#[derive(Debug)]
enum Side {
    Send {
        key: u32,
        /// Per partition: readied in the current round.
        ready: Box<[AtomicBool]>,
        /// Readied partitions not yet handed to the engine.
        queue: Mutex<Vec<usize>>,
    },
    Recv {
        remote: OnceLock<Remote>,
    },
}

/// One partitioned send or receive: what its persistent request's starts and the
/// `MPI_Pready`/`MPI_Parrived` calls share.
#[derive(Debug)]
pub struct Partitioned {
    comm: Arc<Comm>,
    /// The peer's rank (`None`: `MPI_PROC_NULL`).
    peer: Option<u32>,
    tag: i32,
    partitions: usize,
    /// Instances of `ty` per partition.
    count: usize,
    ty: Arc<Type>,
    /// The whole buffer (`partitions * count` instances).
    buf: Buf,
    side: Side,
}

impl Drop for Partitioned {
    fn drop(&mut self) {
        if let Side::Send { key, .. } = self.side {
            give_key(key);
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Partitioned {
    fn bytes(&self) -> usize {
        self.buf.len()
    }

    fn part_bytes(&self) -> usize {
        self.count * self.ty.size
    }

    /// `MPI_Pready` of `partition` (the ABI checked the range): queue it and make a progress
    /// pass, which sends it.
    pub fn ready(&self, partition: usize, func: &str) -> MpiResult<()> {
        let Side::Send { ready, queue, .. } = &self.side else {
            return Err(MpiError::new(
                ErrorClass::Request,
                format!("{func}(request): not a partitioned send request"),
            ));
        };
        if ready[partition].swap(true, Ordering::AcqRel) {
            return Err(MpiError::new(
                ErrorClass::Arg,
                format!("{func}: partition {partition} is already ready in this round"),
            ));
        }
        lock(queue).push(partition);
        progress::poke(&self.comm.session.instance, self.comm.vci);
        Ok(())
    }

    /// `MPI_Parrived` of receive `partition` (the ABI checked the range) of an active
    /// request: whether all its bytes arrived.
    pub fn arrived(&self, partition: usize, func: &str) -> MpiResult<bool> {
        let Side::Recv { remote } = &self.side else {
            return Err(MpiError::new(
                ErrorClass::Request,
                format!("{func}(request): not a partitioned receive request"),
            ));
        };
        if self.peer.is_none() {
            return Ok(true);
        }
        let all = |r: &Remote| r.all_arrived(partition, self.partitions, self.part_bytes());
        if remote.get().is_some_and(all) {
            return Ok(true);
        }
        progress::poke(&self.comm.session.instance, self.comm.vci);
        Ok(remote.get().is_some_and(all))
    }

    /// The communicator the operation runs on.
    pub fn comm(&self) -> &Arc<Comm> {
        &self.comm
    }

    pub fn is_send(&self) -> bool {
        matches!(self.side, Side::Send { .. })
    }

    pub fn partitions(&self) -> usize {
        self.partitions
    }
}

/// `MPI_Psend_init`: the shared state and the start code of the persistent request. The
/// hello goes now. `buf` holds `partitions * count` instances of `ty`.
#[allow(clippy::too_many_arguments)]
pub fn send_init(
    comm: Arc<Comm>,
    dest: Option<u32>,
    tag: i32,
    buf: Buf,
    partitions: usize,
    count: usize,
    ty: Arc<Type>,
    func: &str,
) -> MpiResult<(Arc<Partitioned>, StartFn)> {
    if partitions > MAX_SEND_PARTITIONS {
        return Err(MpiError::new(
            ErrorClass::Arg,
            format!(
                "{func}(partitions={partitions}): Weft sends at most {MAX_SEND_PARTITIONS} partitions"
            ),
        ));
    }
    let key = take_key().ok_or_else(|| {
        MpiError::new(
            ErrorClass::Other,
            format!("{func}: more than {MAX_KEYS} partitioned sends are alive in this process"),
        )
    })?;
    let part = Arc::new(Partitioned {
        comm,
        peer: dest,
        tag,
        partitions,
        count,
        ty,
        buf,
        side: Side::Send {
            key,
            ready: (0..partitions).map(|_| AtomicBool::new(false)).collect(),
            queue: Mutex::new(Vec::new()),
        },
    });
    if let Some(d) = dest {
        let hello = Remote::hello(key, partitions, part.bytes());
        let mut target = part.comm.target(d, hello_tag(tag))?;
        target.context = part.comm.context_id();
        send_detached(&part.comm, target, hello);
    }
    let p = part.clone();
    let start = StartFn::new(move |_func| Ok(Some(start_send_round(&p))));
    Ok((part, start))
}

/// `MPI_Precv_init`: the shared state and the start code; the hello's receive is posted now.
pub fn recv_init(
    comm: Arc<Comm>,
    source: Option<u32>,
    tag: i32,
    buf: Buf,
    partitions: usize,
    count: usize,
    ty: Arc<Type>,
) -> (Arc<Partitioned>, StartFn) {
    let part = Arc::new(Partitioned {
        comm,
        peer: source,
        tag,
        partitions,
        count,
        ty,
        buf,
        side: Side::Recv {
            remote: OnceLock::new(),
        },
    });
    if let Some(s) = source {
        let pattern = Pattern::exact(part.comm.context_id(), s, hello_tag(tag));
        let p = part.clone();
        let mut hello = Scratch::new(HELLO_BYTES);
        let mut posted: Option<ReqId> = None;
        let inst = &part.comm.session.instance;
        progress::start_detached_schedule(
            inst,
            part.comm.vci,
            Box::new(move |cx: &mut Cx<'_>| {
                let id = *posted.get_or_insert_with(|| cx.irecv(pattern, hello.buf()));
                if cx.take(id).is_none() {
                    return Step::Pending;
                }
                let Side::Recv { remote } = &p.side else {
                    unreachable!("a receive's state")
                };
                if let Some(r) = Remote::from_hello(hello.bytes()) {
                    let _ = remote.set(r);
                }
                Step::Done(Status::default())
            }),
        );
    }
    let p = part.clone();
    let start = StartFn::new(move |_func| Ok(Some(start_recv_round(&p))));
    (part, start)
}

/// Send `scratch` to `target` from a detached schedule that owns it until the send is done.
fn send_detached(comm: &Comm, target: Target, mut scratch: Scratch) {
    let mut sent: Option<ReqId> = None;
    progress::start_detached_schedule(
        &comm.session.instance,
        comm.vci,
        Box::new(move |cx: &mut Cx<'_>| {
            let id = match sent {
                Some(id) => id,
                None => match cx.isend(target, scratch.buf(), SendMode::Standard) {
                    Ok(id) => *sent.insert(id),
                    Err(_) => return Step::Done(Status::default()),
                },
            };
            match cx.take(id) {
                Some(_) => Step::Done(Status::default()),
                None => Step::Pending,
            }
        }),
    );
}

/// One round of a partitioned send: sends each partition as it is readied.
fn start_send_round(part: &Arc<Partitioned>) -> ReqId {
    let Side::Send { key, ready, queue } = &part.side else {
        unreachable!("a send's state")
    };
    for r in ready.iter() {
        r.store(false, Ordering::Relaxed);
    }
    lock(queue).clear();
    let key = *key;
    let p = part.clone();
    let mut pending: Vec<ReqId> = Vec::new();
    let mut started = 0usize;
    let mut status = Status::default();
    let inst = &part.comm.session.instance;
    progress::start_schedule(
        inst,
        part.comm.vci,
        0,
        Box::new(move |cx: &mut Cx<'_>| {
            let Side::Send { queue, .. } = &p.side else {
                unreachable!("a send's state")
            };
            let readied = std::mem::take(&mut *lock(queue));
            for i in readied {
                started += 1;
                let Some(dest) = p.peer else { continue };
                let buf = p.buf.instances(&p.ty, i * p.count, p.count);
                let sent = p.comm.target(dest, data_tag(key, i)).and_then(|mut t| {
                    t.context = p.comm.collective_context();
                    // Pulled: the receiver reads a large partition itself while this
                    // process computes the others outside MPI.
                    cx.isend(t, buf, SendMode::Pulled)
                });
                match sent {
                    Ok(id) => pending.push(id),
                    Err(e) => status.error = e.class(),
                }
            }
            pending.retain(|id| cx.take(*id).is_none());
            if started == p.partitions && pending.is_empty() {
                Step::Done(status)
            } else {
                Step::Pending
            }
        }),
    )
}

/// Where send partition `i`'s bytes go in the receive buffer: straight into it, or into a
/// scratch unpacked at `offset` on arrival.
pub(crate) enum Landing {
    Direct,
    Scratch(Scratch, usize),
}

impl Landing {
    /// Put the arrived bytes in place (a scratch is unpacked into `buf`).
    pub(crate) fn settle(&self, buf: &Buf) {
        if let Landing::Scratch(scratch, offset) = self {
            buf.unpack(*offset, scratch.bytes());
        }
    }
}

/// Where the `sb` bytes at byte `offset` of receive buffer `buf` (of `ty`) are received: the
/// buffer's own range, or a scratch when the range cuts an element of a non-contiguous type.
/// A scratch's heap bytes do not move when the scratch moves.
pub(crate) fn landing(buf: &Buf, ty: &Type, offset: usize, sb: usize) -> (Buf, Landing) {
    let size = ty.size.max(1);
    if buf.is_contiguous() {
        (buf.slice(offset, sb), Landing::Direct)
    } else if offset % size == 0 && sb % size == 0 {
        (buf.instances(ty, offset / size, sb / size), Landing::Direct)
    } else {
        let mut s = Scratch::new(sb);
        (s.buf(), Landing::Scratch(s, offset))
    }
}

/// One round of a partitioned receive: once the hello is in, one receive per send partition.
fn start_recv_round(part: &Arc<Partitioned>) -> ReqId {
    let Side::Recv { remote } = &part.side else {
        unreachable!("a receive's state")
    };
    if let Some(r) = remote.get() {
        for a in r.arrived.iter() {
            a.store(false, Ordering::Relaxed);
        }
    }
    let p = part.clone();
    let mut posted: Option<Vec<(ReqId, Landing, usize)>> = None;
    let mut status = match p.peer {
        Some(s) => Status {
            source: s as i32,
            tag: p.tag,
            ..Status::default()
        },
        None => Status::default(),
    };
    let inst = &part.comm.session.instance;
    progress::start_schedule(
        inst,
        part.comm.vci,
        0,
        Box::new(move |cx: &mut Cx<'_>| {
            let Some(source) = p.peer else {
                return Step::Done(status);
            };
            let Side::Recv { remote } = &p.side else {
                unreachable!("a receive's state")
            };
            let Some(r) = remote.get() else {
                return Step::Pending;
            };
            let list = posted.get_or_insert_with(|| post_data(cx, &p, r, source, &mut status));
            list.retain_mut(|(id, landing, i)| {
                let Some(s) = cx.take(*id) else { return true };
                if s.error != 0 {
                    status.error = s.error;
                }
                landing.settle(&p.buf);
                r.arrived[*i].store(true, Ordering::Release);
                false
            });
            if list.is_empty() {
                Step::Done(status)
            } else {
                Step::Pending
            }
        }),
    )
}

/// Post the receives of one round (after the hello): one per send partition that fits.
fn post_data(
    cx: &mut Cx<'_>,
    p: &Partitioned,
    r: &Remote,
    source: u32,
    status: &mut Status,
) -> Vec<(ReqId, Landing, usize)> {
    let mine = p.bytes();
    if r.bytes > mine {
        status.error = ErrorClass::Truncate as i32;
    }
    status.bytes = r.bytes.min(mine) as u64;
    let sb = r.bytes / r.partitions.max(1);
    let context = p.comm.collective_context();
    let mut list = Vec::with_capacity(r.partitions);
    for i in 0..r.partitions {
        let offset = i * sb;
        if offset + sb > mine {
            // Beyond the receive buffer (truncation, reported above): mark it, skip it.
            r.arrived[i].store(true, Ordering::Release);
            continue;
        }
        let pattern = Pattern::exact(context, source, data_tag(r.key, i));
        let (buf, landing) = landing(&p.buf, &p.ty, offset, sb);
        // A scratch's heap bytes do not move when the scratch moves into the list.
        list.push((cx.irecv(pattern, buf), landing, i));
    }
    list
}
