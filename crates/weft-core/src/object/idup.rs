//! Communicators whose context id is agreed in the background: `MPI_Comm_idup` and
//! `MPI_Comm_create_from_group`.
//!
//! Both make the communicator object at the call, without its context id, and run the
//! agreement as an internal schedule (`vci::schedule`) that gives the communicator its id
//! (or the error) when it settles: the call returns at once and the agreement advances in
//! every progress pass of the VCI, whatever the program waits on. Overlapping idups (two
//! communicators duplicated in different orders on different processes, idup followed by
//! point-to-point traffic the peer needs before it calls idup) cannot deadlock.
//!
//! `MPI_Comm_idup`'s communicator refuses uses that need the id until then
//! (`Comm::refuses_early_use`: the standard forbids them before the request completes), but
//! its group, name, errhandler, attributes and info are there from the start (MPICH accepts
//! those calls, and mpi4py sets the errhandler right after the call). Its VCI cannot come
//! from the id, so it comes from the parent's and the idup's number, the same on every
//! member. `MPI_Comm_create_from_group`'s communicator is usable at once: its first use waits
//! for the id (`Comm::resolve`).
//!
//! The agreement is the same as the blocking one (`context_id`): rounds of an
//! AND-reduction of every member's contribution, repeated until one settles. A round is a
//! list of stages, each a few messages on the parent's collective context:
//! - intracommunicator: dissemination (`ceil(log2 n)` exchanges);
//! - intercommunicator: dissemination inside the local group, the two leaders (rank 0 of
//!   each group) swap and AND, then a binomial broadcast from the leader.
//!
//! A communicator of one process claims its pair alone (`context_id::try_claim_alone`, in
//! each progress pass until it gets one).
//!
//! Tags come from the parent's nonblocking-collective sequence (`Comm::coll_seq`), so any
//! number of idups (and nonblocking collectives) can be outstanding on one communicator;
//! they are started in the same order everywhere, as the standard requires.
#![forbid(unsafe_code)]

use std::sync::atomic::Ordering;
use std::sync::Arc;

use super::comm::{key, sub_key, CommKind};
use super::context_id::{self, contribution_len, Agreement, Outcome};
use super::errhandler::Errhandler;
use super::exchange::tag;
use super::group::Group;
use super::session::Session;
use super::Comm;
use crate::datatype::access::Scratch;
use crate::error::{fail, ErrorClass, MpiError, MpiResult};
use crate::instance::ProcId;
use crate::message::{Pattern, SendMode, Status, Target};
use crate::progress;
use crate::request::ReqId;
use crate::vci::schedule::{Cx, Schedule, Step};

/// Where a stage's messages go: a context, this process's rank as receivers see it, and the
/// job rank of each peer rank.
struct Link {
    context: u32,
    my_rank: u32,
    peers: Vec<ProcId>,
    /// The VCI of each peer (they differ on a stream communicator).
    vcis: Vec<u8>,
}

impl Link {
    fn vci_of(&self, rank: u32) -> u8 {
        self.vcis[rank as usize]
    }
}

enum Stage {
    /// Send the data to `to`, receive a block of the same length from `from`, AND it in.
    Exchange {
        link: usize,
        to: u32,
        from: u32,
        tag: i32,
    },
    /// Receive the data from `from` (it replaces ours).
    Recv { link: usize, from: u32, tag: i32 },
    /// Send the data to each of `to`.
    Send { link: usize, to: Vec<u32>, tag: i32 },
}

struct Idup {
    /// The communicator (returned already) that gets the id.
    comm: Arc<Comm>,
    links: Vec<Link>,
    stages: Vec<Stage>,
    /// `None` for a communicator of one process, which claims its pair alone.
    agreement: Option<Agreement>,
    /// The contribution being reduced in the current round.
    data: Vec<u8>,
    /// Index of the stage in flight (`stages.len()`: the round is reduced).
    stage: usize,
    /// Requests of the stage in flight, with the memory they use.
    sends: Vec<(ReqId, Scratch)>,
    recv: Option<(ReqId, Scratch, bool)>,
    error: Option<MpiError>,
    func: &'static str,
}

/// Start duplicating `parent`: returns the duplicate, whose context id is still being
/// agreed, and the request that completes when it has one (or the agreement failed).
/// `owner` is stored in the request (the ABI's handle).
pub fn idup(parent: &Comm, owner: usize, func: &'static str) -> (Arc<Comm>, ReqId) {
    let seq = parent.coll_seq.fetch_add(1, Ordering::Relaxed);
    let (t_local, t_bridge) = tag::idup(seq);
    let ctx = parent.collective_context();
    let me = parent.rank;
    let n = parent.size();
    let inter = parent.is_inter();
    let mut links = vec![Link {
        context: ctx,
        my_rank: me,
        peers: parent.group.members().to_vec(),
        vcis: (0..n)
            .map(|r| {
                if inter {
                    parent.vci as u8
                } else {
                    parent.peer_vci(r)
                }
            })
            .collect(),
    }];
    let mut stages = dissemination(me, n, t_local);
    if let Some(remote) = &parent.remote {
        links.push(Link {
            context: ctx,
            my_rank: me,
            peers: remote.members().to_vec(),
            vcis: vec![parent.vci as u8; remote.size() as usize],
        });
        if me == 0 {
            stages.push(Stage::Exchange {
                link: 1,
                to: 0,
                from: 0,
                tag: t_bridge,
            });
        }
        // Binomial broadcast from local rank 0.
        let mut mask = 1;
        while mask < n {
            if me & mask != 0 {
                stages.push(Stage::Recv {
                    link: 0,
                    from: me - mask,
                    tag: t_local,
                });
                break;
            }
            mask <<= 1;
        }
        let mut children = Vec::new();
        mask >>= 1;
        while mask > 0 {
            if me + mask < n {
                children.push(me + mask);
            }
            mask >>= 1;
        }
        if !children.is_empty() {
            stages.push(Stage::Send {
                link: 0,
                to: children,
                tag: t_local,
            });
        }
    }
    let agreement = (n > 1 || parent.remote.is_some())
        .then(|| Agreement::begin(key(parent.context_id(), sub_key::idup(seq))));
    let comm = Arc::new(pending_duplicate(parent, seq));
    let sched = Idup::new(comm.clone(), links, stages, agreement, func);
    let id = progress::start_schedule(&parent.session.instance, parent.vci, owner, Box::new(sched));
    (comm, id)
}

/// Agree on the context id of `comm`, a communicator of the members `peers` (this process
/// is `me`) that `MPI_Comm_create_from_group` returned before the agreement: the rounds run
/// on `context` (the bootstrap context) with `tag`, in the progress engine of `vci`, and
/// `comm` gets the id (or the error) when they settle. Nothing waits on the schedule.
pub fn publish_agreed(
    comm: Arc<Comm>,
    context: u32,
    vci: usize,
    peers: Vec<ProcId>,
    me: u32,
    tag: i32,
    key: u64,
    func: &'static str,
) {
    let n = peers.len() as u32;
    let links = vec![Link {
        context,
        my_rank: me,
        vcis: vec![vci as u8; peers.len()],
        peers,
    }];
    let stages = dissemination(me, n, tag);
    let inst = comm.session.instance.clone();
    let agreement = (n > 1).then(|| Agreement::begin(key));
    let sched = Idup::new(comm, links, stages, agreement, func);
    progress::start_detached_schedule(&inst, vci, Box::new(sched));
}

/// The exchanges of one AND-reduction among `n` members on link 0: `ceil(log2 n)` steps.
fn dissemination(me: u32, n: u32, tag: i32) -> Vec<Stage> {
    let mut stages = Vec::new();
    let mut dist = 1;
    while dist < n {
        stages.push(Stage::Exchange {
            link: 0,
            to: (me + dist) % n,
            from: (me + n - dist) % n,
            tag,
        });
        dist *= 2;
    }
    stages
}

impl Idup {
    fn new(
        comm: Arc<Comm>,
        links: Vec<Link>,
        stages: Vec<Stage>,
        agreement: Option<Agreement>,
        func: &'static str,
    ) -> Idup {
        let mut sched = Idup {
            comm,
            links,
            stages,
            agreement,
            data: Vec::new(),
            stage: 0,
            sends: Vec::new(),
            recv: None,
            error: None,
            func,
        };
        sched.new_round();
        sched
    }

    fn new_round(&mut self) {
        let Some(agreement) = self.agreement.as_mut() else {
            return;
        };
        let mut words = vec![0u64; contribution_len(agreement.words)];
        agreement.contribute(&mut words);
        self.data = words.iter().flat_map(|w| w.to_le_bytes()).collect();
        self.stage = 0;
    }

    /// Start the messages of stage `self.stage`.
    fn start_stage(&mut self, cx: &mut Cx<'_>) -> MpiResult<()> {
        let pattern = |link: &Link, from: u32, tag: i32| Pattern::exact(link.context, from, tag);
        let (link, recv_from, sends, tag) = match &self.stages[self.stage] {
            Stage::Exchange {
                link,
                to,
                from,
                tag,
            } => (*link, Some((*from, true)), vec![*to], *tag),
            Stage::Recv { link, from, tag } => (*link, Some((*from, false)), Vec::new(), *tag),
            Stage::Send { link, to, tag } => (*link, None, to.clone(), *tag),
        };
        let l = &self.links[link];
        if let Some((from, and)) = recv_from {
            let mut rbuf = Scratch::new(self.data.len());
            let id = cx.irecv(pattern(l, from, tag), rbuf.buf());
            self.recv = Some((id, rbuf, and));
        }
        for to in sends {
            let mut sbuf = Scratch::new(self.data.len());
            sbuf.bytes_mut().copy_from_slice(&self.data);
            let target = Target::new(
                l.context,
                l.my_rank,
                l.peers[to as usize],
                tag,
                l.vci_of(to),
            );
            let id = cx.isend(target, sbuf.buf(), SendMode::Standard)?;
            self.sends.push((id, sbuf));
        }
        Ok(())
    }

    /// Finish the stage in flight if all its requests are complete.
    fn finish_stage(&mut self, cx: &mut Cx<'_>) -> Option<MpiResult<()>> {
        if self.sends.iter().any(|(id, _)| !cx.is_complete(*id))
            || self
                .recv
                .as_ref()
                .is_some_and(|(id, _, _)| !cx.is_complete(*id))
        {
            return None;
        }
        let mut result = Ok(());
        for (id, _) in std::mem::take(&mut self.sends) {
            if let Some(st) = cx.take(id) {
                if st.error != 0 && result.is_ok() {
                    result = st.into_result().map(|_| ());
                }
            }
        }
        if let Some((id, rbuf, and)) = self.recv.take() {
            let st = cx.take(id).unwrap_or_default();
            match st.into_result() {
                Err(e) => result = result.and(Err(e)),
                Ok(s) if s.bytes != self.data.len() as u64 => {
                    result = result.and(Err(MpiError::new(
                        ErrorClass::Intern,
                        format!(
                            "{}: expected {} bytes from a peer, got {} (do all members \
                             call the same functions in the same order?)",
                            self.func,
                            self.data.len(),
                            s.bytes
                        ),
                    )))
                }
                Ok(_) if and => {
                    for (a, b) in self.data.iter_mut().zip(rbuf.bytes()) {
                        *a &= *b;
                    }
                }
                Ok(_) => self.data.copy_from_slice(rbuf.bytes()),
            }
        }
        Some(result)
    }

    /// The agreement settled on `result`: the communicator gets it.
    fn finish(&mut self, result: MpiResult<u32>) -> Step {
        let status = match &result {
            Ok(_) => Status::default(),
            Err(e) => Status {
                error: e.class(),
                ..Status::default()
            },
        };
        self.agreement = None;
        self.comm.set_context(result);
        Step::Done(status)
    }
}

impl Schedule for Idup {
    fn step(&mut self, cx: &mut Cx<'_>) -> Step {
        if self.agreement.is_none() {
            // A communicator of one process: a pair no round holds, when there is one.
            return match context_id::try_claim_alone(self.func) {
                Some(r) => self.finish(r),
                None => Step::Pending,
            };
        }
        loop {
            let in_flight = !self.sends.is_empty() || self.recv.is_some();
            if in_flight {
                match self.finish_stage(cx) {
                    None => return Step::Pending,
                    Some(Err(e)) => {
                        self.error.get_or_insert(e);
                    }
                    Some(Ok(())) => {}
                }
                self.stage += 1;
            }
            if let Some(e) = &self.error {
                let e = e.clone();
                return self.finish(Err(e));
            }
            if self.stage < self.stages.len() {
                if let Err(e) = self.start_stage(cx) {
                    self.error = Some(e);
                    if self.sends.is_empty() && self.recv.is_none() {
                        let e = self.error.clone().expect("set");
                        return self.finish(Err(e));
                    }
                    // Let what was started complete before reporting the error.
                    self.stage = self.stages.len();
                }
                continue;
            }
            // The round is reduced.
            let agreement = self.agreement.as_mut().expect("checked at the start");
            let mut words = vec![0u64; contribution_len(agreement.words)];
            for (w, c) in words.iter_mut().zip(self.data.chunks_exact(8)) {
                *w = u64::from_le_bytes(c.try_into().expect("8 bytes"));
            }
            match agreement.settle(&words) {
                Outcome::Got(id) => return self.finish(Ok(id)),
                Outcome::Exhausted => {
                    return self.finish(Err(context_id::exhausted(self.func)));
                }
                Outcome::Retry => self.new_round(),
            }
        }
    }
}

/// The duplicate of `p` that `MPI_Comm_idup` number `seq` on it returns, before its context
/// id is agreed: on a VCI every member computes alike, the parent's moved on by `seq + 1`.
fn pending_duplicate(p: &Comm, seq: u32) -> Comm {
    let kind = match p.kind {
        CommKind::Inter => CommKind::Inter,
        _ => CommKind::Intra,
    };
    // Only the implicit VCIs: the others belong to MPIX streams.
    let vcis = p.session.instance.config.num_vcis;
    let vci = (p.vci + 1 + seq as usize % vcis) % vcis;
    let mut c = Comm::unresolved(
        kind,
        p.group.clone(),
        p.rank,
        vci,
        p.session.clone(),
        p.errhandler(),
        "",
    );
    c.remote = p.remote.clone();
    c.topo = p.topo.clone();
    // A stream communicator's duplicate is attached to the same streams (the map is the
    // parent's: every rank's stream VCIs are already known), like `MPI_Comm_dup`'s.
    if let Some(s) = &p.streams {
        c.streams = Some(s.attach_again());
        c.vci = p.vci;
    }
    c.owns_context = true;
    c.refuses_early_use = true;
    c.set_hints(&p.inherited_hints());
    c
}

/// `MPI_Comm_create_from_group`: a communicator from a group of a session. It is returned at
/// once; its context id is agreed among the group's members in the progress engine, on a
/// bootstrap channel told apart by a hash of the group and tag, and the first use of the
/// communicator waits for it (`Comm::resolve`). So a rank that gets here early does not wait
/// for the slowest member to finish `MPI_Session_init`. Members compute the same hash, so
/// they all put the communicator on the same VCI before the id is known.
pub fn create_from_group(
    session: &Arc<Session>,
    group: &Group,
    string_tag: &str,
    errhandler: Arc<Errhandler>,
) -> MpiResult<Arc<Comm>> {
    let func = "MPI_Comm_create_from_group";
    let inst = &session.instance;
    let job_rank = inst.job.rank;
    let Some(me) = group.rank_of(job_rank) else {
        return fail(
            ErrorClass::Group,
            format!("{func}(group): the calling process is not a member of the group"),
        );
    };
    let h = hash128(group.members(), string_tag);
    let t = tag::BOOTSTRAP_BASE - ((h as i32) & 0x3fff_ffff);
    let vci = (h >> 64) as usize % inst.config.num_vcis;
    let mut c = Comm::unresolved(
        CommKind::Intra,
        group.clone(),
        me,
        vci,
        session.clone(),
        errhandler,
        "",
    );
    c.owns_context = true;
    // Rank 0 sets up the collectives' shared memory now, while the members are still
    // agreeing, rather than after: the first collective then waits for the name alone.
    *c.prepared_area.get_mut().unwrap_or_else(|p| p.into_inner()) = super::area::prepare(&c);
    let c = Arc::new(c);
    publish_agreed(
        c.clone(),
        context_id::BOOTSTRAP_CONTEXT,
        inst.vci_for_context(context_id::BOOTSTRAP_CONTEXT),
        group.members().to_vec(),
        me,
        t,
        u64::MAX - (h as u64 >> 1),
        func,
    );
    Ok(c)
}

/// A 128-bit FNV-1a hash of a group and a string tag (names the bootstrap exchange).
fn hash128(members: &[ProcId], tag: &str) -> u128 {
    let mut h: u128 = 0x6c62272e07bb014262b821756295c58d;
    let prime: u128 = 0x0000000001000000000000000000013B;
    for b in members
        .iter()
        .flat_map(|m| m.to_le_bytes())
        .chain([0xff])
        .chain(tag.bytes())
    {
        h ^= b as u128;
        h = h.wrapping_mul(prime);
    }
    h
}
