//! Nonblocking collectives: each is a plan of rounds (messages to start, then local copies
//! and reductions once they all complete) run by the VCI's progress pass as an internal
//! schedule (`vci::schedule`), so it advances while the user waits on anything.
//!
//! Data that exists when the call is made is copied at the call (in the caller's thread);
//! everything later happens in rounds. Each nonblocking collective on a communicator gets a
//! tag from the communicator's sequence counter, so any number can be outstanding.
//!
//! - Non-contiguous user buffers: plans compute on contiguous bytes. `Plan::flat_in` packs
//!   an input at the call; `Plan::flat_out` gives a scratch that a last round unpacks into
//!   the user's buffer. Every typed `Buf` a plan touches keeps its type alive (`Plan::keep`).
//! - Intercommunicators: plain ranks in a plan name the local group (on a tag of their own,
//!   `LOCAL_TAG`), `Msg::*_remote` ranks the remote group.
//! - User reduction operators never run under the VCI lock: a round whose local work needs
//!   one hands it to a polled-work item (`polled`), which runs it outside every
//!   lock from the next completion call of any thread; the schedule continues after it.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use super::{pairwise_steps, pof2_floor, Side};
use crate::datatype::access::{with_pair, Scratch};
use crate::datatype::{Buf, Type};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::message::{Pattern, SendMode, SourceSel, Status, TagSel, Target};
use crate::object::Comm;
use crate::op::Reduction;
use crate::polled::{self, Polled};
use crate::progress;
use crate::request::ReqId;
use crate::vci::schedule::{self, Cx, Step};

/// Tag bit of messages inside the local group of an intercommunicator.
const LOCAL_TAG: i32 = 0x4000_0000;
/// Sub-tags (neighbourhood directions) live above the op mark.
const SUB_SHIFT: u32 = 24;
/// A reduction's op mark (`Reduction::mark`) lives above the sequence number: receives
/// ignore it when matching and then compare it with their own (another op: `MPI_ERR_OP`).
const MARK_SHIFT: u32 = 19;
const MARK_BITS: i32 = 0x1f << MARK_SHIFT;
/// The mark of the empty messages a plan that failed on another op sends on: no op's (marks
/// are 0..=15), so the ranks downstream fail with `MPI_ERR_OP` too.
const FAILED_OP_MARK: i32 = MARK_BITS;
/// The sequence number's bits of a plan's tag.
const SEQ_BITS: u32 = 0x3_ffff;
pub(crate) const MAX_SUB: u32 = 63;

#[derive(Clone)]
pub(crate) struct Msg {
    send: bool,
    /// Rank in the local group, or in the remote group when `remote`.
    peer: u32,
    remote: bool,
    /// Sub-tag: distinguishes messages between the same pair in one collective.
    sub: u32,
    buf: Buf,
}

impl Msg {
    pub(crate) fn send(peer: u32, buf: Buf) -> Msg {
        Msg {
            send: true,
            peer,
            remote: false,
            sub: 0,
            buf,
        }
    }
    pub(crate) fn recv(peer: u32, buf: Buf) -> Msg {
        Msg {
            send: false,
            ..Msg::send(peer, buf)
        }
    }
    pub(crate) fn send_remote(peer: u32, buf: Buf) -> Msg {
        Msg {
            remote: true,
            ..Msg::send(peer, buf)
        }
    }
    pub(crate) fn recv_remote(peer: u32, buf: Buf) -> Msg {
        Msg {
            remote: true,
            ..Msg::recv(peer, buf)
        }
    }
    pub(crate) fn sub(self, sub: u32) -> Msg {
        debug_assert!(sub <= MAX_SUB);
        Msg { sub, ..self }
    }
}

#[derive(Clone, Copy)]
pub(crate) enum Local {
    Copy(Buf, Buf),
    /// inout = input op inout
    Combine(Buf, Buf),
    /// acc = acc op later (clobbers later)
    LowerFirst(Buf, Buf),
}

impl Local {
    fn run(&self, red: Option<&Reduction>) {
        match self {
            Local::Copy(src, dst) => src.copy_to(dst, src.len()),
            Local::Combine(input, inout) => {
                if let Some(r) = red {
                    with_pair(input, inout, |a, b| r.apply(a, b));
                }
            }
            Local::LowerFirst(acc, later) => {
                if let Some(r) = red {
                    if r.commutative() {
                        with_pair(later, acc, |a, b| r.apply(a, b));
                    } else {
                        with_pair(acc, later, |a, b| r.apply(a, b));
                        later.copy_to(acc, acc.len());
                    }
                }
            }
        }
    }

    fn reduces(&self) -> bool {
        !matches!(self, Local::Copy(..))
    }
}

#[derive(Default)]
struct Round {
    msgs: Vec<Msg>,
}

/// A nonblocking collective being built.
pub(crate) struct Plan {
    rounds: Vec<Round>,
    after: Vec<Vec<Local>>,
    scratch: Vec<Scratch>,
    /// Types of the typed buffers the plan touches.
    keep: Vec<Arc<Type>>,
    /// Scratch copies to unpack into user buffers at the end.
    outs: Vec<(Buf, Buf)>,
    red: Option<Reduction>,
    /// The op mark every message carries and every received one must carry (`MARK_BITS`).
    mark: i32,
    /// Job ranks of the local group (plain ranks) and of the remote group.
    peers: Vec<u32>,
    remote: Vec<u32>,
    /// The VCI of every local peer (they differ on a stream communicator) and of this
    /// process (remote peers, on an intercommunicator, use the same).
    peer_vcis: Vec<u8>,
    vci: usize,
    context: u32,
    tag: i32,
    local_tag: i32,
    pub rank: u32,
    pub size: u32,
    pub remote_size: u32,
    /// This rank's own buffers showed that the ranks' sizes differ: the plan still runs
    /// (its sends go empty), so no peer waits for this rank, and fails with
    /// `MPI_ERR_TRUNCATE`.
    differs: bool,
}

thread_local! {
    /// The sequence number a persistent collective fixed at its init (`with_seq`).
    static FIXED_SEQ: std::cell::Cell<Option<u32>> = const { std::cell::Cell::new(None) };
}

/// Build a collective with sequence number `seq` instead of the next one (persistent
/// collectives are matched in the order of their init calls, not of their starts).
pub(crate) fn with_seq<R>(seq: u32, f: impl FnOnce() -> R) -> R {
    FIXED_SEQ.with(|s| s.set(Some(seq)));
    let r = f();
    FIXED_SEQ.with(|s| s.set(None));
    r
}

impl Plan {
    pub(crate) fn new(comm: &Comm, red: Option<&Reduction>) -> Plan {
        let seq = FIXED_SEQ
            .with(|s| s.take())
            .unwrap_or_else(|| comm.coll_seq.fetch_add(1, Ordering::Relaxed));
        // Above the blocking collectives' tags (and their flags), distinct for 2^18
        // outstanding ones, below the op mark.
        let tag = super::tag::PLAN_BASE + (seq & SEQ_BITS) as i32;
        let inter = comm.is_inter();
        Plan {
            rounds: Vec::new(),
            after: Vec::new(),
            scratch: Vec::new(),
            keep: Vec::new(),
            outs: Vec::new(),
            red: red.cloned(),
            mark: red.map_or(0, |r| i32::from(r.mark()) << MARK_SHIFT),
            peers: comm.group.members().to_vec(),
            peer_vcis: (0..comm.size())
                .map(|r| {
                    if inter {
                        comm.vci as u8
                    } else {
                        comm.peer_vci(r)
                    }
                })
                .collect(),
            vci: comm.vci,
            remote: comm
                .remote
                .as_ref()
                .map_or(Vec::new(), |g| g.members().to_vec()),
            context: comm.collective_context(),
            tag,
            local_tag: if inter { tag | LOCAL_TAG } else { tag },
            rank: comm.rank,
            size: comm.size(),
            remote_size: comm.peer_size(),
            differs: false,
        }
    }

    pub(crate) fn scratch(&mut self, len: usize) -> Buf {
        let mut s = Scratch::new(len);
        let b = s.buf();
        self.scratch.push(s);
        b
    }

    /// A contiguous copy of `src` taken now.
    pub(crate) fn copy_of(&mut self, src: &Buf) -> Buf {
        let mut s = Scratch::copy_of(src);
        let b = s.buf();
        self.scratch.push(s);
        b
    }

    /// `src` as contiguous bytes: itself, or a packed copy taken now.
    pub(crate) fn flat_in(&mut self, src: &Buf) -> Buf {
        if src.is_contiguous() {
            *src
        } else {
            self.copy_of(src)
        }
    }

    /// `dst` as contiguous bytes that the plan writes: itself, or a scratch (holding the
    /// packed current contents when `load`) unpacked into `dst` when the plan ends.
    pub(crate) fn flat_out(&mut self, dst: &Buf, load: bool) -> Buf {
        if dst.is_contiguous() {
            return *dst;
        }
        let s = if load {
            self.copy_of(dst)
        } else {
            self.scratch(dst.len())
        };
        self.keep_buf(dst);
        self.outs.push((s, *dst));
        s
    }

    fn keep_buf(&mut self, b: &Buf) {
        if let Some(t) = b.keep() {
            self.keep.push(t);
        }
    }

    pub(crate) fn round(&mut self, msgs: Vec<Msg>, after: Vec<Local>) {
        for m in &msgs {
            self.keep_buf(&m.buf);
        }
        for l in &after {
            let (Local::Copy(a, b) | Local::Combine(a, b) | Local::LowerFirst(a, b)) = l;
            self.keep_buf(a);
            self.keep_buf(b);
        }
        self.rounds.push(Round { msgs });
        self.after.push(after);
    }

    /// The sizes differ between the ranks (see `differs`).
    pub(crate) fn sizes_differ(&mut self) {
        self.differs = true;
    }

    /// This rank's own block from `src` to `dst` at the call, when their sizes agree.
    fn copy_if_same_size(&mut self, src: &Buf, dst: &Buf) {
        if src.len() == dst.len() {
            src.copy_to(dst, src.len());
        } else {
            self.sizes_differ();
        }
    }

    pub(crate) fn start(mut self, comm: &Comm, owner: usize) -> ReqId {
        if !self.outs.is_empty() {
            let copies = std::mem::take(&mut self.outs)
                .into_iter()
                .map(|(s, d)| Local::Copy(s, d))
                .collect();
            self.round(vec![], copies);
        }
        let inst = &comm.session.instance;
        let user = self.red.as_ref().is_some_and(|r| r.is_user());
        let after = Arc::new(std::mem::take(&mut self.after));
        let shared = user.then(|| {
            let s = Arc::new(UserWork {
                phase: AtomicUsize::new(RUN),
                after: after.clone(),
                red: self.red.clone(),
            });
            polled::register(s.clone());
            s
        });
        let status = Status {
            error: if self.differs {
                ErrorClass::Truncate as i32
            } else {
                0
            },
            sizes_differ: self.differs,
            ..Status::default()
        };
        let runner = Runner {
            plan: self,
            after,
            shared,
            awaiting: false,
            next: 0,
            pending: Vec::new(),
            status,
        };
        progress::start_schedule(inst, comm.vci, owner, Box::new(runner))
    }
}

// Phases of the user-op hand-off.
const RUN: usize = 0;
const BUSY: usize = 1;
const LOCAL_DONE: usize = 2;
const FINISHED: usize = 3;
/// `LOCAL + i`: round i's local work waits for the polled item.
const LOCAL: usize = 4;

/// The local work of a plan with a user reduction operator, run outside every lock.
struct UserWork {
    phase: AtomicUsize,
    after: Arc<Vec<Vec<Local>>>,
    red: Option<Reduction>,
}

impl Polled for UserWork {
    fn poll(&self) -> bool {
        let p = self.phase.load(Ordering::Acquire);
        if p == FINISHED {
            return true;
        }
        if p >= LOCAL
            && self
                .phase
                .compare_exchange(p, BUSY, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        {
            // The schedule waits for LOCAL_DONE, so the scratch these buffers name stays
            // alive while the operator runs.
            for l in &self.after[p - LOCAL] {
                l.run(self.red.as_ref());
            }
            self.phase.store(LOCAL_DONE, Ordering::Release);
        }
        false
    }
}

struct Runner {
    plan: Plan,
    after: Arc<Vec<Vec<Local>>>,
    shared: Option<Arc<UserWork>>,
    /// Waiting for the polled item to run a round's local work.
    awaiting: bool,
    /// The round to start next; `pending` holds the started round's requests, with the
    /// length each receive expects (a shorter message: the ranks passed different sizes).
    next: usize,
    pending: Vec<(ReqId, Option<usize>)>,
    status: Status,
}

impl Runner {
    fn start_round(&mut self, cx: &mut Cx<'_>, i: usize) {
        let p = &self.plan;
        for m in &p.rounds[i].msgs {
            let base = if m.remote { p.tag } else { p.local_tag };
            let tag = base | ((m.sub as i32) << SUB_SHIFT);
            if m.send {
                let dest = if m.remote { &p.remote } else { &p.peers }[m.peer as usize];
                let vci = if m.remote {
                    p.vci as u8
                } else {
                    p.peer_vcis[m.peer as usize]
                };
                // After a failed step (e.g. sizes that differ between the ranks) an empty
                // message goes instead, so that the ranks downstream fail too rather than
                // take this rank's data for the root's; after another op, with a mark that
                // says so.
                let (buf, mark) = match self.status.error {
                    0 => (m.buf, p.mark),
                    e if e == ErrorClass::Op as i32 => (Buf::EMPTY, FAILED_OP_MARK),
                    _ => (Buf::EMPTY, p.mark),
                };
                let target = Target::new(p.context, p.rank, dest, tag | mark, vci);
                match cx.isend(target, buf, SendMode::Standard) {
                    Ok(id) => self.pending.push((id, None)),
                    Err(e) => self.status.error = e.class(),
                }
            } else {
                let ignore = MARK_BITS;
                let pattern = Pattern::new(
                    p.context,
                    SourceSel::Rank(m.peer),
                    TagSel::Masked { tag, ignore },
                );
                self.pending
                    .push((cx.irecv(pattern, m.buf), Some(m.buf.len())));
            }
        }
    }
}

impl schedule::Schedule for Runner {
    fn step(&mut self, cx: &mut Cx<'_>) -> Step {
        loop {
            if self.awaiting {
                let shared = self.shared.as_ref().expect("user work is shared");
                if shared.phase.load(Ordering::Acquire) != LOCAL_DONE {
                    return Step::Pending;
                }
                shared.phase.store(RUN, Ordering::Release);
                self.awaiting = false;
            } else {
                if !self.pending.iter().all(|&(id, _)| cx.is_complete(id)) {
                    return Step::Pending;
                }
                for (id, expected) in std::mem::take(&mut self.pending) {
                    if let Some(s) = cx.take(id) {
                        // A message with another op mark (checked first: its size may
                        // differ too), or longer or shorter than expected: the sizes differ.
                        let arrived = s.error == 0 || s.truncated();
                        let other_op = expected.is_some()
                            && arrived
                            && (s.tag ^ self.plan.mark) & MARK_BITS != 0;
                        let differ = expected.is_some()
                            && (s.truncated()
                                || expected
                                    .is_some_and(|len| s.error == 0 && s.bytes < len as u64));
                        if self.status.error == 0 && other_op {
                            self.status.error = ErrorClass::Op as i32;
                        } else if self.status.error == 0 && differ {
                            self.status.error = ErrorClass::Truncate as i32;
                            self.status.sizes_differ = true;
                        } else if self.status.error == 0 {
                            self.status.error = s.error;
                        }
                    }
                }
                if self.next > 0 {
                    let i = self.next - 1;
                    let after = &self.after[i];
                    match &self.shared {
                        Some(sh) if after.iter().any(Local::reduces) => {
                            sh.phase.store(LOCAL + i, Ordering::Release);
                            self.awaiting = true;
                            return Step::Pending;
                        }
                        _ => {
                            for l in after {
                                l.run(self.plan.red.as_ref());
                            }
                        }
                    }
                }
            }
            if self.next == self.plan.rounds.len() {
                if let Some(sh) = &self.shared {
                    sh.phase.store(FINISHED, Ordering::Release);
                }
                return Step::Done(self.status);
            }
            let i = self.next;
            self.next += 1;
            self.start_round(cx, i);
        }
    }
}

/// Wait for a started plan's request (the blocking forms built on plans).
pub(crate) fn block_on(comm: &Comm, id: MpiResult<ReqId>) -> MpiResult<()> {
    let id = id?;
    let done = crate::progress::wait(&comm.session.instance, id);
    done.status.into_result().map(|_| ())
}

// ------------------------------------------------------------------ plans

use super::{PROC_NULL, ROOT};

fn barrier_rounds(p: &mut Plan) {
    let (r, n) = (p.rank, p.size);
    let mut k = 1;
    while k < n {
        p.round(
            vec![
                Msg::recv((r + n - k) % n, Buf::EMPTY),
                Msg::send((r + k) % n, Buf::EMPTY),
            ],
            vec![],
        );
        k <<= 1;
    }
}

pub fn ibarrier(comm: &Comm, owner: usize) -> MpiResult<ReqId> {
    let mut p = Plan::new(comm, None);
    barrier_rounds(&mut p);
    if comm.is_inter() {
        // Everyone here has entered; the leaders tell each other; then release the group.
        if p.rank == 0 {
            p.round(
                vec![
                    Msg::recv_remote(0, Buf::EMPTY),
                    Msg::send_remote(0, Buf::EMPTY),
                ],
                vec![],
            );
        }
        bcast_rounds(&mut p, &Buf::EMPTY, 0, true);
    }
    Ok(p.start(comm, owner))
}

/// Binomial broadcast over the local group (`always`: also for empty buffers, as a release).
fn bcast_rounds(p: &mut Plan, buf: &Buf, root: u32, always: bool) {
    let (r, n) = (p.rank, p.size);
    if n == 1 || (buf.is_empty() && !always) {
        return;
    }
    let vr = (r + n - root) % n;
    let real = |v: u32| (v + root) % n;
    let mut mask = 1;
    while mask < n {
        if vr & mask != 0 {
            p.round(vec![Msg::recv(real(vr - mask), *buf)], vec![]);
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    let mut sends = Vec::new();
    while mask > 0 {
        if vr + mask < n {
            sends.push(Msg::send(real(vr + mask), *buf));
        }
        mask >>= 1;
    }
    p.round(sends, vec![]);
}

pub fn ibcast(comm: &Comm, buf: &Buf, root: u32, owner: usize) -> MpiResult<ReqId> {
    let mut p = Plan::new(comm, None);
    if comm.is_inter() {
        match root {
            PROC_NULL => {}
            ROOT => {
                let msgs = (0..p.remote_size)
                    .map(|j| Msg::send_remote(j, *buf))
                    .collect();
                p.round(msgs, vec![]);
            }
            r => p.round(vec![Msg::recv_remote(r, *buf)], vec![]),
        }
    } else {
        bcast_rounds(&mut p, buf, root, false);
    }
    Ok(p.start(comm, owner))
}

/// Binomial reduce of `acc` (this rank's data, contiguous; the result at the root) over
/// the local group, along a tree rooted at rank 0, whose subtrees are contiguous rank ranges
/// (as an op that is not commutative needs), then from rank 0 to the root. For every op:
/// ranks that pass different ops (a predefined op, a user op, commutative or not) send the
/// same messages and meet each other's op mark; a predefined op to another root than 0 pays
/// one message more than a tree rooted at the root.
fn reduce_rounds(p: &mut Plan, acc: &Buf, root: u32) {
    let (n, r) = (p.size, p.rank);
    let mut mask = 1;
    while mask < n {
        if r & mask != 0 {
            p.round(vec![Msg::send(r - mask, *acc)], vec![]);
            break;
        }
        if r + mask < n {
            let tmp = p.scratch(acc.len());
            p.round(
                vec![Msg::recv(r + mask, tmp)],
                vec![Local::LowerFirst(*acc, tmp)],
            );
        }
        mask <<= 1;
    }
    if root != 0 {
        if r == 0 {
            p.round(vec![Msg::send(root, *acc)], vec![]);
        } else if r == root {
            p.round(vec![Msg::recv(0, *acc)], vec![]);
        }
    }
}

pub fn ireduce(
    comm: &Comm,
    send: Option<&Buf>,
    recv: &Buf,
    red: &Reduction,
    root: u32,
    owner: usize,
) -> MpiResult<ReqId> {
    let mut p = Plan::new(comm, Some(red));
    if comm.is_inter() {
        match root {
            PROC_NULL => {}
            ROOT => p.round(vec![Msg::recv_remote(0, *recv)], vec![]),
            r => {
                let acc = p.copy_of(send.unwrap_or(&Buf::EMPTY));
                if !acc.is_empty() {
                    reduce_rounds(&mut p, &acc, 0);
                }
                if p.rank == 0 {
                    p.round(vec![Msg::send_remote(r, acc)], vec![]);
                }
            }
        }
        return Ok(p.start(comm, owner));
    }
    let is_root = p.rank == root;
    let acc = if is_root {
        let acc = p.flat_out(recv, send.is_none());
        if let Some(s) = send {
            p.copy_if_same_size(s, &acc);
        }
        acc
    } else {
        p.copy_of(send.unwrap_or(recv))
    };
    if p.size > 1 && !acc.is_empty() {
        reduce_rounds(&mut p, &acc, root);
        // The root's verdict, an empty message down the tree with its op mark (or, after it
        // failed on another op, a mark no op has): every rank of an ireduce whose ranks
        // passed different ops fails, not only those that received another rank's data
        // (MPICH's `errors/coll/reduceop -nonblocking`).
        bcast_rounds(&mut p, &Buf::EMPTY, root, true);
    }
    Ok(p.start(comm, owner))
}

fn allreduce_rounds(p: &mut Plan, acc: &Buf) {
    let (r, n) = (p.rank, p.size);
    let pof2 = pof2_floor(n);
    let rem = n - pof2;
    let real = |v: u32| if v < rem { 2 * v + 1 } else { v + rem };
    let newrank = if r < 2 * rem {
        if r % 2 == 0 {
            p.round(vec![Msg::send(r + 1, *acc)], vec![]);
            None
        } else {
            let tmp = p.scratch(acc.len());
            p.round(vec![Msg::recv(r - 1, tmp)], vec![Local::Combine(tmp, *acc)]);
            Some(r / 2)
        }
    } else {
        Some(r - rem)
    };
    if let Some(nr) = newrank {
        let mut mask = 1;
        while mask < pof2 {
            let partner = nr ^ mask;
            let tmp = p.scratch(acc.len());
            let after = if partner < nr {
                vec![Local::Combine(tmp, *acc)]
            } else {
                vec![Local::LowerFirst(*acc, tmp)]
            };
            p.round(
                vec![
                    Msg::recv(real(partner), tmp),
                    Msg::send(real(partner), *acc),
                ],
                after,
            );
            mask <<= 1;
        }
    }
    if r < 2 * rem {
        if r % 2 == 1 {
            p.round(vec![Msg::send(r - 1, *acc)], vec![]);
        } else {
            p.round(vec![Msg::recv(r + 1, *acc)], vec![]);
        }
    }
}

pub fn iallreduce(
    comm: &Comm,
    send: Option<&Buf>,
    recv: &Buf,
    red: &Reduction,
    owner: usize,
) -> MpiResult<ReqId> {
    let mut p = Plan::new(comm, Some(red));
    if comm.is_inter() {
        // Reduce each group to its rank 0, swap the results, broadcast in each group.
        let s = send.unwrap_or(&Buf::EMPTY);
        let acc = p.copy_of(s);
        if !acc.is_empty() {
            reduce_rounds(&mut p, &acc, 0);
        }
        let out = p.flat_out(recv, false);
        if p.rank == 0 {
            p.round(
                vec![Msg::recv_remote(0, out), Msg::send_remote(0, acc)],
                vec![],
            );
        }
        bcast_rounds(&mut p, &out, 0, false);
        return Ok(p.start(comm, owner));
    }
    let acc = p.flat_out(recv, send.is_none());
    if let Some(s) = send {
        p.copy_if_same_size(s, &acc);
    }
    if p.size > 1 && !acc.is_empty() {
        allreduce_rounds(&mut p, &acc);
    }
    Ok(p.start(comm, owner))
}

fn blocks(buf: &Buf, n: usize) -> Vec<Buf> {
    let b = if n == 0 { 0 } else { buf.len() / n };
    (0..n).map(|i| buf.slice(i * b, b)).collect()
}

/// The send and receive buffers of this rank's call do not match (checked before the plan
/// starts; the collectives whose plans cannot run with them).
fn mismatch_at_call(what: &str) -> MpiError {
    MpiError::new(
        ErrorClass::Truncate,
        format!("{what}: the buffers do not match"),
    )
}

/// Which way the parts of a rooted collective travel: into the root or out of it.
#[derive(Clone, Copy, PartialEq)]
enum Flow {
    Gather,
    Scatter,
}

impl Flow {
    /// The message the root exchanges with `peer` (in the remote group when `remote`).
    fn at_root(self, peer: u32, remote: bool, buf: Buf) -> Msg {
        Msg {
            send: self == Flow::Scatter,
            peer,
            remote,
            sub: 0,
            buf,
        }
    }

    /// The message a non-root rank exchanges with the root.
    fn at_leaf(self, root: u32, remote: bool, buf: Buf) -> Msg {
        Msg {
            send: self == Flow::Gather,
            ..self.at_root(root, remote, buf)
        }
    }
}

/// The round of a rooted gather or scatter: the root exchanges `parts` with every other rank
/// (every remote rank on an intercommunicator) and copies its own part to or from `mine` at
/// the call; any other rank exchanges `mine` with the root.
fn rooted_round(
    p: &mut Plan,
    comm: &Comm,
    flow: Flow,
    mine: Option<&Buf>,
    parts: &[Buf],
    root: u32,
) {
    let leaf = |remote| flow.at_leaf(root, remote, mine.cloned().unwrap_or(Buf::EMPTY));
    if comm.is_inter() {
        let msgs = match root {
            PROC_NULL => return,
            ROOT => (0..p.remote_size)
                .map(|j| flow.at_root(j, true, parts[j as usize]))
                .collect(),
            _ => vec![leaf(true)],
        };
        p.round(msgs, vec![]);
        return;
    }
    if p.rank != root {
        p.round(vec![leaf(false)], vec![]);
        return;
    }
    if let Some(m) = mine {
        let own = &parts[root as usize];
        match flow {
            Flow::Gather => p.copy_if_same_size(m, own),
            Flow::Scatter => p.copy_if_same_size(own, m),
        }
    }
    let msgs = (0..p.size)
        .filter(|&i| i != root)
        .map(|i| flow.at_root(i, false, parts[i as usize]))
        .collect();
    p.round(msgs, vec![]);
}

pub fn igatherv(
    comm: &Comm,
    send: Option<&Buf>,
    parts: &[Buf],
    root: u32,
    owner: usize,
) -> MpiResult<ReqId> {
    planned(comm, owner, |p| {
        rooted_round(p, comm, Flow::Gather, send, parts, root);
        Ok(())
    })
}

/// Whether this rank holds the root's buffer of a rooted collective.
fn is_root(comm: &Comm, root: u32) -> bool {
    if comm.is_inter() {
        root == ROOT
    } else {
        comm.rank == root
    }
}

pub fn igather(
    comm: &Comm,
    send: Option<&Buf>,
    recv: &Buf,
    root: u32,
    owner: usize,
) -> MpiResult<ReqId> {
    irooted(comm, Flow::Gather, recv, send, root, owner)
}

/// A gather or scatter of equal blocks: `whole` the root's buffer, `mine` this rank's block
/// (`None` at the root for `MPI_IN_PLACE`).
fn irooted(
    comm: &Comm,
    flow: Flow,
    whole: &Buf,
    mine: Option<&Buf>,
    root: u32,
    owner: usize,
) -> MpiResult<ReqId> {
    planned(comm, owner, |p| {
        if !is_root(comm, root) {
            rooted_round(p, comm, flow, mine, &[], root);
            return Ok(());
        }
        // A scatter's parts are packed at the call (sends read them only once the round
        // starts); a gather's are unpacked at the end.
        let flat = match flow {
            Flow::Gather => p.flat_out(whole, mine.is_none()),
            Flow::Scatter => p.flat_in(whole),
        };
        let parts = blocks(&flat, p.remote_size as usize);
        rooted_round(p, comm, flow, mine, &parts, root);
        Ok(())
    })
}

pub fn iscatterv(
    comm: &Comm,
    parts: &[Buf],
    recv: Option<&Buf>,
    root: u32,
    owner: usize,
) -> MpiResult<ReqId> {
    planned(comm, owner, |p| {
        rooted_round(p, comm, Flow::Scatter, recv, parts, root);
        Ok(())
    })
}

pub fn iscatter(
    comm: &Comm,
    send: &Buf,
    recv: Option<&Buf>,
    root: u32,
    owner: usize,
) -> MpiResult<ReqId> {
    irooted(comm, Flow::Scatter, send, recv, root, owner)
}

fn allgatherv_rounds(
    p: &mut Plan,
    comm: &Comm,
    send: Option<&Buf>,
    parts: &[Buf],
) -> MpiResult<()> {
    if comm.is_inter() {
        let s = send.cloned().unwrap_or(Buf::EMPTY);
        remote_exchange(p, |j| parts[j], |_| s);
        return Ok(());
    }
    let (r, n) = (p.rank as usize, p.size as usize);
    if let Some(s) = send {
        p.copy_if_same_size(s, &parts[r]);
    }
    let right = ((r + 1) % n) as u32;
    let left = ((r + n - 1) % n) as u32;
    for step in 0..n.saturating_sub(1) {
        let s = (r + n - step) % n;
        let d = (r + n - step - 1) % n;
        p.round(
            vec![Msg::recv(left, parts[d]), Msg::send(right, parts[s])],
            vec![],
        );
    }
    Ok(())
}

/// One round with every rank of the remote group: receive `recv(j)` from and send `send(j)`
/// to each rank j.
fn remote_exchange(p: &mut Plan, recv: impl Fn(usize) -> Buf, send: impl Fn(usize) -> Buf) {
    let m = p.remote_size;
    let mut msgs: Vec<Msg> = (0..m)
        .map(|j| Msg::recv_remote(j, recv(j as usize)))
        .collect();
    msgs.extend((0..m).map(|j| Msg::send_remote(j, send(j as usize))));
    p.round(msgs, vec![]);
}

/// A plan without reduction that `build` fills, started for `owner`.
fn planned(
    comm: &Comm,
    owner: usize,
    build: impl FnOnce(&mut Plan) -> MpiResult<()>,
) -> MpiResult<ReqId> {
    let mut p = Plan::new(comm, None);
    build(&mut p)?;
    Ok(p.start(comm, owner))
}

pub fn iallgatherv(
    comm: &Comm,
    send: Option<&Buf>,
    parts: &[Buf],
    owner: usize,
) -> MpiResult<ReqId> {
    planned(comm, owner, |p| allgatherv_rounds(p, comm, send, parts))
}

pub fn iallgather(comm: &Comm, send: Option<&Buf>, recv: &Buf, owner: usize) -> MpiResult<ReqId> {
    planned(comm, owner, |p| {
        let flat = p.flat_out(recv, send.is_none());
        let parts = blocks(&flat, p.remote_size as usize);
        allgatherv_rounds(p, comm, send, &parts)
    })
}

fn alltoallv_rounds(
    p: &mut Plan,
    comm: &Comm,
    send: Option<&[Buf]>,
    recv: &[Buf],
) -> MpiResult<()> {
    let (r, n) = (p.rank as usize, p.size as usize);
    if comm.is_inter() {
        let send = send.unwrap_or(&[]);
        remote_exchange(p, |j| recv[j], |j| send[j]);
        return Ok(());
    }
    match send {
        Some(send) => {
            p.copy_if_same_size(&send[r], &recv[r]);
            let mut msgs: Vec<Msg> = (1..n)
                .map(|s| (r + n - s) % n)
                .map(|q| Msg::recv(q as u32, recv[q]))
                .collect();
            msgs.extend(
                (1..n)
                    .map(|s| (r + s) % n)
                    .map(|q| Msg::send(q as u32, send[q])),
            );
            p.round(msgs, vec![]);
        }
        None => {
            // In place: pair by pair in one global order, each sending a copy taken now.
            for peer in super::in_place_peers(n, r) {
                let copy = p.copy_of(&recv[peer]);
                p.round(
                    vec![
                        Msg::recv(peer as u32, recv[peer]),
                        Msg::send(peer as u32, copy),
                    ],
                    vec![],
                );
            }
        }
    }
    Ok(())
}

pub fn ialltoallv(
    comm: &Comm,
    send: Option<&[Buf]>,
    recv: &[Buf],
    owner: usize,
) -> MpiResult<ReqId> {
    planned(comm, owner, |p| alltoallv_rounds(p, comm, send, recv))
}

pub fn ialltoall(comm: &Comm, send: Option<&Buf>, recv: &Buf, owner: usize) -> MpiResult<ReqId> {
    planned(comm, owner, |p| {
        let n = p.remote_size as usize;
        let flat = p.flat_out(recv, send.is_none());
        let recv_parts = blocks(&flat, n);
        let Some(s) = send else {
            return alltoallv_rounds(p, comm, None, &recv_parts);
        };
        // Intercommunicators: each direction has its own counts.
        if s.len() != recv.len() && !comm.is_inter() {
            p.sizes_differ();
        }
        let sflat = p.flat_in(s);
        alltoallv_rounds(p, comm, Some(&blocks(&sflat, n)), &recv_parts)
    })
}

/// Scatter `whole` (contiguous, at local rank 0) in blocks of `sizes` over the local group.
fn scatter_rounds(p: &mut Plan, whole: &Buf, out: &Buf, offs: &[usize], sizes: &[usize]) {
    if p.rank == 0 {
        let msgs = (1..p.size)
            .map(|i| Msg::send(i, whole.slice(offs[i as usize], sizes[i as usize])))
            .collect();
        p.round(msgs, vec![Local::Copy(whole.slice(0, sizes[0]), *out)]);
    } else {
        p.round(vec![Msg::recv(0, *out)], vec![]);
    }
}

pub fn ireduce_scatter(
    comm: &Comm,
    input: &Buf,
    output: &Buf,
    red: &Reduction,
    sizes: &[usize],
    owner: usize,
) -> MpiResult<ReqId> {
    let mut p = Plan::new(comm, Some(red));
    let (r, n) = (p.rank as usize, p.size as usize);
    let mut offs = vec![0usize];
    for s in sizes {
        offs.push(offs.last().copied().unwrap_or(0) + s);
    }
    let total = offs[n];
    if input.len() != total || output.len() != sizes[r] {
        return Err(mismatch_at_call("reduce_scatter"));
    }
    let out = p.flat_out(output, false);
    if comm.is_inter() {
        // Reduce the whole vector to rank 0 of each group, swap, scatter in each group.
        let acc = p.copy_of(input);
        if total > 0 {
            reduce_rounds(&mut p, &acc, 0);
        }
        let whole = p.scratch(total);
        if p.rank == 0 {
            p.round(
                vec![Msg::recv_remote(0, whole), Msg::send_remote(0, acc)],
                vec![],
            );
        }
        scatter_rounds(&mut p, &whole, &out, &offs, sizes);
        return Ok(p.start(comm, owner));
    }
    // Pairwise exchange for every op (as `reduce::reduce_scatter`): each rank reduces its
    // own block, in rank order for an op that is not commutative.
    let inp = p.flat_in(input);
    let acc = p.copy_of(&inp.slice(offs[r], sizes[r]));
    let right = p.scratch(sizes[r]);
    let ordered = !red.commutative();
    for (dst, src, side) in pairwise_steps(r, n) {
        let tmp = p.scratch(sizes[r]);
        let after = match side {
            Side::RightFirst if ordered => Local::Copy(tmp, right),
            Side::Right if ordered => Local::Combine(tmp, right),
            _ => Local::Combine(tmp, acc),
        };
        p.round(
            vec![
                Msg::recv(src as u32, tmp),
                Msg::send(dst as u32, inp.slice(offs[dst], sizes[dst])),
            ],
            vec![after],
        );
    }
    let mut last = vec![Local::Copy(acc, out)];
    if ordered && r + 1 < n {
        last.insert(0, Local::LowerFirst(acc, right));
    }
    p.round(vec![], last);
    Ok(p.start(comm, owner))
}

fn iprefix(
    comm: &Comm,
    send: Option<&Buf>,
    recv: &Buf,
    red: &Reduction,
    inclusive: bool,
    owner: usize,
) -> MpiResult<ReqId> {
    let mut p = Plan::new(comm, Some(red));
    let mine = send.unwrap_or(recv);
    if mine.len() != recv.len() {
        return Err(mismatch_at_call("scan"));
    }
    let partial = p.copy_of(mine);
    let out = p.flat_out(recv, true);
    if inclusive {
        if let Some(s) = send {
            s.copy_to(&out, s.len());
        }
    }
    let (r, n) = (p.rank, p.size);
    let mut have = inclusive;
    let mut mask = 1;
    while mask < n && !recv.is_empty() {
        let dst = r ^ mask;
        if dst < n {
            let tmp = p.scratch(recv.len());
            let mut after = Vec::new();
            if dst < r {
                if have {
                    after.push(Local::Combine(tmp, out));
                } else {
                    after.push(Local::Copy(tmp, out));
                    have = true;
                }
                after.push(Local::Combine(tmp, partial));
            } else {
                after.push(Local::LowerFirst(partial, tmp));
            }
            p.round(vec![Msg::recv(dst, tmp), Msg::send(dst, partial)], after);
        }
        mask <<= 1;
    }
    Ok(p.start(comm, owner))
}

pub fn iscan(
    comm: &Comm,
    send: Option<&Buf>,
    recv: &Buf,
    red: &Reduction,
    owner: usize,
) -> MpiResult<ReqId> {
    iprefix(comm, send, recv, red, true, owner)
}

pub fn iexscan(
    comm: &Comm,
    send: Option<&Buf>,
    recv: &Buf,
    red: &Reduction,
    owner: usize,
) -> MpiResult<ReqId> {
    iprefix(comm, send, recv, red, false, owner)
}
