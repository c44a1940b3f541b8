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
//! Only the threads of one process form a thread communicator so far: `MPIX_Threadcomm_init`
//! over a communicator of several processes is refused (docs/threadcomm.md).

pub mod coll;
pub mod p2p;
pub mod queue;
#[cfg(all(test, not(loom)))]
mod tests;

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, OnceLock};

use crate::datatype::Buf;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::instance::Instance;
use crate::message::{SourceSel, Status, TagSel};
use crate::op::Reduction;
use crate::request::{GreqClass, ReqId};
use coll::{Barrier, Line, Rounds};
use p2p::{Direct, Mailbox, PostedRecv};

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

/// The shared state of one thread communicator in this process.
pub struct ThreadComm {
    n: u32,
    /// Threads that called `start` in the current region (ranks handed out).
    arrived: Line<AtomicU32>,
    mailboxes: Box<[Mailbox]>,
    barrier: Barrier,
    rounds: Rounds,
    /// Per rank: requests started and not yet freed.
    pending: Box<[Line<AtomicU32>]>,
}

impl std::fmt::Debug for ThreadComm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ThreadComm").field("n", &self.n).finish()
    }
}

impl ThreadComm {
    pub fn new(n: u32) -> ThreadComm {
        ThreadComm {
            n,
            arrived: Line(AtomicU32::new(0)),
            mailboxes: (0..n).map(|_| Mailbox::default()).collect(),
            barrier: Barrier::new(n),
            rounds: Rounds::new(n),
            pending: (0..n).map(|_| Line(AtomicU32::new(0))).collect(),
        }
    }

    /// Threads (ranks) per region.
    pub fn size(&self) -> u32 {
        self.n
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
        Ok(r)
    }

    /// `MPIX_Threadcomm_finish` by `rank`: refused while it has requests; else waits for
    /// every rank, and the last one resets the communicator for the next region.
    pub fn finish(&self, rank: u32) -> MpiResult<()> {
        let pending = self.pending[rank as usize].0.load(Ordering::Acquire);
        if pending != 0 {
            return Err(MpiError::new(
                ErrorClass::Pending,
                format!(
                    "MPIX_Threadcomm_finish(threadcomm): thread rank {rank} still has \
                     {pending} request(s) not completed and freed"
                ),
            ));
        }
        self.barrier.wait(|| {
            self.mailboxes.iter().for_each(Mailbox::clear);
            self.rounds.reset();
            self.arrived.0.store(0, Ordering::Release);
        });
        Ok(())
    }

    fn check_rank(&self, r: u32, what: &str) -> MpiResult<()> {
        if r < self.n {
            Ok(())
        } else {
            Err(MpiError::new(
                ErrorClass::Rank,
                format!(
                    "{what}={r} is not a rank of the thread communicator (size {})",
                    self.n
                ),
            ))
        }
    }

    /// A blocking send from `rank`.
    pub fn send(&self, rank: u32, dest: u32, tag: i32, buf: &Buf, sync: bool) -> MpiResult<()> {
        self.check_rank(dest, "dest")?;
        let direct = p2p::goes_direct(buf.len(), sync) && (dest != rank || sync);
        if let Some(d) = self.mailboxes[dest as usize].push(rank, tag, buf, direct) {
            if dest == rank {
                // A synchronous send to oneself: only a receive posted earlier can match it.
                self.mailboxes[rank as usize].try_progress();
            }
            p2p::wait_direct(&d);
        }
        Ok(())
    }

    /// A blocking receive by `rank`.
    pub fn recv(&self, rank: u32, source: SourceSel, tag: TagSel, buf: Buf) -> MpiResult<Status> {
        if let SourceSel::Rank(s) = source {
            self.check_rank(s, "source")?;
        }
        let mb = &self.mailboxes[rank as usize];
        let p = mb.post(source, tag, buf);
        Ok(mb.wait(&p))
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
        if let SourceSel::Rank(s) = source {
            self.check_rank(s, "source")?;
        }
        let mb = &self.mailboxes[rank as usize];
        let mut spins = 0u32;
        loop {
            if let Some(s) = mb.probe(source, tag) {
                return Ok(Some(s));
            }
            if !blocking {
                return Ok(None);
            }
            crate::polled::run();
            idle(&mut spins);
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
        self.check_rank(dest, "dest")?;
        let direct = p2p::goes_direct(buf.len(), sync);
        Ok(self.mailboxes[dest as usize]
            .push(rank, tag, buf, direct)
            .map(|d| self.request(inst, rank, Waiting::Send(d), owner)))
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
        if let SourceSel::Rank(s) = source {
            self.check_rank(s, "source")?;
        }
        let p = self.mailboxes[rank as usize].post(source, tag, buf);
        Ok(self.request(inst, rank, Waiting::Recv(p), owner))
    }

    fn request(
        self: &Arc<Self>,
        inst: &Arc<Instance>,
        rank: u32,
        what: Waiting,
        owner: usize,
    ) -> ReqId {
        self.pending[rank as usize].0.fetch_add(1, Ordering::AcqRel);
        let class = Arc::new(ThreadRequest {
            tc: self.clone(),
            inst: inst.clone(),
            rank,
            what,
            id: OnceLock::new(),
        });
        let id = crate::progress::greq::start(inst, class.clone(), 0, owner);
        let _ = class.id.set(id);
        class.poll(0);
        id
    }

    pub fn barrier(&self, _rank: u32) {
        self.barrier.wait(|| {});
    }

    pub fn bcast(&self, rank: u32, buf: &Buf, root: u32) -> MpiResult<()> {
        self.check_rank(root, "root")?;
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
        self.rounds.reduce(rank, send, recv, red, root);
        Ok(())
    }

    pub fn allreduce(&self, rank: u32, send: Option<&Buf>, recv: &Buf, red: &Reduction) {
        self.rounds.allreduce(rank, send, recv, red);
    }

    /// `MPI_Scan`, or `MPI_Exscan` when `exclusive`.
    pub fn scan(
        &self,
        rank: u32,
        send: Option<&Buf>,
        recv: &Buf,
        red: &Reduction,
        exclusive: bool,
    ) {
        self.rounds.scan(rank, send, recv, red, exclusive);
    }

    pub fn gather(&self, rank: u32, send: Option<&Buf>, recv: &Buf, root: u32) -> MpiResult<()> {
        self.check_rank(root, "root")?;
        self.rounds.gather(rank, send, recv, root);
        Ok(())
    }

    pub fn allgather(&self, rank: u32, send: Option<&Buf>, recv: &Buf) {
        self.rounds.allgather(rank, send, recv);
    }

    pub fn scatter(&self, rank: u32, send: &Buf, recv: Option<&Buf>, root: u32) -> MpiResult<()> {
        self.check_rank(root, "root")?;
        self.rounds.scatter(rank, send, recv, root);
        Ok(())
    }

    pub fn alltoall(&self, rank: u32, send: Option<&Buf>, recv: &Buf) {
        self.rounds.alltoall(rank, send, recv);
    }

    /// Whether `rank` has receives posted and not matched (for tests and diagnostics).
    pub fn has_posted(&self, rank: u32) -> bool {
        self.mailboxes[rank as usize].has_posted()
    }
}

/// What a thread communicator's request waits for.
enum Waiting {
    Recv(Arc<PostedRecv>),
    Send(Arc<Direct>),
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

impl ThreadRequest {
    fn done(&self) -> bool {
        match &self.what {
            Waiting::Recv(p) => p.status.get().is_some(),
            Waiting::Send(d) => d.done.load(Ordering::Acquire),
        }
    }
}

impl GreqClass for ThreadRequest {
    fn query(&self, _state: usize) -> Status {
        match &self.what {
            Waiting::Recv(p) => p.status.get().copied().unwrap_or_default(),
            Waiting::Send(_) => Status::default(),
        }
    }
    fn free(&self, _state: usize) -> i32 {
        self.tc.pending[self.rank as usize]
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
        if !self.done() {
            if let Waiting::Recv(_) = self.what {
                self.tc.mailboxes[self.rank as usize].try_progress();
            }
        }
        if self.done() {
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
