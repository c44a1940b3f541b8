//! Nonblocking collectives: each is a plan of rounds (messages to start, then local copies
//! and reductions once they all complete) run by the VCI's progress pass as an internal
//! schedule (`progress::schedule`), so it advances while the user waits on anything.
//!
//! Data that exists when the call is made is copied at the call (in the caller's thread);
//! everything later happens in rounds. Each nonblocking collective on a communicator gets a
//! tag from the communicator's sequence counter, so any number can be outstanding. Rounds
//! run predefined reductions only: a user op must not run under the VCI lock, so those
//! collectives run to completion at the call (see `run_or_block`).
#![forbid(unsafe_code)]

use std::sync::atomic::Ordering;

use super::pof2_floor;
use crate::datatype::access::{with_pair, Scratch};
use crate::datatype::Buf;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::object::Comm;
use crate::op::Reduction;
use crate::progress::schedule::{self, Cx, Step};
use crate::pt2pt::engine::{SendMode, Target};
use crate::pt2pt::{Pattern, SourceSel, TagSel};
use crate::request::{ReqId, Status};

enum Msg {
    Send(u32, Buf),
    Recv(u32, Buf),
}

enum Local {
    Copy(Buf, Buf),
    /// inout = input op inout
    Combine(Buf, Buf),
    /// acc = acc op later (clobbers later)
    LowerFirst(Buf, Buf),
}

#[derive(Default)]
struct Round {
    msgs: Vec<Msg>,
    after: Vec<Local>,
}

/// A nonblocking collective being built.
pub(crate) struct Plan {
    rounds: Vec<Round>,
    scratch: Vec<Scratch>,
    red: Option<Reduction>,
    peers: Vec<u32>,
    context: u32,
    my_rank: u32,
    tag: i32,
    pub rank: u32,
    pub size: u32,
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
    fn new(comm: &Comm, red: Option<&Reduction>) -> Plan {
        let seq = FIXED_SEQ
            .with(|s| s.take())
            .unwrap_or_else(|| comm.coll_seq.fetch_add(1, Ordering::Relaxed));
        Plan {
            rounds: Vec::new(),
            scratch: Vec::new(),
            red: red.cloned(),
            peers: comm.group.members().to_vec(),
            context: comm.collective_context(),
            my_rank: comm.rank,
            // Above the blocking collectives' tags, distinct for 2^30 outstanding ones.
            tag: 64 + (seq & 0x3fff_ffff) as i32,
            rank: comm.rank,
            size: comm.size(),
        }
    }

    fn scratch(&mut self, len: usize) -> Buf {
        let mut s = Scratch::new(len);
        let b = s.buf();
        self.scratch.push(s);
        b
    }

    fn copy_of(&mut self, src: &Buf) -> Buf {
        let mut s = Scratch::copy_of(src);
        let b = s.buf();
        self.scratch.push(s);
        b
    }

    fn round(&mut self, msgs: Vec<Msg>, after: Vec<Local>) {
        self.rounds.push(Round { msgs, after });
    }

    fn start(self, comm: &Comm, owner: usize) -> ReqId {
        let inst = &comm.session.instance;
        let runner = Runner {
            plan: self,
            next: 0,
            pending: Vec::new(),
            status: Status::default(),
        };
        schedule::start(inst, comm.vci, owner, Box::new(runner))
    }
}

struct Runner {
    plan: Plan,
    /// The round to start next; `pending` holds the started round's requests.
    next: usize,
    pending: Vec<ReqId>,
    status: Status,
}

impl Runner {
    fn start_round(&mut self, cx: &mut Cx<'_>, i: usize) {
        let p = &self.plan;
        for m in &p.rounds[i].msgs {
            match m {
                Msg::Send(peer, buf) => {
                    let target = Target {
                        context: p.context,
                        my_rank: p.my_rank,
                        dest: p.peers[*peer as usize],
                        tag: p.tag,
                    };
                    match cx.isend(target, buf.clone(), SendMode::Standard) {
                        Ok(id) => self.pending.push(id),
                        Err(e) => self.status.error = e.class(),
                    }
                }
                Msg::Recv(peer, buf) => {
                    let pattern = Pattern {
                        context: p.context,
                        source: SourceSel::Rank(*peer),
                        tag: TagSel::Tag(p.tag),
                    };
                    self.pending.push(cx.irecv(pattern, buf.clone()));
                }
            }
        }
    }

    fn finish_round(&mut self, i: usize) {
        let red = self.plan.red.as_ref();
        for l in &self.plan.rounds[i].after {
            match l {
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
    }
}

impl schedule::Schedule for Runner {
    fn step(&mut self, cx: &mut Cx<'_>) -> Step {
        loop {
            if !self.pending.iter().all(|&id| cx.is_complete(id)) {
                return Step::Pending;
            }
            for id in std::mem::take(&mut self.pending) {
                if let Some(s) = cx.take(id) {
                    if s.error != 0 && self.status.error == 0 {
                        self.status.error = s.error;
                    }
                }
            }
            if self.next > 0 {
                self.finish_round(self.next - 1);
            }
            if self.next == self.plan.rounds.len() {
                return Step::Done(self.status);
            }
            let i = self.next;
            self.next += 1;
            self.start_round(cx, i);
        }
    }
}

// ------------------------------------------------------------------ plans

pub fn ibarrier(comm: &Comm, owner: usize) -> MpiResult<ReqId> {
    let mut p = Plan::new(comm, None);
    let (r, n) = (p.rank, p.size);
    let mut k = 1;
    while k < n {
        p.round(
            vec![
                Msg::Recv((r + n - k) % n, Buf::EMPTY),
                Msg::Send((r + k) % n, Buf::EMPTY),
            ],
            vec![],
        );
        k <<= 1;
    }
    Ok(p.start(comm, owner))
}

fn bcast_rounds(p: &mut Plan, buf: &Buf, root: u32) {
    let (r, n) = (p.rank, p.size);
    let vr = (r + n - root) % n;
    let real = |v: u32| (v + root) % n;
    let mut mask = 1;
    while mask < n {
        if vr & mask != 0 {
            p.round(vec![Msg::Recv(real(vr - mask), buf.clone())], vec![]);
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    let mut sends = Vec::new();
    while mask > 0 {
        if vr + mask < n {
            sends.push(Msg::Send(real(vr + mask), buf.clone()));
        }
        mask >>= 1;
    }
    p.round(sends, vec![]);
}

pub fn ibcast(comm: &Comm, buf: &Buf, root: u32, owner: usize) -> MpiResult<ReqId> {
    let mut p = Plan::new(comm, None);
    if p.size > 1 && !buf.is_empty() {
        bcast_rounds(&mut p, buf, root);
    }
    Ok(p.start(comm, owner))
}

/// Binomial reduce of `acc` (this rank's data; the result at the root).
fn reduce_rounds(p: &mut Plan, acc: &Buf, commutative: bool, root: u32) {
    let n = p.size;
    let tree_root = if commutative { root } else { 0 };
    let vr = (p.rank + n - tree_root) % n;
    let real = |v: u32| (v + tree_root) % n;
    let mut mask = 1;
    while mask < n {
        if vr & mask != 0 {
            p.round(vec![Msg::Send(real(vr - mask), acc.clone())], vec![]);
            break;
        }
        if vr + mask < n {
            let tmp = p.scratch(acc.len());
            p.round(
                vec![Msg::Recv(real(vr + mask), tmp.clone())],
                vec![Local::LowerFirst(acc.clone(), tmp)],
            );
        }
        mask <<= 1;
    }
    if tree_root != root {
        if p.rank == tree_root {
            p.round(vec![Msg::Send(root, acc.clone())], vec![]);
        } else if p.rank == root {
            p.round(vec![Msg::Recv(tree_root, acc.clone())], vec![]);
        }
    }
}

/// Run a reduction with a user op to completion now (user code never runs under the VCI
/// lock); its request is complete from the start.
fn run_or_block(
    comm: &Comm,
    red: &Reduction,
    owner: usize,
    blocking: impl FnOnce() -> MpiResult<()>,
) -> Option<MpiResult<ReqId>> {
    if !red.is_user() {
        return None;
    }
    Some(blocking().map(|_| {
        crate::progress::completed(&comm.session.instance, comm.vci, Status::default(), owner)
    }))
}

pub fn ireduce(
    comm: &Comm,
    send: Option<&Buf>,
    recv: &Buf,
    red: &Reduction,
    root: u32,
    owner: usize,
) -> MpiResult<ReqId> {
    if let Some(r) = run_or_block(comm, red, owner, || {
        super::reduce(comm, send, recv, red, root)
    }) {
        return r;
    }
    let mut p = Plan::new(comm, Some(red));
    let is_root = p.rank == root;
    if p.size == 1 || (send.map_or(recv.len(), |s| s.len()) == 0) {
        if let (Some(s), true) = (send, is_root) {
            s.copy_to(recv, s.len());
        }
        return Ok(p.start(comm, owner));
    }
    let acc = if is_root {
        if let Some(s) = send {
            s.copy_to(recv, s.len());
        }
        recv.clone()
    } else {
        p.copy_of(send.unwrap_or(recv))
    };
    reduce_rounds(&mut p, &acc, red.commutative(), root);
    Ok(p.start(comm, owner))
}

fn allreduce_rounds(p: &mut Plan, acc: &Buf) {
    let (r, n) = (p.rank, p.size);
    let pof2 = pof2_floor(n);
    let rem = n - pof2;
    let real = |v: u32| if v < rem { 2 * v + 1 } else { v + rem };
    let tmp = p.scratch(acc.len());
    let newrank = if r < 2 * rem {
        if r % 2 == 0 {
            p.round(vec![Msg::Send(r + 1, acc.clone())], vec![]);
            None
        } else {
            p.round(
                vec![Msg::Recv(r - 1, tmp.clone())],
                vec![Local::Combine(tmp.clone(), acc.clone())],
            );
            Some(r / 2)
        }
    } else {
        Some(r - rem)
    };
    if let Some(nr) = newrank {
        let mut mask = 1;
        while mask < pof2 {
            let partner = nr ^ mask;
            let after = if partner < nr {
                Local::Combine(tmp.clone(), acc.clone())
            } else {
                Local::LowerFirst(acc.clone(), tmp.clone())
            };
            p.round(
                vec![
                    Msg::Recv(real(partner), tmp.clone()),
                    Msg::Send(real(partner), acc.clone()),
                ],
                vec![after],
            );
            mask <<= 1;
        }
    }
    if r < 2 * rem {
        if r % 2 == 1 {
            p.round(vec![Msg::Send(r - 1, acc.clone())], vec![]);
        } else {
            p.round(vec![Msg::Recv(r + 1, acc.clone())], vec![]);
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
    if let Some(r) = run_or_block(comm, red, owner, || super::allreduce(comm, send, recv, red)) {
        return r;
    }
    let mut p = Plan::new(comm, Some(red));
    if let Some(s) = send {
        s.copy_to(recv, s.len());
    }
    if p.size > 1 && !recv.is_empty() {
        allreduce_rounds(&mut p, recv);
    }
    Ok(p.start(comm, owner))
}

fn blocks(buf: &Buf, n: usize) -> Vec<Buf> {
    let b = if n == 0 { 0 } else { buf.len() / n };
    (0..n).map(|i| buf.slice(i * b, b)).collect()
}

fn truncated(what: &str) -> MpiError {
    MpiError::new(
        ErrorClass::Truncate,
        format!("{what}: the buffers do not match"),
    )
}

pub fn igatherv(
    comm: &Comm,
    send: Option<&Buf>,
    parts: &[Buf],
    root: u32,
    owner: usize,
) -> MpiResult<ReqId> {
    let mut p = Plan::new(comm, None);
    if p.rank == root {
        if let Some(s) = send {
            let dst = &parts[root as usize];
            if s.len() > dst.len() {
                return Err(truncated("gather"));
            }
            s.copy_to(dst, s.len());
        }
        let msgs = (0..p.size)
            .filter(|&i| i != root)
            .map(|i| Msg::Recv(i, parts[i as usize].clone()))
            .collect();
        p.round(msgs, vec![]);
    } else {
        p.round(
            vec![Msg::Send(root, send.cloned().unwrap_or(Buf::EMPTY))],
            vec![],
        );
    }
    Ok(p.start(comm, owner))
}

pub fn igather(
    comm: &Comm,
    send: Option<&Buf>,
    recv: &Buf,
    root: u32,
    owner: usize,
) -> MpiResult<ReqId> {
    let parts = if comm.rank == root {
        blocks(recv, comm.size() as usize)
    } else {
        Vec::new()
    };
    igatherv(comm, send, &parts, root, owner)
}

pub fn iscatterv(
    comm: &Comm,
    parts: &[Buf],
    recv: Option<&Buf>,
    root: u32,
    owner: usize,
) -> MpiResult<ReqId> {
    let mut p = Plan::new(comm, None);
    if p.rank == root {
        if let Some(r) = recv {
            let src = &parts[root as usize];
            if src.len() > r.len() {
                return Err(truncated("scatter"));
            }
            src.copy_to(r, src.len());
        }
        let msgs = (0..p.size)
            .filter(|&i| i != root)
            .map(|i| Msg::Send(i, parts[i as usize].clone()))
            .collect();
        p.round(msgs, vec![]);
    } else {
        p.round(
            vec![Msg::Recv(root, recv.cloned().unwrap_or(Buf::EMPTY))],
            vec![],
        );
    }
    Ok(p.start(comm, owner))
}

pub fn iscatter(
    comm: &Comm,
    send: &Buf,
    recv: Option<&Buf>,
    root: u32,
    owner: usize,
) -> MpiResult<ReqId> {
    let parts = if comm.rank == root {
        blocks(send, comm.size() as usize)
    } else {
        Vec::new()
    };
    iscatterv(comm, &parts, recv, root, owner)
}

pub fn iallgatherv(
    comm: &Comm,
    send: Option<&Buf>,
    parts: &[Buf],
    owner: usize,
) -> MpiResult<ReqId> {
    let mut p = Plan::new(comm, None);
    let (r, n) = (p.rank as usize, p.size as usize);
    if let Some(s) = send {
        if s.len() != parts[r].len() {
            return Err(truncated("allgather"));
        }
        s.copy_to(&parts[r], s.len());
    }
    let right = ((r + 1) % n) as u32;
    let left = ((r + n - 1) % n) as u32;
    for step in 0..n.saturating_sub(1) {
        let s = (r + n - step) % n;
        let d = (r + n - step - 1) % n;
        p.round(
            vec![
                Msg::Recv(left, parts[d].clone()),
                Msg::Send(right, parts[s].clone()),
            ],
            vec![],
        );
    }
    Ok(p.start(comm, owner))
}

pub fn iallgather(comm: &Comm, send: Option<&Buf>, recv: &Buf, owner: usize) -> MpiResult<ReqId> {
    iallgatherv(comm, send, &blocks(recv, comm.size() as usize), owner)
}

pub fn ialltoallv(
    comm: &Comm,
    send: Option<&[Buf]>,
    recv: &[Buf],
    owner: usize,
) -> MpiResult<ReqId> {
    let mut p = Plan::new(comm, None);
    let (r, n) = (p.rank as usize, p.size as usize);
    match send {
        Some(send) => {
            if send[r].len() > recv[r].len() {
                return Err(truncated("alltoall"));
            }
            send[r].copy_to(&recv[r], send[r].len());
            let mut msgs: Vec<Msg> = (1..n)
                .map(|s| (r + n - s) % n)
                .map(|q| Msg::Recv(q as u32, recv[q].clone()))
                .collect();
            msgs.extend(
                (1..n)
                    .map(|s| (r + s) % n)
                    .map(|q| Msg::Send(q as u32, send[q].clone())),
            );
            p.round(msgs, vec![]);
        }
        None => {
            // In place: pair by pair in one global order, each sending a copy taken now.
            for i in 0..n {
                for j in i + 1..n {
                    let peer = if r == i {
                        j
                    } else if r == j {
                        i
                    } else {
                        continue;
                    };
                    let copy = p.copy_of(&recv[peer]);
                    p.round(
                        vec![
                            Msg::Recv(peer as u32, recv[peer].clone()),
                            Msg::Send(peer as u32, copy),
                        ],
                        vec![],
                    );
                }
            }
        }
    }
    Ok(p.start(comm, owner))
}

pub fn ialltoall(comm: &Comm, send: Option<&Buf>, recv: &Buf, owner: usize) -> MpiResult<ReqId> {
    let n = comm.size() as usize;
    let recv_parts = blocks(recv, n);
    match send {
        Some(s) => {
            if s.len() != recv.len() {
                return Err(truncated("alltoall"));
            }
            ialltoallv(comm, Some(&blocks(s, n)), &recv_parts, owner)
        }
        None => ialltoallv(comm, None, &recv_parts, owner),
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
    if let Some(r) = run_or_block(comm, red, owner, || {
        super::reduce_scatter(comm, input, output, red, sizes)
    }) {
        return r;
    }
    let mut p = Plan::new(comm, Some(red));
    let (r, n) = (p.rank as usize, p.size as usize);
    let mut offs = vec![0usize];
    for s in sizes {
        offs.push(offs.last().copied().unwrap_or(0) + s);
    }
    if input.len() != offs[n] || output.len() != sizes[r] {
        return Err(truncated("reduce_scatter"));
    }
    // Pairwise exchange (predefined ops are commutative).
    let acc = p.copy_of(&input.slice(offs[r], sizes[r]));
    for step in 1..n {
        let dst = (r + step) % n;
        let src = (r + n - step) % n;
        let tmp = p.scratch(sizes[r]);
        p.round(
            vec![
                Msg::Recv(src as u32, tmp.clone()),
                Msg::Send(dst as u32, input.slice(offs[dst], sizes[dst])),
            ],
            vec![Local::Combine(tmp, acc.clone())],
        );
    }
    p.round(vec![], vec![Local::Copy(acc, output.clone())]);
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
        return Err(truncated("scan"));
    }
    let partial = p.copy_of(mine);
    if inclusive {
        if let Some(s) = send {
            s.copy_to(recv, s.len());
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
                    after.push(Local::Combine(tmp.clone(), recv.clone()));
                } else {
                    after.push(Local::Copy(tmp.clone(), recv.clone()));
                    have = true;
                }
                after.push(Local::Combine(tmp.clone(), partial.clone()));
            } else {
                after.push(Local::LowerFirst(partial.clone(), tmp.clone()));
            }
            p.round(
                vec![Msg::Recv(dst, tmp.clone()), Msg::Send(dst, partial.clone())],
                after,
            );
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
    if let Some(r) = run_or_block(comm, red, owner, || super::scan(comm, send, recv, red)) {
        return r;
    }
    iprefix(comm, send, recv, red, true, owner)
}

pub fn iexscan(
    comm: &Comm,
    send: Option<&Buf>,
    recv: &Buf,
    red: &Reduction,
    owner: usize,
) -> MpiResult<ReqId> {
    if let Some(r) = run_or_block(comm, red, owner, || super::exscan(comm, send, recv, red)) {
        return r;
    }
    iprefix(comm, send, recv, red, false, owner)
}
