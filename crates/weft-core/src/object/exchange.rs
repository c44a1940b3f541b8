//! The small collective exchanges communicator creation needs (AND-reductions of context-id
//! masks, allgathers of split colours and keys, broadcasts from a leader), over point-to-point
//! messages on a communicator's collective context id with tags reserved for communicator
//! creation. They work on any subset of a communicator's ranks, so `MPI_Comm_split`'s
//! colours and `MPI_Comm_create_group`'s groups agree among themselves.
//!
//! Every function waits for all the operations it started, also on error, so the scratch
//! memory it lends to the engine is never dropped under a pending operation.
#![forbid(unsafe_code)]

use crate::datatype::access::Scratch;
use crate::datatype::Buf;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::instance::Instance;
use crate::instance::ProcId;
use crate::message::{Pattern, SendMode, Target};
use crate::object::Comm;
use crate::progress;
use crate::request::ReqId;
use crate::vci::engine::{self, SendStart};

/// Tags on a collective context reserved for communicator creation and `MPI_Finalize`
/// (collectives use small positive tags there). All are at or below `-0x1000_0000`.
pub mod tag {
    /// Context-id agreement of `dup`, `split`, `create` (over the parent).
    pub const AGREE: i32 = -0x1000_0001;
    /// `split`'s allgather of colour, key and mask.
    pub const SPLIT: i32 = -0x1000_0002;
    /// Retry rounds of an agreement among a subset (split colours).
    pub const SUBSET: i32 = -0x1000_0003;
    /// Intercommunicator creation and merge: exchanges inside one local group.
    pub const LOCAL: i32 = -0x1000_0004;
    /// Intercommunicator merge: exchanges between the two leaders.
    pub const LEADERS: i32 = -0x1000_0005;
    /// Distributed-graph creation: edges sent to the processes they concern.
    pub const EDGES: i32 = -0x1000_0006;
    /// A split whose colours needed more than one round: did every colour get its id?
    pub const VERDICT: i32 = -0x1000_0007;
    /// `MPI_Finalize`'s synchronization over `MPI_COMM_WORLD` (`runtime::world::finalize`).
    pub const FINALIZE: i32 = -0x1000_0008;
    /// Stream communicator creation: every member's stream VCIs (over the new communicator).
    pub const STREAMS: i32 = -0x1000_0009;
    /// `MPI_Comm_connect`/`accept`/`join`, inside each group (`connect`).
    pub const CONNECT: i32 = -0x1000_000a;
    /// Thread communicator creation: every process's thread count (over the hidden
    /// communicator of `pt2pt::thread_wire`).
    pub const THREADCOMM: i32 = -0x1000_000b;
    /// `MPI_Comm_create_group(tag)`: `GROUP_BASE - (tag & 0x0fff_ffff)`.
    pub const GROUP_BASE: i32 = -0x2000_0000;
    /// `MPI_Intercomm_create(tag)` between the leaders: `INTERCOMM_BASE - (tag & 0x0fff_ffff)`.
    pub const INTERCOMM_BASE: i32 = -0x3000_0000;
    /// Bootstrap of `MPI_Comm_create_from_group`: `BOOTSTRAP_BASE - (hash & 0x3fff_ffff)`.
    pub const BOOTSTRAP_BASE: i32 = -0x4000_0000;

    /// `MPI_Comm_idup` number `seq` on a communicator: `IDUP_BASE - 2 * (seq & 0x7f_ffff)`
    /// inside a group, one less between the leaders of an intercommunicator's groups.
    pub const IDUP_BASE: i32 = -0x1100_0000;

    pub fn idup(seq: u32) -> (i32, i32) {
        let t = IDUP_BASE - 2 * (seq & 0x7f_ffff) as i32;
        (t, t - 1)
    }

    pub fn group(user_tag: i32) -> i32 {
        GROUP_BASE - (user_tag & 0x0fff_ffff)
    }

    pub fn intercomm(user_tag: i32) -> i32 {
        INTERCOMM_BASE - (user_tag & 0x0fff_ffff)
    }
}

/// Where messages of an exchange go: a context id, this process's rank as receivers see it,
/// and the job rank of every peer rank.
pub struct Channel<'a> {
    inst: &'a Instance,
    vci: usize,
    /// The communicator whose peers' VCIs the messages go to (`None`: all on `vci`).
    comm: Option<&'a Comm>,
    context: u32,
    my_rank: u32,
    peers: &'a [ProcId],
}

impl<'a> Channel<'a> {
    /// The collective context of `comm`, addressing its peers (the remote group of an
    /// intercommunicator).
    pub fn collective(comm: &'a Comm) -> Channel<'a> {
        Channel {
            inst: &comm.session.instance,
            vci: comm.vci,
            comm: Some(comm),
            context: comm.collective_context(),
            my_rank: comm.rank,
            peers: comm.peer_group().members(),
        }
    }

    /// The collective context of `comm`, addressing its local group (on an
    /// intercommunicator, exchanges inside one side; use a tag the other side does not send).
    pub fn local(comm: &'a Comm) -> Channel<'a> {
        Channel {
            inst: &comm.session.instance,
            vci: comm.vci,
            comm: (!comm.is_inter()).then_some(comm),
            context: comm.collective_context(),
            my_rank: comm.rank,
            peers: comm.group.members(),
        }
    }

    /// An explicit channel (bootstrap traffic without a parent communicator).
    pub fn raw(inst: &'a Instance, context: u32, my_rank: u32, peers: &'a [ProcId]) -> Channel<'a> {
        Channel {
            inst,
            vci: inst.vci_for_context(context),
            comm: None,
            context,
            my_rank,
            peers,
        }
    }

    pub fn size(&self) -> u32 {
        self.peers.len() as u32
    }

    /// The VCI messages to peer `rank` go to.
    fn vci_of(&self, rank: u32) -> u8 {
        self.comm.map_or(self.vci as u8, |c| c.peer_vci(rank))
    }

    fn isend(&self, dest: u32, tag: i32, buf: Buf) -> MpiResult<Option<ReqId>> {
        let dest_job = *self.peers.get(dest as usize).ok_or_else(|| {
            MpiError::new(
                ErrorClass::Intern,
                format!("exchange peer {dest} out of range"),
            )
        })?;
        let target = Target::new(self.context, self.my_rank, dest_job, tag, self.vci_of(dest));
        let mut st = self.inst.vcis[self.vci].lock();
        match engine::start_send(
            &self.inst.transports,
            self.vci,
            &mut st,
            target,
            buf,
            SendMode::Standard,
            false,
        )? {
            SendStart::Done => Ok(None),
            SendStart::Pending(id) => Ok(Some(id)),
        }
    }

    fn irecv(&self, src: u32, tag: i32, buf: Buf) -> ReqId {
        let pattern = Pattern::exact(self.context, src, tag);
        let mut st = self.inst.vcis[self.vci].lock();
        engine::start_recv(&self.inst.transports, self.vci, &mut st, pattern, buf, 0)
    }

    fn wait(&self, id: ReqId, expect: Option<usize>) -> MpiResult<()> {
        let status = complete(self.inst, id).status.into_result()?;
        match expect {
            Some(n) if status.bytes != n as u64 => Err(MpiError::new(
                ErrorClass::Intern,
                format!(
                    "communicator creation: expected {n} bytes from a peer, got {} (do all \
                     members call the same function with matching arguments?)",
                    status.bytes
                ),
            )),
            _ => Ok(()),
        }
    }

    /// Send `data` to `dest` while receiving exactly `out.len()` bytes from `src`.
    pub fn sendrecv(
        &self,
        dest: u32,
        data: &[u8],
        src: u32,
        out: &mut [u8],
        tag: i32,
    ) -> MpiResult<()> {
        let mut sbuf = Scratch::from_bytes(data);
        let mut rbuf = Scratch::new(out.len());
        let r = self.irecv(src, tag, rbuf.buf());
        let s = self.isend(dest, tag, sbuf.buf());
        let rr = self.wait(r, Some(out.len()));
        let sr = match s {
            Ok(Some(id)) => self.wait(id, None),
            Ok(None) => Ok(()),
            Err(e) => Err(e),
        };
        rr.and(sr)?;
        out.copy_from_slice(rbuf.bytes());
        Ok(())
    }

    pub fn send(&self, dest: u32, tag: i32, data: &[u8]) -> MpiResult<()> {
        let mut sbuf = Scratch::from_bytes(data);
        match self.isend(dest, tag, sbuf.buf())? {
            Some(id) => self.wait(id, None),
            None => Ok(()),
        }
    }

    /// Receive exactly `out.len()` bytes from `src`.
    pub fn recv(&self, src: u32, tag: i32, out: &mut [u8]) -> MpiResult<()> {
        let mut rbuf = Scratch::new(out.len());
        let id = self.irecv(src, tag, rbuf.buf());
        self.wait(id, Some(out.len()))?;
        out.copy_from_slice(rbuf.bytes());
        Ok(())
    }

    /// Receive a message of unknown length (at most `max` bytes) from `src`.
    pub fn recv_any_len(&self, src: u32, tag: i32, max: usize) -> MpiResult<Vec<u8>> {
        let mut rbuf = Scratch::new(max);
        let id = self.irecv(src, tag, rbuf.buf());
        let status = complete(self.inst, id).status.into_result()?;
        Ok(rbuf.bytes()[..status.bytes as usize].to_vec())
    }

    /// AND-reduce `data` over the members `members` (channel ranks; this process is
    /// `members[me]`): dissemination, ceil(log2 n) steps (AND is idempotent, so blocks that
    /// arrive twice do no harm).
    pub fn allreduce_and(
        &self,
        members: &[u32],
        me: usize,
        tag: i32,
        data: &mut [u64],
    ) -> MpiResult<()> {
        let n = members.len();
        let mut mine = words_to_bytes(data);
        let mut theirs = vec![0u8; mine.len()];
        let mut dist = 1;
        while dist < n {
            let to = members[(me + dist) % n];
            let from = members[(me + n - dist) % n];
            self.sendrecv(to, &mine, from, &mut theirs, tag)?;
            for (a, b) in mine.iter_mut().zip(&theirs) {
                *a &= *b;
            }
            dist *= 2;
        }
        bytes_to_words(&mine, data);
        Ok(())
    }

    /// Allgather equal-sized blocks over `members` (Bruck: ceil(log2 n) steps). Returns the
    /// blocks in member order.
    pub fn allgather(
        &self,
        members: &[u32],
        me: usize,
        tag: i32,
        block: &[u8],
    ) -> MpiResult<Vec<u8>> {
        let n = members.len();
        let b = block.len();
        // acc holds the blocks of members me, me+1, ... (mod n).
        let mut acc = Vec::with_capacity(n * b);
        acc.extend_from_slice(block);
        let mut have = 1;
        let mut dist = 1;
        while have < n {
            let count = dist.min(n - have);
            let to = members[(me + n - dist) % n];
            let from = members[(me + dist) % n];
            let mut incoming = vec![0u8; count * b];
            self.sendrecv(to, &acc[..count * b], from, &mut incoming, tag)?;
            acc.extend_from_slice(&incoming);
            have += count;
            dist *= 2;
        }
        let mut out = vec![0u8; n * b];
        for j in 0..n {
            let m = (me + j) % n;
            out[m * b..(m + 1) * b].copy_from_slice(&acc[j * b..(j + 1) * b]);
        }
        Ok(out)
    }

    /// Broadcast `data` from `members[root]` to the other members (binomial tree); every
    /// member passes a buffer of the same length.
    pub fn bcast(
        &self,
        members: &[u32],
        me: usize,
        root: usize,
        tag: i32,
        data: &mut [u8],
    ) -> MpiResult<()> {
        let n = members.len();
        let rel = (me + n - root) % n;
        let mut mask = 1;
        while mask < n {
            if rel & mask != 0 {
                let src = members[(rel - mask + root) % n];
                self.recv(src, tag, data)?;
                break;
            }
            mask <<= 1;
        }
        mask >>= 1;
        while mask > 0 {
            if rel + mask < n {
                let dst = members[(rel + mask + root) % n];
                self.send(dst, tag, data)?;
            }
            mask >>= 1;
        }
        Ok(())
    }
}

/// Wait for request `id` of an exchange. With several VCIs, every pass also makes progress
/// on the others: a context-id agreement running in the progress engine of another VCI (an
/// `MPI_Comm_idup`) may hold what this exchange's agreement waits for (see `context_id`).
fn complete(inst: &Instance, id: ReqId) -> progress::Completed {
    if inst.config.num_vcis == 1 {
        return progress::wait(inst, id);
    }
    let mut backoff = inst.backoff();
    loop {
        if let Some(done) = progress::take_if_complete(inst, id) {
            return done;
        }
        if progress::poke_all(inst) {
            backoff.reset();
        } else {
            backoff.idle();
        }
    }
}

/// Between two rounds of a blocking context-id agreement that found nothing: a progress pass
/// of every VCI and the polled work (nonblocking agreements of this process may hold what
/// this one waits for), then let other threads run.
pub fn pause(inst: &Instance) {
    crate::polled::run();
    progress::poke_all(inst);
    std::thread::yield_now();
}

pub fn words_to_bytes(words: &[u64]) -> Vec<u8> {
    words.iter().flat_map(|w| w.to_le_bytes()).collect()
}

pub fn bytes_to_words(bytes: &[u8], words: &mut [u64]) {
    for (w, c) in words.iter_mut().zip(bytes.chunks_exact(8)) {
        *w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
    }
}

/// The identity member list `0..n`.
pub fn all(n: u32) -> Vec<u32> {
    (0..n).collect()
}
