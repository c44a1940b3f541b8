//! Thread communicators (`MPIX_Threadcomm_*`, docs/threadcomm.md): inside a parallel region
//! the threads of a process are the ranks of a communicator.
//!
//! A `ThreadComm` is made outside the region (`MPIX_Threadcomm_init`) for `n` threads and
//! hangs off its `Comm`. Each thread that calls `start` gets the next rank in arrival order;
//! the ABI layer keeps that rank in the thread's local storage. The `thread` transport
//! (`p2p`: one lock-free queue per rank) carries point-to-point messages; collectives use
//! `coll`'s barrier and slot rounds. `finish` is a barrier whose last thread resets
//! everything for the next region.
//!
//! Over a communicator of several processes, every process brings its threads (`link`, over
//! the `Wire` that `pt2pt::thread_wire` builds):
//! ranks are numbered by process, then by arrival; messages to threads of other processes go
//! over the process-level transports, and the collectives run over point-to-point (`span`).

pub mod coll;
pub mod group;
pub mod link;
pub mod p2p;
pub mod pair;
mod part;
pub mod queue;
mod span;
pub mod split;
#[cfg(all(test, not(loom)))]
mod tests;

use std::any::Any;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use crate::datatype::Buf;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::instance::Instance;
use crate::message::{SourceSel, Status, TagSel};
use crate::op::Reduction;
use crate::request::{GreqClass, ReqId, StartFn};
use crate::vci::schedule::{Cx, Step};
use coll::{Barrier, Flags, Line, Rounds};
use link::{Arrival, Data, Link, Wire};
use p2p::{Ctx, Direct, Mailbox, Matched, PostedRecv};
pub use part::{PartArgs, ThreadPart};

/// Empty polls spent spinning before a waiting thread yields its core (threads may
/// outnumber cores).
const SPINS: u32 = 256;

/// One empty poll of a wait loop.
#[inline]
pub(crate) fn idle(spins: &mut u32) {
    if *spins < SPINS {
        *spins += 1;
        crate::sync::spin_hint();
    } else {
        crate::sync::yield_now();
    }
}

/// The shared state of one thread communicator in this process. Ranks are the thread
/// communicator's (`base ..` in this process); `local` turns one into an index here.
pub struct ThreadComm {
    /// This process's threads (ranks) per region.
    n: u32,
    /// This process's first rank.
    base: u32,
    /// The processes this thread communicator spans, when more than this one.
    link: Option<Link>,
    /// Threads that called `start` in the current region (ranks handed out).
    arrived: Line<AtomicU32>,
    mailboxes: Box<[Mailbox]>,
    /// The library's own meetings (`share`, `finish`).
    barrier: Barrier,
    /// `MPI_Barrier`.
    flags: Flags,
    rounds: Rounds,
    /// Per rank: requests started and not yet freed.
    pending: Box<[Line<AtomicU32>]>,
    /// What this process's first rank hands to the process's other ranks (`share`).
    shared: Mutex<Option<Shared>>,
    /// Made inside a region (`MPI_Comm_dup`): born active, freed before the region ends.
    born_active: bool,
    /// Its ranks as group members (`group`), set once the communicator is made.
    members: OnceLock<Arc<[crate::instance::ProcId]>>,
}

/// A value (or the error making it) that `share` hands around.
type Shared = MpiResult<Arc<dyn Any + Send + Sync>>;

impl std::fmt::Debug for ThreadComm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadComm").field("n", &self.n).finish()
    }
}

impl ThreadComm {
    /// A thread communicator of `n` threads of this process alone.
    pub fn new(n: u32) -> ThreadComm {
        ThreadComm::with_link(n, 0, None)
    }

    /// `n` threads of this process, ranks `base ..` of those `link` spans (if any).
    fn with_link(n: u32, base: u32, link: Option<Link>) -> ThreadComm {
        ThreadComm {
            n,
            base,
            link,
            arrived: Line(AtomicU32::new(0)),
            mailboxes: (0..n).map(|_| Mailbox::new(base, n)).collect(),
            barrier: Barrier::new(n),
            flags: Flags::new(n),
            rounds: Rounds::new(n),
            pending: (0..n).map(|_| Line(AtomicU32::new(0))).collect(),
            shared: Mutex::new(None),
            born_active: false,
            members: OnceLock::new(),
        }
    }

    /// This thread communicator made active with every rank started, as a duplicate made
    /// inside a region is (the ranks are those of the communicator it duplicates).
    pub fn born_active(mut self) -> ThreadComm {
        self.arrived.0.store(self.n, Ordering::Release);
        self.born_active = true;
        self
    }

    /// Whether it was made inside a region (`born_active`).
    pub fn is_born_active(&self) -> bool {
        self.born_active
    }

    /// Called by every rank of this process: this process's first rank runs `make`, and every
    /// rank of the process gets its result (the process's ranks wait for each other).
    pub fn share<T: Any + Send + Sync>(
        &self,
        rank: u32,
        make: impl FnOnce() -> MpiResult<Arc<T>>,
    ) -> MpiResult<Arc<T>> {
        let slot = || self.shared.lock().unwrap_or_else(|p| p.into_inner());
        if rank == self.base {
            let made = make().map(|v| v as Arc<dyn Any + Send + Sync>);
            *slot() = Some(made);
        }
        self.barrier.wait(|| {});
        let got = slot().clone().expect("the first rank shared a value");
        // Every rank took its copy before the slot is emptied.
        self.barrier.wait(|| *slot() = None);
        got.map(|v| v.downcast::<T>().expect("every rank shares the same type"))
    }

    /// A thread communicator of this process's `n` threads and those of the other
    /// processes, which `wire` reaches; process `p` brings `counts[p]` threads.
    pub fn spanning(wire: Box<dyn Wire>, counts: &[u32], n: u32) -> MpiResult<ThreadComm> {
        let link = Link::new(wire, counts)?;
        Ok(ThreadComm::with_link(n, link.mine().0, Some(link)))
    }

    /// This process's threads per region.
    pub fn threads(&self) -> u32 {
        self.n
    }

    /// Whether `rank` is this process's first rank (the one that acts for the process).
    pub fn is_first(&self, rank: u32) -> bool {
        rank == self.base
    }

    /// Ranks per region (the threads of every process).
    pub fn size(&self) -> u32 {
        self.link.as_ref().map_or(self.n, Link::size)
    }

    /// The index in this process of rank `r`, if it is one of this process's threads.
    fn local(&self, r: u32) -> Option<usize> {
        r.checked_sub(self.base)
            .filter(|&i| i < self.n)
            .map(|i| i as usize)
    }

    /// This process's own rank `r` (its index here).
    fn own(&self, r: u32) -> usize {
        self.local(r).expect("a rank of this process's threads")
    }

    /// Hand what came from other processes to the mailboxes: whether anything came.
    fn pump(&self) -> bool {
        self.link.as_ref().is_some_and(|l| {
            l.pump(|a: Arrival| {
                if let Some(i) = self.local(a.dest) {
                    self.mailboxes[i].push_bytes(a.src, a.tag, a.ctx, a.data);
                }
            })
        })
    }

    /// One empty pass of a wait loop: take arrivals from other processes, else back off.
    fn wait_idle(&self, spins: &mut u32) {
        if self.pump() {
            *spins = 0;
        } else {
            idle(spins);
        }
    }

    /// A collective's message from `me` to `dest` (never waits for the receiver).
    fn coll_send(&self, me: u32, dest: u32, data: &[u8]) -> MpiResult<()> {
        match (self.local(dest), &self.link) {
            (Some(i), _) => {
                self.mailboxes[i].push_bytes(me, 0, Ctx::Coll, data.to_vec());
                Ok(())
            }
            (None, Some(l)) => l.send((me, dest), 0, Ctx::Coll, Data::Bytes(data), false, |s| {
                self.wait_idle(s)
            }),
            (None, None) => unreachable!("every rank of a one-process communicator is local"),
        }
    }

    /// The next collective message from `src` to `me`.
    fn coll_recv(&self, me: u32, src: u32) -> Vec<u8> {
        let mb = &self.mailboxes[self.own(me)];
        let mut spins = 0u32;
        loop {
            if let Some(v) = mb.take_coll(src) {
                return v;
            }
            self.wait_idle(&mut spins);
        }
    }

    /// Whether a region is running (some thread started and not all finished).
    pub fn is_active(&self) -> bool {
        self.arrived.0.load(Ordering::Acquire) != 0
    }

    /// `MPIX_Threadcomm_start` on the calling thread: its rank (arrival order).
    pub fn start(&self) -> MpiResult<u32> {
        let r = self.arrived.0.fetch_add(1, Ordering::AcqRel);
        if r >= self.n {
            self.arrived.0.fetch_sub(1, Ordering::AcqRel);
            return Err(MpiError::new(
                ErrorClass::Comm,
                format!(
                    "MPIX_Threadcomm_start(threadcomm): more threads than num_threads={} \
                     started the thread communicator",
                    self.n
                ),
            ));
        }
        Ok(self.base + r)
    }

    /// `MPIX_Threadcomm_finish` by `rank`: refused while it has requests; else waits for
    /// every rank, and the last one resets the communicator for the next region.
    pub fn finish(&self, rank: u32) -> MpiResult<()> {
        let pending = self.pending[self.own(rank)].0.load(Ordering::Acquire);
        if pending != 0 {
            return Err(MpiError::new(
                ErrorClass::Pending,
                format!(
                    "MPIX_Threadcomm_finish(threadcomm): thread rank {rank} still has \
                     {pending} request(s) not completed and freed"
                ),
            ));
        }
        if self.link.is_none() {
            self.barrier.wait(|| {
                self.mailboxes.iter().for_each(Mailbox::clear);
                self.rounds.reset();
                self.flags.reset();
                self.arrived.0.store(0, Ordering::Release);
            });
            return Ok(());
        }
        // Several processes: this process's leftovers go first (no other process can send
        // for the next region before the barrier below, which this process's first rank
        // joins only after), then the processes' first ranks meet, then this process's
        // ranks leave together, the last letting the next region start.
        self.barrier.wait(|| {
            self.mailboxes.iter().for_each(Mailbox::clear);
            self.rounds.reset();
        });
        let crossed = match &self.link {
            Some(l) if rank == self.base => self.leaders_barrier(rank, l.leaders()),
            _ => Ok(()),
        };
        self.barrier
            .wait(|| self.arrived.0.store(0, Ordering::Release));
        crossed
    }

    fn check_rank(&self, r: u32, what: &str) -> MpiResult<()> {
        if r < self.size() {
            Ok(())
        } else {
            Err(MpiError::new(
                ErrorClass::Rank,
                format!(
                    "{what}={r} is not a rank of the thread communicator (size {})",
                    self.size()
                ),
            ))
        }
    }

    /// A send from `rank` to `dest` of another process: over the transports, waiting only
    /// until they hold the message (a synchronous send: until `dest`'s process took it).
    fn send_remote(&self, rank: u32, dest: u32, tag: i32, buf: &Buf, sync: bool) -> MpiResult<()> {
        let l = self.link.as_ref().expect("a rank of another process");
        l.send((rank, dest), tag, Ctx::User, Data::Buf(buf), sync, |s| {
            self.wait_idle(s)
        })
    }

    /// A blocking send from `rank`.
    pub fn send(&self, rank: u32, dest: u32, tag: i32, buf: &Buf, sync: bool) -> MpiResult<()> {
        self.check_rank(dest, "dest")?;
        let Some(to) = self.local(dest) else {
            return self.send_remote(rank, dest, tag, buf, sync);
        };
        let direct = p2p::goes_direct(buf.len(), sync) && (dest != rank || sync);
        if let Some(d) = self.mailboxes[to].push(rank, tag, buf, direct) {
            if dest == rank {
                // A synchronous send to oneself: only a receive posted earlier can match it.
                self.mailboxes[to].try_progress();
            }
            let mut spins = 0u32;
            while !d.done.load(Ordering::Acquire) {
                self.wait_idle(&mut spins);
            }
        }
        Ok(())
    }

    /// A blocking receive by `rank`.
    pub fn recv(&self, rank: u32, source: SourceSel, tag: TagSel, buf: Buf) -> MpiResult<Status> {
        if let SourceSel::Rank(s) = source {
            self.check_rank(s, "source")?;
        }
        let mb = &self.mailboxes[self.own(rank)];
        Ok(mb.recv(source, tag, &buf, |s| self.wait_idle(s)))
    }

    /// `MPI_Sendrecv` by `rank`: the receive is posted first, then both progress together
    /// (a peer doing the same waits for this rank's receive to copy its message). `None`
    /// peers are `MPI_PROC_NULL`.
    pub fn sendrecv(
        &self,
        rank: u32,
        (dest, stag, sbuf): (Option<u32>, i32, &Buf),
        (source, rtag, rbuf): (Option<SourceSel>, TagSel, Buf),
    ) -> MpiResult<Option<Status>> {
        if let Some(d) = dest {
            self.check_rank(d, "dest")?;
        }
        if let Some(SourceSel::Rank(s)) = source {
            self.check_rank(s, "source")?;
        }
        let mb = &self.mailboxes[self.own(rank)];
        let posted = source.map(|s| mb.post(s, rtag, rbuf));
        let mut sent = None;
        match dest.map(|d| (d, self.local(d))) {
            None => {}
            Some((d, None)) => self.send_remote(rank, d, stag, sbuf, false)?,
            Some((d, Some(to))) => {
                let direct = p2p::goes_direct(sbuf.len(), false) && d != rank;
                sent = self.mailboxes[to].push(rank, stag, sbuf, direct);
            }
        }
        let mut spins = 0u32;
        loop {
            let received = posted.as_ref().is_none_or(|p| p.status.get().is_some());
            let copied = sent.as_ref().is_none_or(|d| d.done.load(Ordering::Acquire));
            if received && copied {
                return Ok(posted.and_then(|p| p.status.get().copied()));
            }
            if !mb.progress() {
                self.wait_idle(&mut spins);
            }
        }
    }

    /// `MPI_Probe`/`MPI_Iprobe` by `rank`: the matching message's status, waiting for one
    /// when `blocking`.
    pub fn probe(
        &self,
        rank: u32,
        source: SourceSel,
        tag: TagSel,
        blocking: bool,
    ) -> MpiResult<Option<Status>> {
        self.look(rank, source, blocking, |mb| mb.probe(source, tag))
    }

    /// `MPI_Mprobe`/`MPI_Improbe` by `rank`: the matching message, taken out of the
    /// mailbox, and its status; waiting for one when `blocking`.
    pub fn mprobe(
        &self,
        rank: u32,
        source: SourceSel,
        tag: TagSel,
        blocking: bool,
    ) -> MpiResult<Option<(Status, Matched)>> {
        self.look(rank, source, blocking, |mb| mb.take_match(source, tag))
    }

    /// What `find` finds in `rank`'s mailbox, tried until it finds something when
    /// `blocking` (a probe from `source`).
    fn look<T>(
        &self,
        rank: u32,
        source: SourceSel,
        blocking: bool,
        find: impl Fn(&Mailbox) -> Option<T>,
    ) -> MpiResult<Option<T>> {
        if let SourceSel::Rank(s) = source {
            self.check_rank(s, "source")?;
        }
        let mb = &self.mailboxes[self.own(rank)];
        let mut spins = 0u32;
        self.pump();
        loop {
            if let Some(found) = find(mb) {
                return Ok(Some(found));
            }
            if !blocking {
                return Ok(None);
            }
            crate::polled::run();
            self.wait_idle(&mut spins);
        }
    }

    /// `MPI_Isend` from `rank`: `None` when the message left already (eager), else the
    /// request that completes once the receiver copied it.
    #[allow(clippy::too_many_arguments)]
    pub fn isend(
        self: &Arc<Self>,
        inst: &Arc<Instance>,
        rank: u32,
        dest: u32,
        tag: i32,
        buf: &Buf,
        sync: bool,
        owner: usize,
    ) -> MpiResult<Option<ReqId>> {
        self.start_send(rank, dest, tag, buf, sync, |w| {
            self.request(inst, rank, w, owner)
        })
    }

    /// Start a send from `rank`: `None` when it is complete already, else the request
    /// `make` makes for what it waits for.
    fn start_send(
        &self,
        rank: u32,
        dest: u32,
        tag: i32,
        buf: &Buf,
        sync: bool,
        make: impl FnOnce(Waiting) -> ReqId,
    ) -> MpiResult<Option<ReqId>> {
        self.check_rank(dest, "dest")?;
        let Some(to) = self.local(dest) else {
            // Complete once the transports hold the message.
            return self.send_remote(rank, dest, tag, buf, sync).map(|()| None);
        };
        let direct = p2p::goes_direct(buf.len(), sync);
        Ok(self.mailboxes[to]
            .push(rank, tag, buf, direct)
            .map(|d| make(Waiting::Send(d))))
    }

    /// The start code of a persistent send from `rank` (`MPI_Send_init`), whose request
    /// is on VCI `vci`: each start is an `isend`. `buf`'s type is kept for as long as the
    /// request lives.
    #[allow(clippy::too_many_arguments)]
    pub fn send_init(
        self: &Arc<Self>,
        inst: &Arc<Instance>,
        vci: usize,
        rank: u32,
        dest: u32,
        tag: i32,
        buf: Buf,
        sync: bool,
        owner: usize,
    ) -> StartFn {
        let (tc, inst, keep) = (self.clone(), inst.clone(), buf.keep());
        StartFn::new(move |_| {
            let _type = &keep;
            tc.start_send(rank, dest, tag, &buf, sync, |w| {
                tc.persistent(&inst, vci, rank, w, owner)
            })
        })
    }

    /// The start code of a persistent receive by `rank` (`MPI_Recv_init`), whose request
    /// is on VCI `vci`: each start is an `irecv`.
    #[allow(clippy::too_many_arguments)]
    pub fn recv_init(
        self: &Arc<Self>,
        inst: &Arc<Instance>,
        vci: usize,
        rank: u32,
        source: SourceSel,
        tag: TagSel,
        buf: Buf,
        owner: usize,
    ) -> StartFn {
        let (tc, inst, keep) = (self.clone(), inst.clone(), buf.keep());
        StartFn::new(move |_| {
            let _type = &keep;
            let p = tc.post(rank, source, tag, buf)?;
            Ok(Some(tc.persistent(
                &inst,
                vci,
                rank,
                Waiting::Recv(p),
                owner,
            )))
        })
    }

    /// Post a receive by `rank`.
    fn post(
        &self,
        rank: u32,
        source: SourceSel,
        tag: TagSel,
        buf: Buf,
    ) -> MpiResult<Arc<PostedRecv>> {
        if let SourceSel::Rank(s) = source {
            self.check_rank(s, "source")?;
        }
        Ok(self.mailboxes[self.own(rank)].post(source, tag, buf))
    }

    /// The inner request of a started persistent operation of `rank`: a schedule on VCI
    /// `vci` (the persistent request's) that completes once `what` is done, which the
    /// starting thread's polling advances. It counts among the rank's requests meanwhile.
    fn persistent(
        self: &Arc<Self>,
        inst: &Instance,
        vci: usize,
        rank: u32,
        what: Waiting,
        owner: usize,
    ) -> ReqId {
        let pending = || &self.pending[self.own(rank)].0;
        pending().fetch_add(1, Ordering::AcqRel);
        let started = Arc::new(Started {
            tc: self.clone(),
            rank,
            what,
        });
        crate::polled::register_local(started.clone());
        crate::progress::start_schedule(
            inst,
            vci,
            owner,
            Box::new(move |_cx: &mut Cx<'_>| match started.what.status() {
                Some(s) => {
                    started.tc.pending[started.tc.own(started.rank)]
                        .0
                        .fetch_sub(1, Ordering::AcqRel);
                    Step::Done(s)
                }
                None => Step::Pending,
            }),
        )
    }

    /// `MPI_Irecv` by `rank`: its request.
    pub fn irecv(
        self: &Arc<Self>,
        inst: &Arc<Instance>,
        rank: u32,
        source: SourceSel,
        tag: TagSel,
        buf: Buf,
        owner: usize,
    ) -> MpiResult<ReqId> {
        let p = self.post(rank, source, tag, buf)?;
        Ok(self.request(inst, rank, Waiting::Recv(p), owner))
    }

    fn request(
        self: &Arc<Self>,
        inst: &Arc<Instance>,
        rank: u32,
        what: Waiting,
        owner: usize,
    ) -> ReqId {
        self.pending[self.own(rank)]
            .0
            .fetch_add(1, Ordering::AcqRel);
        let class = Arc::new(ThreadRequest {
            tc: self.clone(),
            inst: inst.clone(),
            rank,
            what,
            id: OnceLock::new(),
        });
        let id = crate::progress::greq::start_local(inst, rank as usize, class.clone(), 0, owner);
        let _ = class.id.set(id);
        class.poll(0);
        id
    }

    pub fn barrier(&self, rank: u32) -> MpiResult<()> {
        if let Some(l) = &self.link {
            return self.span_barrier(rank, l.leaders());
        }
        // One process: ranks are indices here (`base` is 0).
        self.flags.wait(rank);
        Ok(())
    }

    pub fn bcast(&self, rank: u32, buf: &Buf, root: u32) -> MpiResult<()> {
        self.check_rank(root, "root")?;
        if self.link.is_some() {
            return self.span_bcast(rank, buf, root);
        }
        self.rounds.bcast(rank, buf, root);
        Ok(())
    }

    pub fn reduce(
        &self,
        rank: u32,
        send: Option<&Buf>,
        recv: &Buf,
        red: &Reduction,
        root: u32,
    ) -> MpiResult<()> {
        self.check_rank(root, "root")?;
        if self.link.is_some() {
            return self.span_reduce(rank, send, recv, red, root);
        }
        self.rounds.reduce(rank, send, recv, red, root);
        Ok(())
    }

    pub fn allreduce(
        &self,
        rank: u32,
        send: Option<&Buf>,
        recv: &Buf,
        red: &Reduction,
    ) -> MpiResult<()> {
        if self.link.is_some() {
            return self.span_allreduce(rank, send, recv, red);
        }
        self.rounds.allreduce(rank, send, recv, red);
        Ok(())
    }

    /// `MPI_Scan`, or `MPI_Exscan` when `exclusive`.
    pub fn scan(
        &self,
        rank: u32,
        send: Option<&Buf>,
        recv: &Buf,
        red: &Reduction,
        exclusive: bool,
    ) -> MpiResult<()> {
        if self.link.is_some() {
            return self.span_scan(rank, send, recv, red, exclusive);
        }
        self.rounds.scan(rank, send, recv, red, exclusive);
        Ok(())
    }

    pub fn gather(&self, rank: u32, send: Option<&Buf>, recv: &Buf, root: u32) -> MpiResult<()> {
        self.check_rank(root, "root")?;
        if self.link.is_some() {
            return self.span_gather(rank, send, recv, root);
        }
        self.rounds.gather(rank, send, recv, root);
        Ok(())
    }

    pub fn allgather(&self, rank: u32, send: Option<&Buf>, recv: &Buf) -> MpiResult<()> {
        if self.link.is_some() {
            return self.span_allgather(rank, send, recv);
        }
        self.rounds.allgather(rank, send, recv);
        Ok(())
    }

    pub fn scatter(&self, rank: u32, send: &Buf, recv: Option<&Buf>, root: u32) -> MpiResult<()> {
        self.check_rank(root, "root")?;
        if self.link.is_some() {
            return self.span_scatter(rank, send, recv, root);
        }
        self.rounds.scatter(rank, send, recv, root);
        Ok(())
    }

    pub fn alltoall(&self, rank: u32, send: Option<&Buf>, recv: &Buf) -> MpiResult<()> {
        if self.link.is_some() {
            return self.span_alltoall(rank, send, recv);
        }
        self.rounds.alltoall(rank, send, recv);
        Ok(())
    }

    /// Whether `rank` has receives posted and not matched (for tests and diagnostics).
    pub fn has_posted(&self, rank: u32) -> bool {
        self.mailboxes[self.own(rank)].has_posted()
    }
}

/// What a thread communicator's request waits for.
enum Waiting {
    Recv(Arc<PostedRecv>),
    Send(Arc<Direct>),
}

impl Waiting {
    /// The operation's status once it is done.
    fn status(&self) -> Option<Status> {
        match self {
            Waiting::Recv(p) => p.status.get().copied(),
            Waiting::Send(d) => d.done.load(Ordering::Acquire).then(Status::default),
        }
    }
}

impl ThreadComm {
    /// One step for a request of `rank` waiting for `what`: a receive takes what arrived
    /// (without waiting for the mailbox's lock). Whether it is done.
    fn advance(&self, rank: u32, what: &Waiting) -> bool {
        if what.status().is_none() {
            if let Waiting::Recv(_) = what {
                self.pump();
                self.mailboxes[self.own(rank)].try_progress();
            }
        }
        what.status().is_some()
    }
}

/// A started persistent operation: its thread polls it until it is done.
struct Started {
    tc: Arc<ThreadComm>,
    rank: u32,
    what: Waiting,
}

impl crate::polled::Polled for Started {
    fn poll(&self) -> bool {
        self.tc.advance(self.rank, &self.what)
    }
}

/// A nonblocking operation on a thread communicator: a generalized request of the core whose
/// poll progresses the rank's mailbox.
struct ThreadRequest {
    tc: Arc<ThreadComm>,
    inst: Arc<Instance>,
    rank: u32,
    what: Waiting,
    id: OnceLock<ReqId>,
}

impl GreqClass for ThreadRequest {
    fn query(&self, _state: usize) -> Status {
        self.what.status().unwrap_or_default()
    }
    fn free(&self, _state: usize) -> i32 {
        self.tc.pending[self.tc.own(self.rank)]
            .0
            .fetch_sub(1, Ordering::AcqRel);
        0
    }
    fn cancel(&self, _state: usize, _complete: bool) -> i32 {
        0
    }
    fn has_poll(&self) -> bool {
        true
    }
    fn poll(&self, _state: usize) -> i32 {
        if self.tc.advance(self.rank, &self.what) {
            if let Some(&id) = self.id.get() {
                let _ = crate::progress::greq::complete(&self.inst, id, "MPI_Wait");
            }
        }
        0
    }
    fn has_wait(&self) -> bool {
        false
    }
    fn wait(&self, _states: &[usize], _timeout: f64) -> i32 {
        0
    }
}
