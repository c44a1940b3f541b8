//! Partitioned point-to-point between the ranks of a thread communicator (`MPI_Psend_init`,
//! `MPI_Precv_init`, `MPI_Pready*`, `MPI_Parrived` called by its threads).
//!
//! The protocol is that of `pt2pt::partitioned` on the thread transport, in its own traffic
//! (`Ctx::Part`, which no user receive or probe matches): `MPI_Psend_init` pushes a *hello*
//! (key, partition count, bytes) with the user's tag to the receiving rank, and
//! `MPI_Precv_init` posts its receive at once, so the k-th partitioned send from a rank with
//! a tag pairs with the k-th partitioned receive from it with that tag (the mailbox keeps
//! each sender's order). Each `MPI_Pready`, from any thread, pushes the partition at once
//! with the data tag of (key, partition): copied when small, else as the sender's buffer,
//! which the receiver copies from (the round's sends are done once it did). After the hello
//! came, each round of the receive posts one receive per send partition straight into its
//! byte range. A thread of another process gets the partitions over the link
//! (`link::Link::send`, waiting only until the transports hold them).
//!
//! Each round is a schedule on the communicator's VCI, which the persistent request waits
//! for; it matches what arrived with `try_lock`s only. On a thread communicator spanning
//! processes, a polled item takes arrivals from the other processes for the round.
//!
//! The request counts as one of its rank's requests: `MPIX_Threadcomm_finish` refuses while
//! it is not freed.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::link::Data;
use super::p2p::{self, Ctx, Direct, PostedRecv};
use super::ThreadComm;
use crate::datatype::access::Scratch;
use crate::datatype::{Buf, Type};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::message::{SourceSel, Status, TagSel};
use crate::object::Comm;
use crate::pt2pt::partitioned::{
    data_tag, give_key, landing, take_key, Landing, Remote, HELLO_BYTES, MAX_KEYS,
    MAX_SEND_PARTITIONS,
};
use crate::request::{ReqId, StartFn};
use crate::vci::schedule::{Cx, Step};

/// One partitioned send or receive of a thread rank.
pub struct ThreadPart {
    /// The thread communicator's `Comm` (its VCI holds the persistent request).
    comm: Arc<Comm>,
    tc: Arc<ThreadComm>,
    /// The rank that created it.
    rank: u32,
    /// The peer rank (`None`: `MPI_PROC_NULL`).
    peer: Option<u32>,
    tag: i32,
    partitions: usize,
    /// Instances of `ty` per partition.
    count: usize,
    ty: Arc<Type>,
    buf: Buf,
    side: Side,
}

enum Side {
    Send {
        key: u32,
        /// Per partition: readied in the current round.
        ready: Box<[AtomicBool]>,
        /// Partitions of the current round pushed (or handed to the link).
        pushed: AtomicUsize,
        /// Pushed as the sender's buffer: done once the receiver copied them.
        copying: Mutex<Vec<Arc<Direct>>>,
    },
    Recv {
        /// The hello's receive (`None` from `MPI_PROC_NULL`).
        hello: Option<Arc<PostedRecv>>,
        /// The memory `hello` receives into.
        hello_mem: Scratch,
        remote: OnceLock<Remote>,
        round: Mutex<Round>,
        /// The current round has received everything.
        done: AtomicBool,
    },
}

/// A receive round's data receives (posted once the hello is in).
#[derive(Default)]
struct Round {
    posted: Option<Vec<(Arc<PostedRecv>, Landing, usize)>>,
    error: i32,
}

impl std::fmt::Debug for ThreadPart {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadPart")
            .field("rank", &self.rank)
            .field("peer", &self.peer)
            .field("partitions", &self.partitions)
            .finish()
    }
}

impl Drop for ThreadPart {
    fn drop(&mut self) {
        if let Side::Send { key, .. } = self.side {
            give_key(key);
        }
    }
}

/// The partitioned request counted among its rank's requests (`MPIX_Threadcomm_finish`
/// refuses while any is). Owned by the request's start code only, so the count drops when
/// the user frees the request: the `ThreadPart` itself may outlive that for a moment (an
/// `MPI_Pready` of another thread or the progress engine's poll item still holding it), and
/// counting its drop made a finish right after `MPI_Request_free` fail now and then.
struct Counted {
    tc: Arc<ThreadComm>,
    rank: u32,
}

impl Counted {
    fn new(tc: &Arc<ThreadComm>, rank: u32) -> Counted {
        tc.pending[tc.own(rank)].0.fetch_add(1, Ordering::AcqRel);
        Counted {
            tc: tc.clone(),
            rank,
        }
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.tc.pending[self.tc.own(self.rank)]
            .0
            .fetch_sub(1, Ordering::AcqRel);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// What both init calls share.
pub struct PartArgs {
    pub peer: Option<u32>,
    pub tag: i32,
    /// The whole buffer (`partitions * count` instances of `ty`).
    pub buf: Buf,
    pub partitions: usize,
    pub count: usize,
    pub ty: Arc<Type>,
}

impl ThreadComm {
    fn part(self: &Arc<Self>, comm: Arc<Comm>, rank: u32, a: PartArgs, side: Side) -> ThreadPart {
        ThreadPart {
            comm,
            tc: self.clone(),
            rank,
            peer: a.peer,
            tag: a.tag,
            partitions: a.partitions,
            count: a.count,
            ty: a.ty,
            buf: a.buf,
            side,
        }
    }

    /// Send `buf` from `rank` to `dest` in the partitioned traffic; the envelope to wait
    /// for when it went as the sender's buffer.
    fn part_push(
        &self,
        rank: u32,
        dest: u32,
        tag: i32,
        buf: &Buf,
    ) -> MpiResult<Option<Arc<Direct>>> {
        match (self.local(dest), &self.link) {
            (Some(to), _) => {
                let direct = p2p::goes_direct(buf.len(), false) && dest != rank;
                Ok(self.mailboxes[to].push_in(Ctx::Part, rank, tag, buf, direct))
            }
            (None, Some(l)) => l
                .send((rank, dest), tag, Ctx::Part, Data::Buf(buf), false, |s| {
                    self.wait_idle(s)
                })
                .map(|()| None),
            (None, None) => unreachable!("a rank of this process (checked)"),
        }
    }

    /// `MPI_Psend_init` by `rank` on the thread communicator of `comm`: the hello goes now.
    pub fn psend_init(
        self: &Arc<Self>,
        comm: Arc<Comm>,
        rank: u32,
        a: PartArgs,
        func: &str,
    ) -> MpiResult<(Arc<ThreadPart>, StartFn)> {
        if a.partitions > MAX_SEND_PARTITIONS {
            return Err(MpiError::new(
                ErrorClass::Arg,
                format!(
                    "{func}(partitions={}): Weft sends at most {MAX_SEND_PARTITIONS} partitions",
                    a.partitions
                ),
            ));
        }
        let key = take_key().ok_or_else(|| {
            MpiError::new(
                ErrorClass::Other,
                format!("{func}: more than {MAX_KEYS} partitioned sends are alive in this process"),
            )
        })?;
        let partitions = a.partitions;
        let side = Side::Send {
            key,
            ready: (0..partitions).map(|_| AtomicBool::new(false)).collect(),
            pushed: AtomicUsize::new(0),
            copying: Mutex::new(Vec::new()),
        };
        let part = Arc::new(self.part(comm, rank, a, side));
        if let Some(d) = part.peer {
            let mut hello = Remote::hello(key, partitions, part.buf.len());
            self.part_push(rank, d, part.tag, &hello.buf())?;
        }
        let p = part.clone();
        let counted = Counted::new(self, rank);
        let start = StartFn::new(move |_func| {
            let _alive_until_freed = &counted;
            Ok(Some(p.start_round()))
        });
        Ok((part, start))
    }

    /// `MPI_Precv_init` by `rank`: the hello's receive is posted now.
    pub fn precv_init(
        self: &Arc<Self>,
        comm: Arc<Comm>,
        rank: u32,
        a: PartArgs,
    ) -> (Arc<ThreadPart>, StartFn) {
        let mut hello_mem = Scratch::new(HELLO_BYTES);
        let hello = a.peer.map(|s| {
            self.mailboxes[self.own(rank)].post_in(
                Ctx::Part,
                SourceSel::Rank(s),
                TagSel::Tag(a.tag),
                hello_mem.buf(),
            )
        });
        let side = Side::Recv {
            hello,
            hello_mem,
            remote: OnceLock::new(),
            round: Mutex::new(Round::default()),
            done: AtomicBool::new(false),
        };
        let part = Arc::new(self.part(comm, rank, a, side));
        let p = part.clone();
        let counted = Counted::new(self, rank);
        let start = StartFn::new(move |_func| {
            let _alive_until_freed = &counted;
            Ok(Some(p.start_round()))
        });
        (part, start)
    }
}

/// Polls a receive round of a thread communicator spanning processes: takes their arrivals.
struct Pump(Arc<ThreadPart>);

impl crate::polled::Polled for Pump {
    fn poll(&self) -> bool {
        self.0.tc.pump();
        self.0.advance()
    }
}

impl ThreadPart {
    pub fn is_send(&self) -> bool {
        matches!(self.side, Side::Send { .. })
    }

    pub fn partitions(&self) -> usize {
        self.partitions
    }

    /// The thread communicator's `Comm`.
    pub fn comm(&self) -> &Arc<Comm> {
        &self.comm
    }

    /// `MPI_Pready` of `partition` (the ABI checked the range), from any thread: the
    /// partition goes now.
    pub fn ready(&self, partition: usize, func: &str) -> MpiResult<()> {
        let Side::Send {
            key,
            ready,
            pushed,
            copying,
        } = &self.side
        else {
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
        if let Some(dest) = self.peer {
            let buf = self
                .buf
                .instances(&self.ty, partition * self.count, self.count);
            let tag = data_tag(*key, partition);
            if let Some(d) = self.tc.part_push(self.rank, dest, tag, &buf)? {
                lock(copying).push(d);
            }
        }
        pushed.fetch_add(1, Ordering::AcqRel);
        Ok(())
    }

    /// `MPI_Parrived` of receive `partition` (the ABI checked the range) of an active
    /// request.
    pub fn arrived(&self, partition: usize, func: &str) -> MpiResult<bool> {
        let Side::Recv { remote, .. } = &self.side else {
            return Err(MpiError::new(
                ErrorClass::Request,
                format!("{func}(request): not a partitioned receive request"),
            ));
        };
        if self.peer.is_none() {
            return Ok(true);
        }
        self.tc.pump();
        self.advance();
        let pb = self.count * self.ty.size;
        Ok(remote
            .get()
            .is_some_and(|r| r.all_arrived(partition, self.partitions, pb)))
    }

    /// Start a round: the schedule the persistent request waits for.
    fn start_round(self: &Arc<Self>) -> ReqId {
        match &self.side {
            Side::Send {
                ready,
                pushed,
                copying,
                ..
            } => {
                ready.iter().for_each(|r| r.store(false, Ordering::Relaxed));
                lock(copying).clear();
                pushed.store(0, Ordering::Release);
            }
            Side::Recv {
                remote,
                round,
                done,
                ..
            } => {
                if let Some(r) = remote.get() {
                    r.arrived
                        .iter()
                        .for_each(|a| a.store(false, Ordering::Relaxed));
                }
                *lock(round) = Round::default();
                done.store(self.peer.is_none(), Ordering::Release);
                if self.tc.link.is_some() && self.peer.is_some() {
                    crate::polled::register(Arc::new(Pump(self.clone())));
                }
            }
        }
        let p = self.clone();
        let inst = &self.comm.session.instance;
        crate::progress::start_schedule(
            inst,
            self.comm.vci,
            0,
            Box::new(move |_cx: &mut Cx<'_>| match p.round_status() {
                Some(s) => Step::Done(s),
                None => Step::Pending,
            }),
        )
    }

    /// The round's status once it is done (without waiting for any lock).
    fn round_status(&self) -> Option<Status> {
        match &self.side {
            Side::Send {
                pushed, copying, ..
            } => {
                let all = pushed.load(Ordering::Acquire) == self.partitions;
                let copied = || {
                    copying
                        .try_lock()
                        .is_ok_and(|c| c.iter().all(|d| d.done.load(Ordering::Acquire)))
                };
                (all && copied()).then(Status::default)
            }
            Side::Recv { remote, round, .. } => {
                if !self.advance() {
                    return None;
                }
                let Some(peer) = self.peer else {
                    return Some(Status::default());
                };
                let r = remote.get()?;
                let mine = self.buf.len();
                let mut s = Status {
                    source: peer as i32,
                    tag: self.tag,
                    bytes: r.bytes.min(mine) as u64,
                    ..Status::default()
                };
                s.error = round.try_lock().map_or(0, |r| r.error);
                if r.bytes > mine {
                    s.error = ErrorClass::Truncate as i32;
                }
                Some(s)
            }
        }
    }

    /// Match what arrived for a receive round (`try_lock`s only): whether it is done.
    fn advance(&self) -> bool {
        let Side::Recv {
            hello,
            hello_mem,
            remote,
            round,
            done,
        } = &self.side
        else {
            return true;
        };
        if done.load(Ordering::Acquire) {
            return true;
        }
        let (Some(source), Ok(mut round)) = (self.peer, round.try_lock()) else {
            return false;
        };
        self.tc.mailboxes[self.tc.own(self.rank)].try_progress();
        if remote.get().is_none() && hello.as_ref().is_some_and(|h| h.status.get().is_some()) {
            if let Some(r) = Remote::from_hello(hello_mem.bytes()) {
                let _ = remote.set(r);
            }
        }
        let Some(r) = remote.get() else {
            return false;
        };
        let round = &mut *round;
        let posted = round
            .posted
            .get_or_insert_with(|| self.post_data(r, source));
        posted.retain(|(p, landing, i)| {
            let Some(s) = p.status.get() else {
                return true;
            };
            if s.error != 0 && s.error != ErrorClass::Truncate as i32 {
                round.error = s.error;
            }
            landing.settle(&self.buf);
            r.arrived[*i].store(true, Ordering::Release);
            false
        });
        if posted.is_empty() {
            done.store(true, Ordering::Release);
        }
        posted.is_empty()
    }

    /// Post a round's data receives: one per send partition, into its byte range (what lies
    /// beyond the receive buffer is cut: the round reports the truncation).
    fn post_data(&self, r: &Remote, source: u32) -> Vec<(Arc<PostedRecv>, Landing, usize)> {
        let mine = self.buf.len();
        let sb = r.bytes / r.partitions.max(1);
        let mb = &self.tc.mailboxes[self.tc.own(self.rank)];
        (0..r.partitions)
            .map(|i| {
                let start = (i * sb).min(mine);
                let (buf, landing) =
                    landing(&self.buf, &self.ty, start, (start + sb).min(mine) - start);
                let tag = TagSel::Tag(data_tag(r.key, i));
                (
                    mb.post_in(Ctx::Part, SourceSel::Rank(source), tag, buf),
                    landing,
                    i,
                )
            })
            .collect()
    }
}
