//! Communicators: the object, and every way of making one (dup, split, create, create_group,
//! create_from_group, split_type, intercommunicators, topologies). Context ids are agreed
//! with `context_id` over small exchanges (`exchange`) on the parent's collective
//! context; a communicator gives its pair back when its last reference goes.
#![forbid(unsafe_code)]

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use super::attr::AttrList;
use super::context_id::{self, contribution_len, Agreement, Outcome, ENTRY_WORDS};
use super::errhandler::Errhandler;
use super::exchange::{self, bytes_to_words, tag, words_to_bytes, Channel};
use super::group::{Compare, Group};
use super::session::Session;
use super::stream::StreamMap;
use super::topo::Topology;
use crate::error::{fail, ErrorClass, MpiError, MpiResult};
use crate::hw;
use crate::instance::ProcId;
use crate::message::Target;
use crate::transport::shm::coll_area::CollArea;
use crate::transport::shm::foreign::ProcName;

/// What a communicator is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CommKind {
    /// `MPI_COMM_WORLD`.
    World,
    /// `MPI_COMM_SELF`.
    SelfComm,
    /// A user intracommunicator (dup, split, create, topologies, merge, ...).
    Intra,
    /// An intercommunicator: a local and a remote group.
    Inter,
}

/// A communicator: a group, this process's rank in it, the remote group of an
/// intercommunicator, a context id pair, the VCI its traffic runs on, and what is cached on it.
#[derive(Debug)]
pub struct Comm {
    pub kind: CommKind,
    /// The (local) group.
    pub group: Group,
    /// This process's rank in `group`.
    pub rank: u32,
    /// An intercommunicator's remote group: point-to-point ranks name its members.
    pub remote: Option<Group>,
    /// The compact context id carried on the wire (point-to-point; `+1` for collectives):
    /// set at creation, except for `MPI_Comm_create_from_group`, whose members agree on it
    /// in the progress engine after the call returned (`resolve` waits for it).
    context: OnceLock<MpiResult<u32>>,
    /// The VCI this process runs the communicator's operations on: an implicit one, or on a
    /// stream communicator this process's (first) stream's.
    pub vci: usize,
    /// A stream communicator's streams (`object::stream`); `None` for every other kind.
    pub streams: Option<StreamMap>,
    /// A thread communicator's shared state (`MPIX_Threadcomm_init`); `None` for every
    /// other kind.
    pub thread: Option<Arc<crate::threadcomm::ThreadComm>>,
    pub session: Arc<Session>,
    pub topo: Option<Arc<Topology>>,
    /// Cached attributes (the ABI layer runs their callbacks).
    pub attrs: AttrList,
    errhandler: Mutex<Arc<Errhandler>>,
    /// Whether the program set an errhandler on this communicator (`set_errhandler`): errors
    /// without an object fall back from `MPI_COMM_SELF` to `MPI_COMM_WORLD` on it.
    errhandler_set: AtomicBool,
    /// Whether the errhandler is the one the communicator started with on a line of
    /// communicators where the program never set one (`MPI_COMM_WORLD`/`MPI_COMM_SELF`, and
    /// what is derived from them before any `set_errhandler`): see `follows_default`.
    pub(super) default_line: bool,
    name: Mutex<String>,
    /// Info hints set on the communicator (`MPI_Comm_set_info`, `dup_with_info`), in order.
    hints: Mutex<Vec<(String, String)>>,
    /// Whether dropping the communicator gives its context-id pair back.
    pub(super) owns_context: bool,
    /// `MPI_Comm_idup`'s communicator, which may not be used before the request completes
    /// (MPI 4.1 §7.4.2): until its id is agreed, uses that need the id are refused rather
    /// than waited for (see `resolve`); what the object itself keeps (groups, name,
    /// errhandler, attributes, info) can be read and set meanwhile, as MPICH allows.
    pub(super) refuses_early_use: bool,
    /// Nonblocking collectives started on this communicator (their tags on the wire).
    pub coll_seq: std::sync::atomic::AtomicU32,
    /// How many times each collective algorithm ran on this communicator (`coll::choice`).
    pub coll_algos: crate::stats::AlgoCounts,
    /// The user's point-to-point messages on it, while a tool counts them.
    pub msg_counts: crate::stats::CommCounts,
    /// Per forcible collective (`coll::choice::COLLECTIVES`): 0, or the algorithm forced on
    /// this communicator at run time plus one.
    pub coll_forced: [std::sync::atomic::AtomicU8; 9],
    /// The shared memory of node-level collectives (`coll::shm`), set up by the first
    /// collective that can use it; `None` once decided that this communicator cannot.
    /// Unmapped when the communicator goes.
    pub coll_area: OnceLock<Option<CollArea>>,
    /// An area (and its name) rank 0 created ahead of the first collective
    /// (`object::area::prepare`), waiting for it; the name goes if the communicator goes first.
    pub(crate) prepared_area: Mutex<Option<(CollArea, String)>>,
}

impl Comm {
    /// A predefined communicator (its context id is fixed, not agreed).
    pub fn new(
        kind: CommKind,
        group: Group,
        rank: u32,
        context_id: u32,
        session: Arc<Session>,
        errhandler: Arc<Errhandler>,
        name: &str,
    ) -> Comm {
        let vci = session.instance.vci_for_context(context_id);
        let c = Comm::unresolved(kind, group, rank, vci, session, errhandler, name);
        let _ = c.context.set(Ok(context_id));
        c
    }

    /// A communicator whose context id is agreed later (`set_context`), on VCI `vci`.
    pub(super) fn unresolved(
        kind: CommKind,
        group: Group,
        rank: u32,
        vci: usize,
        session: Arc<Session>,
        errhandler: Arc<Errhandler>,
        name: &str,
    ) -> Comm {
        Comm {
            kind,
            group,
            rank,
            remote: None,
            context: OnceLock::new(),
            vci,
            streams: None,
            thread: None,
            session,
            topo: None,
            attrs: AttrList::new(),
            errhandler: Mutex::new(errhandler),
            errhandler_set: AtomicBool::new(false),
            default_line: true,
            name: Mutex::new(name.to_owned()),
            hints: Mutex::new(Vec::new()),
            owns_context: false,
            refuses_early_use: false,
            coll_seq: std::sync::atomic::AtomicU32::new(0),
            coll_algos: Default::default(),
            msg_counts: Default::default(),
            coll_forced: Default::default(),
            coll_area: OnceLock::new(),
            prepared_area: Mutex::new(None),
        }
    }

    /// A communicator derived from `parent` with an agreed context id (which it owns). It
    /// inherits the parent's errhandler and session.
    /// An intercommunicator of `local`'s group (this process at its rank there) and `remote`.
    pub(super) fn inter(local: &Comm, remote: Group, context_id: u32) -> Arc<Comm> {
        let spec = Spec {
            kind: CommKind::Inter,
            group: local.group.clone(),
            rank: local.rank,
            remote: Some(remote),
            topo: None,
        };
        Arc::new(Comm::derived(local, spec, context_id))
    }

    pub(super) fn derived(parent: &Comm, spec: Spec, context_id: u32) -> Comm {
        let mut c = Comm::new(
            spec.kind,
            spec.group.owned_by(&parent.session),
            spec.rank,
            context_id,
            parent.session.clone(),
            parent.errhandler(),
            "",
        );
        c.remote = spec.remote.map(|r| r.owned_by(&parent.session));
        c.topo = spec.topo;
        c.owns_context = true;
        c.default_line = parent.follows_default();
        c
    }

    /// The context id point-to-point operations on this communicator use. Only for a
    /// resolved communicator (every one the ABI layer hands to the core is: `resolve`).
    #[inline]
    pub fn context_id(&self) -> u32 {
        match self.context.get() {
            Some(Ok(id)) => *id,
            _ => panic!("a communicator used before its context id was agreed"),
        }
    }

    /// The context id collective operations on this communicator use.
    pub fn collective_context(&self) -> u32 {
        self.context_id() + 1
    }

    /// Whether the context id is known (not pending, not failed).
    #[inline]
    pub fn is_resolved(&self) -> bool {
        matches!(self.context.get(), Some(Ok(_)))
    }

    /// Whether the context-id agreement is over (the id is known, or the agreement failed).
    pub fn is_settled(&self) -> bool {
        self.context.get().is_some()
    }

    /// Whether a use that needs the context id is refused, not waited for, while the
    /// agreement runs (`MPI_Comm_idup`'s communicator; see `refuses_early_use`).
    pub fn refuses_early_use(&self) -> bool {
        self.refuses_early_use
    }

    /// Wait until the context id is agreed, making progress meanwhile; the agreement's
    /// error if it failed. Call with no VCI locked.
    pub fn resolve(&self) -> MpiResult<()> {
        let inst = &self.session.instance;
        let mut backoff = inst.backoff();
        loop {
            if let Some(r) = self.context.get() {
                return r.as_ref().map(|_| ()).map_err(Clone::clone);
            }
            crate::polled::run();
            if crate::progress::poke_all(inst) {
                backoff.reset();
            } else {
                backoff.idle();
            }
        }
    }

    /// The outcome of the context-id agreement of an unresolved communicator.
    pub(super) fn set_context(&self, r: MpiResult<u32>) {
        let _ = self.context.set(r);
    }

    /// Size of the (local) group.
    pub fn size(&self) -> u32 {
        self.group.size()
    }

    pub fn is_inter(&self) -> bool {
        self.remote.is_some()
    }

    /// The group point-to-point ranks name: the remote group of an intercommunicator, else
    /// the group.
    pub fn peer_group(&self) -> &Group {
        self.remote.as_ref().unwrap_or(&self.group)
    }

    /// How many ranks point-to-point operations can address.
    pub fn peer_size(&self) -> u32 {
        self.peer_group().size()
    }

    /// The VCI that messages to rank `rank` (of the peer group) go to: this communicator's
    /// implicit VCI, or on a stream communicator the (first) stream `rank` attached.
    #[inline]
    pub fn peer_vci(&self, rank: u32) -> u8 {
        match &self.streams {
            None => self.vci as u8,
            Some(s) => s.first_vci(rank),
        }
    }

    /// Whether the program serialises this communicator's operations itself: a stream
    /// communicator to which this process attached a stream — not an offload stream, whose
    /// queue's thread uses the communicator beside the program's.
    pub fn is_serial(&self) -> bool {
        self.streams.as_ref().is_some_and(|s| {
            s.all_local_are_streams() && s.local().iter().flatten().all(|st| st.offload().is_none())
        })
    }

    /// Where a point-to-point message to rank `dest` (of the peer group) with `tag` goes.
    #[inline]
    pub fn target(&self, dest: u32, tag: i32) -> MpiResult<Target> {
        let Some(dest_job) = self.peer_group().proc_at(dest) else {
            return Err(self.not_a_rank(dest));
        };
        let mut target = Target::new(self.context_id(), self.rank, dest_job, tag, self.vci as u8);
        if let Some(s) = &self.streams {
            target.vci = s.first_vci(dest);
            target.stream = s.own_mark();
        }
        Ok(target)
    }

    #[cold]
    fn not_a_rank(&self, dest: u32) -> MpiError {
        MpiError::new(
            ErrorClass::Rank,
            format!(
                "rank {dest} is not in the communicator (size {})",
                self.peer_size()
            ),
        )
    }

    /// This process's job rank.
    pub fn my_proc(&self) -> ProcId {
        self.group
            .proc_at(self.rank)
            .expect("a member's rank is in its group")
    }

    pub fn errhandler(&self) -> Arc<Errhandler> {
        lock(&self.errhandler).clone()
    }

    pub fn set_errhandler(&self, errhandler: Arc<Errhandler>) {
        *lock(&self.errhandler) = errhandler;
        self.errhandler_set.store(true, Ordering::Release);
    }

    /// Whether `set_errhandler` was ever called on this communicator (an inherited or initial
    /// errhandler does not count).
    pub fn errhandler_was_set(&self) -> bool {
        self.errhandler_set.load(Ordering::Acquire)
    }

    /// Whether no errhandler was ever chosen for this communicator: neither set on it nor
    /// inherited from an ancestor that had one set (the line goes back to `MPI_COMM_WORLD`
    /// or `MPI_COMM_SELF`). Errors on a derived communicator of that kind go where errors
    /// without an object go, decided when they happen (MPICH's rule: a program that sets
    /// `MPI_ERRORS_RETURN` on `MPI_COMM_WORLD` after `MPI_Comm_dup` gets errors on the
    /// duplicate returned, as MPICH's `errors/comm/*_nullarg` tests expect).
    pub fn follows_default(&self) -> bool {
        self.default_line && !self.errhandler_was_set()
    }

    pub fn name(&self) -> String {
        lock(&self.name).clone()
    }

    pub fn set_name(&self, name: &str) {
        *lock(&self.name) = name.to_owned();
    }

    /// The hints set on this communicator, in the order first set.
    pub fn hints(&self) -> Vec<(String, String)> {
        lock(&self.hints).clone()
    }

    /// The hints a duplicate (`MPI_Comm_dup`, `MPI_Comm_idup`) inherits: none of the
    /// `mpi_assert_*` assertions, which MPI 4 does not propagate to duplicates (they hold for
    /// how the program uses this communicator, not for what it does with a copy; MPICH's
    /// test suite checks this).
    pub fn inherited_hints(&self) -> Vec<(String, String)> {
        lock(&self.hints)
            .iter()
            .filter(|(k, _)| !k.starts_with("mpi_assert_"))
            .cloned()
            .collect()
    }

    /// Set (or replace) hints; keys this implementation does not know are kept too.
    pub fn set_hints(&self, pairs: &[(String, String)]) {
        let mut h = lock(&self.hints);
        for (k, v) in pairs {
            match h.iter_mut().find(|(hk, _)| hk == k) {
                Some(e) => e.1 = v.clone(),
                None => h.push((k.clone(), v.clone())),
            }
        }
    }

    /// Forget every hint (before `dup_with_info` sets its own).
    pub fn clear_hints(&self) {
        lock(&self.hints).clear();
    }

    /// The value of hint `key`, if set.
    pub fn hint(&self, key: &str) -> Option<String> {
        lock(&self.hints)
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.clone())
    }

    /// `MPI_Comm_compare` of two distinct communicator objects (the same object is
    /// `MPI_IDENT`; the caller checks that).
    pub fn compare(&self, other: &Comm) -> Compare {
        let combine = |a: Compare, b: Compare| match (a, b) {
            (Compare::Ident, Compare::Ident) => Compare::Congruent,
            (Compare::Unequal, _) | (_, Compare::Unequal) => Compare::Unequal,
            _ => Compare::Similar,
        };
        match (&self.remote, &other.remote) {
            (None, None) => combine(self.group.compare(&other.group), Compare::Ident),
            (Some(r1), Some(r2)) => combine(self.group.compare(&other.group), r1.compare(r2)),
            _ => Compare::Unequal,
        }
    }
}

impl Drop for Comm {
    fn drop(&mut self) {
        if let (true, Some(Ok(id))) = (self.owns_context, self.context.get()) {
            context_id::release(*id);
        }
        if let Some((area, _)) = lock(&self.prepared_area).take() {
            area.release_name();
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// What a new communicator looks like, apart from its context id.
pub(super) struct Spec {
    pub(super) kind: CommKind,
    pub(super) group: Group,
    pub(super) rank: u32,
    pub(super) remote: Option<Group>,
    pub(super) topo: Option<Arc<Topology>>,
}

/// Priority of a context-id agreement (the same on every member): the parent's context id,
/// then a sub-key (`sub_key`) that tells apart creations that may run at once on one parent.
pub(super) fn key(parent_context: u32, sub: u32) -> u64 {
    ((parent_context as u64) << 32) | sub as u64
}

/// The sub-keys of `key`, in disjoint ranges so that creations that may overlap on one
/// parent (from several threads, or nonblocking) never share a key.
pub(super) mod sub_key {
    /// A creation collective over the whole parent (dup, split, create, topologies, merge):
    /// at most one runs at a time on a parent.
    pub const COLLECTIVE: u32 = 0x8000_0000;

    /// `MPI_Comm_create_group(tag)`: the tag (non-negative), below `COLLECTIVE`.
    pub fn group(tag: i32) -> u32 {
        tag as u32 & 0x7fff_ffff
    }

    /// `MPI_Intercomm_create(tag)`: above `COLLECTIVE`, below the idups.
    pub fn intercomm(tag: i32) -> u32 {
        COLLECTIVE + 1 + (tag as u32 & 0x3fff_fffe)
    }

    /// `MPI_Comm_idup` number `seq` on a parent: the top quarter.
    pub fn idup(seq: u32) -> u32 {
        u32::MAX - (seq & 0x3fff_ffff)
    }
}

/// `exchange::pause` on `comm`'s instance.
fn pause(comm: &Comm) -> impl FnMut() + '_ {
    move || exchange::pause(&comm.session.instance)
}

fn intra_only(comm: &Comm, func: &str) -> MpiResult<()> {
    if comm.is_inter() {
        return fail(
            ErrorClass::Comm,
            format!("{func}(comm): an intracommunicator is required"),
        );
    }
    Ok(())
}

/// Agree a context id among all members of an intracommunicator.
fn agree_intra(parent: &Comm, func: &str) -> MpiResult<u32> {
    if parent.size() == 1 {
        return context_id::claim_alone(func, pause(parent));
    }
    let ch = Channel::collective(parent);
    let members = exchange::all(parent.size());
    let me = parent.rank as usize;
    let k = key(parent.context_id(), sub_key::COLLECTIVE);
    context_id::agree(
        k,
        func,
        |buf| ch.allreduce_and(&members, me, tag::AGREE, buf),
        pause(parent),
    )
}

/// A reduction over two groups joined by their leaders: AND inside the local group, the
/// leaders swap and AND, the local leader broadcasts the result.
struct TwoLevel<'a> {
    local: Channel<'a>,
    local_tag: i32,
    members: Vec<u32>,
    me: usize,
    leader: usize,
    /// At the leader: the channel to the other leader, its rank there, the tag.
    bridge: Option<(Channel<'a>, u32, i32)>,
}

impl TwoLevel<'_> {
    fn reduce(&self, data: &mut [u64]) -> MpiResult<()> {
        self.local
            .allreduce_and(&self.members, self.me, self.local_tag, data)?;
        let mut bytes = words_to_bytes(data);
        if let Some((ch, remote, t)) = &self.bridge {
            let mut theirs = vec![0u8; bytes.len()];
            ch.sendrecv(*remote, &bytes, *remote, &mut theirs, *t)?;
            for (a, b) in bytes.iter_mut().zip(&theirs) {
                *a &= *b;
            }
        }
        self.local.bcast(
            &self.members,
            self.me,
            self.leader,
            self.local_tag,
            &mut bytes,
        )?;
        bytes_to_words(&bytes, data);
        Ok(())
    }

    /// Swap `data` between the leaders and broadcast the other side's to the local group
    /// (every member passes a buffer of the other side's length).
    fn swap(&self, mine: &[u8], theirs: &mut [u8]) -> MpiResult<()> {
        if let Some((ch, remote, t)) = &self.bridge {
            ch.sendrecv(*remote, mine, *remote, theirs, *t)?;
        }
        self.local
            .bcast(&self.members, self.me, self.leader, self.local_tag, theirs)
    }
}

/// The two-level reduction of an intercommunicator's two groups (leaders: rank 0).
fn inter_levels(inter: &Comm) -> TwoLevel<'_> {
    TwoLevel {
        local: Channel::local(inter),
        local_tag: tag::LOCAL,
        members: exchange::all(inter.size()),
        me: inter.rank as usize,
        leader: 0,
        bridge: (inter.rank == 0).then(|| (Channel::collective(inter), 0, tag::LEADERS)),
    }
}

// ----------------------------------------------------------------------- constructors

/// `MPI_Comm_dup`: same group(s), new context, topology and inherited hints kept.
/// (Attributes are copied by the caller, which runs their callbacks.)
pub fn dup(parent: &Comm) -> MpiResult<Arc<Comm>> {
    dup_named(parent, "MPI_Comm_dup")
}

pub fn dup_named(parent: &Comm, func: &str) -> MpiResult<Arc<Comm>> {
    let mut c = dup_comm(parent, func)?;
    if let Some(s) = &parent.streams {
        c.streams = Some(s.attach_again());
        c.vci = parent.vci;
    }
    Ok(Arc::new(c))
}

/// `MPIX_Threadcomm_init` (and `MPI_Comm_dup` of a thread communicator): a duplicate of
/// `parent` carrying the thread communicator `tc`.
pub fn thread_dup(
    parent: &Comm,
    tc: crate::threadcomm::ThreadComm,
    func: &str,
) -> MpiResult<Arc<Comm>> {
    let mut c = dup_comm(parent, func)?;
    c.thread = Some(Arc::new(tc));
    Ok(Arc::new(c))
}

/// A duplicate of `parent` with a new context id, on the implicit VCI of that id (a stream
/// communicator's duplicate gets its streams from the caller).
pub(super) fn dup_comm(parent: &Comm, func: &str) -> MpiResult<Comm> {
    let ctx = if parent.is_inter() {
        let levels = inter_levels(parent);
        let k = key(parent.context_id(), sub_key::COLLECTIVE);
        context_id::agree(k, func, |b| levels.reduce(b), pause(parent))?
    } else {
        agree_intra(parent, func)?
    };
    let kind = match parent.kind {
        CommKind::Inter => CommKind::Inter,
        _ => CommKind::Intra,
    };
    let c = Comm::derived(
        parent,
        Spec {
            kind,
            group: parent.group.clone(),
            rank: parent.rank,
            remote: parent.remote.clone(),
            topo: parent.topo.clone(),
        },
        ctx,
    );
    c.set_hints(&parent.inherited_hints());
    Ok(c)
}

/// `MPI_Comm_split`: `color` `None` is `MPI_UNDEFINED` (no new communicator).
pub fn split(parent: &Comm, color: Option<u32>, key: i32) -> MpiResult<Option<Arc<Comm>>> {
    if parent.is_inter() {
        return split_inter(parent, color, key, "MPI_Comm_split");
    }
    split_impl(parent, color, key, None, "MPI_Comm_split")
}

/// `MPI_Comm_split` on an intercommunicator: the processes of one colour on each side form
/// a new intercommunicator (local group ordered by key, then old rank); a colour present
/// on only one side gives `None`. Each side allgathers (colour, key, entry-round
/// contribution) inside itself, the leaders swap the tables and broadcast them, so every
/// process knows both sides' colours and each colour's entry round; later rounds run
/// two-level among the colour's members (their lowest-key members bridge the sides).
fn split_inter(
    parent: &Comm,
    color: Option<u32>,
    key_: i32,
    func: &str,
) -> MpiResult<Option<Arc<Comm>>> {
    let remote = parent.remote.as_ref().expect("an intercommunicator");
    let n = parent.size();
    let (mut agreement, block) = entry_block(parent, color, key_);
    let local = Channel::local(parent);
    let table = local.allgather(&exchange::all(n), parent.rank as usize, tag::SPLIT, &block)?;
    let mut rtable = vec![0u8; remote.size() as usize * block.len()];
    inter_levels(parent).swap(&table, &mut rtable)?;
    let (rows, rrows) = (
        Rows::new(&table, block.len()),
        Rows::new(&rtable, block.len()),
    );
    // Colours present on both sides, each with its members on either side.
    let colours: Vec<(Vec<u32>, Vec<u32>)> = rows
        .colours()
        .into_iter()
        .map(|c| (rows.members(c), rrows.members(c)))
        .filter(|(_, theirs)| !theirs.is_empty())
        .collect();
    let entry = |mine: &[u32], theirs: &[u32]| and(rows.entry_and(mine), &rrows.entry_and(theirs));
    let entry_suffices = colours.iter().all(|(m, t)| has_pair(&entry(m, t)));
    let mut made = None;
    if let (Some(color), Some(agreement)) = (color, agreement.as_mut()) {
        let (mine, theirs) = (rows.members(color as i64), rrows.members(color as i64));
        if !theirs.is_empty() {
            let me = position(&mine, parent.rank);
            let levels = TwoLevel {
                local: Channel::local(parent),
                local_tag: tag::SUBSET,
                members: mine.clone(),
                me,
                leader: 0,
                bridge: (me == 0).then(|| (Channel::collective(parent), theirs[0], tag::LEADERS)),
            };
            let settled =
                later_rounds(agreement, entry(&mine, &theirs), false, parent, func, |b| {
                    levels.reduce(b)
                })?;
            made = Some(settled.map(|id| (id, (mine, theirs, me))));
        }
    }
    drop(agreement);
    if !entry_suffices {
        let everyone = TwoLevel {
            local: Channel::local(parent),
            local_tag: tag::VERDICT,
            members: exchange::all(n),
            me: parent.rank as usize,
            leader: 0,
            bridge: (parent.rank == 0).then(|| (Channel::collective(parent), 0, tag::VERDICT)),
        };
        verdict(&mut made, func, |b| everyone.reduce(b))?;
    }
    let Some((ctx, (mine, theirs, me))) = made.transpose()? else {
        return Ok(None);
    };
    let group_of = |g: &Group, list: &[u32]| {
        Group::new(list.iter().map(|&r| g.proc_at(r).expect("rank")).collect())
    };
    Ok(Some(Arc::new(Comm::derived(
        parent,
        Spec {
            kind: CommKind::Inter,
            group: group_of(&parent.group, &mine),
            rank: me as u32,
            remote: Some(group_of(remote, &theirs)),
            topo: None,
        },
        ctx,
    ))))
}

/// `MPI_Comm_create` on an intercommunicator: `group` is a subgroup of the local group
/// (empty, or not containing the caller, gives `None`); the result joins it with the
/// group the other side passed, or is `None` everywhere if either side's group is empty.
pub fn create_inter(parent: &Comm, group: &Group) -> MpiResult<Option<Arc<Comm>>> {
    let func = "MPI_Comm_create";
    same_session(parent, group, func)?;
    for &p in group.members() {
        if !parent.group.contains(p) {
            return fail(
                ErrorClass::Group,
                format!("{func}(group): a member of the group is not in the local group of the intercommunicator"),
            );
        }
    }
    let me = group.rank_of(parent.my_proc());
    split_inter(parent, me.map(|_| 0), me.map_or(0, |r| r as i32), func)
}

/// Split with a topology for the new communicators. Every process allgathers (colour, key,
/// entry-round contribution), so each colour's entry round is known everywhere; later
/// rounds run among the colour's members.
fn split_impl(
    parent: &Comm,
    color: Option<u32>,
    key_: i32,
    topo: Option<Arc<Topology>>,
    func: &str,
) -> MpiResult<Option<Arc<Comm>>> {
    intra_only(parent, func)?;
    let n = parent.size();
    let ch = Channel::collective(parent);
    let (mut agreement, block) = entry_block(parent, color, key_);
    let table = ch.allgather(&exchange::all(n), parent.rank as usize, tag::SPLIT, &block)?;
    let rows = Rows::new(&table, block.len());
    let entry_suffices = rows
        .colours()
        .into_iter()
        .all(|c| has_pair(&rows.entry_and(&rows.members(c))));
    let mut made = None;
    if let (Some(color), Some(agreement)) = (color, agreement.as_mut()) {
        let members = rows.members(color as i64);
        let me = position(&members, parent.rank);
        let reduced = rows.entry_and(&members);
        let alone = members.len() == 1;
        let settled = later_rounds(agreement, reduced, alone, parent, func, |b| {
            ch.allreduce_and(&members, me, tag::SUBSET, b)
        })?;
        made = Some(settled.map(|id| (id, (members, me))));
    }
    drop(agreement);
    if !entry_suffices {
        let everyone = exchange::all(n);
        verdict(&mut made, func, |b| {
            ch.allreduce_and(&everyone, parent.rank as usize, tag::VERDICT, b)
        })?;
    }
    let Some((ctx, (members, me))) = made.transpose()? else {
        return Ok(None);
    };
    let group = Group::new(
        members
            .iter()
            .map(|&r| parent.group.proc_at(r).expect("parent rank"))
            .collect(),
    );
    Ok(Some(Arc::new(Comm::derived(
        parent,
        Spec {
            kind: CommKind::Intra,
            group,
            rank: me as u32,
            remote: None,
            topo,
        },
        ctx,
    ))))
}

/// A split's agreement (none for `MPI_UNDEFINED`), begun and with its entry-round
/// contribution in the block this process allgathers: colour (i64, -1 = undefined), key
/// (i64), contribution.
fn entry_block(parent: &Comm, color: Option<u32>, key_: i32) -> (Option<Agreement>, Vec<u8>) {
    let mut agreement =
        color.map(|_| Agreement::begin(key(parent.context_id(), sub_key::COLLECTIVE)));
    let mut contrib = vec![0u64; contribution_len(ENTRY_WORDS)];
    if let Some(a) = agreement.as_mut() {
        a.contribute(&mut contrib);
    }
    let mut block = Vec::with_capacity(16 + contrib.len() * 8);
    block.extend_from_slice(&color.map_or(-1i64, |c| c as i64).to_le_bytes());
    block.extend_from_slice(&(key_ as i64).to_le_bytes());
    block.extend_from_slice(&words_to_bytes(&contrib));
    (agreement, block)
}

/// The allgathered blocks of a split (`entry_block`), one per rank.
struct Rows<'a> {
    table: &'a [u8],
    len: usize,
}

impl<'a> Rows<'a> {
    fn new(table: &'a [u8], len: usize) -> Rows<'a> {
        Rows { table, len }
    }

    fn count(&self) -> usize {
        self.table.len() / self.len
    }

    fn i64_at(&self, r: usize, off: usize) -> i64 {
        let at = r * self.len + off;
        i64::from_le_bytes(self.table[at..at + 8].try_into().expect("8"))
    }

    /// The colours of the table (not `MPI_UNDEFINED`), ascending.
    fn colours(&self) -> Vec<i64> {
        let mut c: Vec<i64> = (0..self.count())
            .map(|r| self.i64_at(r, 0))
            .filter(|&c| c >= 0)
            .collect();
        c.sort_unstable();
        c.dedup();
        c
    }

    /// The ranks of colour `color`, ordered by key, then rank.
    fn members(&self, color: i64) -> Vec<u32> {
        let mut m: Vec<(i64, u32)> = (0..self.count())
            .filter(|&r| self.i64_at(r, 0) == color)
            .map(|r| (self.i64_at(r, 8), r as u32))
            .collect();
        m.sort_unstable();
        m.into_iter().map(|(_, r)| r).collect()
    }

    /// The AND of the entry-round contributions of `ranks`.
    fn entry_and(&self, ranks: &[u32]) -> Vec<u64> {
        let mut reduced = vec![u64::MAX; contribution_len(ENTRY_WORDS)];
        for &r in ranks {
            let at = r as usize * self.len + 16;
            let mut w = vec![0u64; reduced.len()];
            bytes_to_words(&self.table[at..at + reduced.len() * 8], &mut w);
            reduced = and(reduced, &w);
        }
        reduced
    }
}

fn and(mut a: Vec<u64>, b: &[u64]) -> Vec<u64> {
    for (x, y) in a.iter_mut().zip(b) {
        *x &= *y;
    }
    a
}

/// Whether an entry-round reduction has a common pair.
fn has_pair(reduced: &[u64]) -> bool {
    reduced[..ENTRY_WORDS].iter().any(|w| *w != 0)
}

fn position(members: &[u32], rank: u32) -> usize {
    members
        .iter()
        .position(|&r| r == rank)
        .expect("this process is in its colour")
}

/// Settle a split's entry round (`reduced`, computed from the table) and run the later
/// rounds with `reduce` until the agreement settles (a colour of one process, `alone`, claims
/// its pair alone instead). `Ok(Err(_))`: the ids are exhausted (the caller tells the other
/// colours); `Err`: an exchange failed.
fn later_rounds(
    agreement: &mut Agreement,
    mut reduced: Vec<u64>,
    alone: bool,
    parent: &Comm,
    func: &str,
    mut reduce: impl FnMut(&mut [u64]) -> MpiResult<()>,
) -> MpiResult<MpiResult<u32>> {
    loop {
        match agreement.settle(&reduced) {
            Outcome::Got(id) => return Ok(Ok(id)),
            Outcome::Exhausted => return Ok(Err(context_id::exhausted(func))),
            Outcome::Retry if alone => {
                return Ok(context_id::claim_alone(func, pause(parent)));
            }
            Outcome::Retry => {
                pause(parent)();
                reduced = vec![0u64; contribution_len(agreement.words)];
                agreement.contribute(&mut reduced);
                reduce(&mut reduced)?;
            }
        }
    }
}

/// After a split whose entry round left some colour without a pair (so its outcome is known
/// only to its members), every process of the parent learns, with `reduce` (an AND over
/// all of them), whether every colour got its id; if one did not, the call fails everywhere
/// (with `MPI_ERR_OTHER`, as MPICH's does) and the ids claimed are given back. Processes that
/// went on while others stopped would wait for them forever.
fn verdict<T>(
    made: &mut Option<MpiResult<(u32, T)>>,
    func: &str,
    mut reduce: impl FnMut(&mut [u64]) -> MpiResult<()>,
) -> MpiResult<()> {
    let mut ok = [u64::from(!matches!(made, Some(Err(_))))];
    reduce(&mut ok)?;
    if ok[0] == 0 {
        return Err(match made.take() {
            Some(Ok((id, _))) => {
                context_id::release(id);
                context_id::exhausted(func)
            }
            Some(Err(e)) => e,
            None => context_id::exhausted(func),
        });
    }
    Ok(())
}

/// The parent ranks of `group`'s members (all must be in `parent`).
fn ranks_in(parent: &Comm, group: &Group, func: &str) -> MpiResult<Vec<u32>> {
    group
        .members()
        .iter()
        .map(|&p| {
            parent.group.rank_of(p).ok_or_else(|| {
                MpiError::new(
                    ErrorClass::Group,
                    format!("{func}(group): a member of the group is not in the communicator"),
                )
            })
        })
        .collect()
}

/// Sessions are isolated: a group of one session cannot make a communicator of another.
fn same_session(parent: &Comm, group: &Group, func: &str) -> MpiResult<()> {
    match group.origin() {
        Some(s) if !Arc::ptr_eq(s, &parent.session) => fail(
            ErrorClass::Group,
            format!("{func}(group): the group belongs to another session than the communicator"),
        ),
        _ => Ok(()),
    }
}

/// `MPI_Comm_create` on an intracommunicator: collective over `parent`; each process passes
/// the group it will be in (disjoint groups allowed), or one it is not in.
pub fn create(parent: &Comm, group: &Group) -> MpiResult<Option<Arc<Comm>>> {
    let func = "MPI_Comm_create";
    intra_only(parent, func)?;
    same_session(parent, group, func)?;
    let ranks = ranks_in(parent, group, func)?;
    let me = parent.my_proc();
    let color = group.rank_of(me).map(|_| ranks[0]);
    let key_ = group.rank_of(me).map_or(0, |r| r as i32);
    split_impl(parent, color, key_, None, func)
}

/// `MPI_Comm_create_group`: collective over the members of `group` only.
pub fn create_group(parent: &Comm, group: &Group, user_tag: i32) -> MpiResult<Option<Arc<Comm>>> {
    let func = "MPI_Comm_create_group";
    intra_only(parent, func)?;
    same_session(parent, group, func)?;
    let members = ranks_in(parent, group, func)?;
    let Some(me) = group.rank_of(parent.my_proc()) else {
        return fail(
            ErrorClass::Group,
            format!("{func}(group): the calling process is not a member of the group"),
        );
    };
    let ch = Channel::collective(parent);
    let t = tag::group(user_tag);
    let ctx = if members.len() == 1 {
        context_id::claim_alone(func, pause(parent))?
    } else {
        let k = key(parent.context_id(), sub_key::group(user_tag));
        context_id::agree(
            k,
            func,
            |buf| ch.allreduce_and(&members, me as usize, t, buf),
            pause(parent),
        )?
    };
    Ok(Some(Arc::new(Comm::derived(
        parent,
        Spec {
            kind: CommKind::Intra,
            group: group.clone(),
            rank: me,
            remote: None,
            topo: None,
        },
        ctx,
    ))))
}

/// `MPI_Comm_split_type`'s kinds.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SplitType {
    /// `MPI_COMM_TYPE_SHARED`: processes that can share memory (one node).
    Shared,
    /// `MPI_COMM_TYPE_HW_GUIDED` with the `mpi_hw_resource_type` hint's value.
    Guided(String),
    /// `MPI_COMM_TYPE_HW_UNGUIDED`: the largest hardware level that splits the parent.
    Unguided,
}

/// This process's domain at each hardware level of `hw::TYPES` (largest first), as a colour
/// unique among the job's nodes: the node, then the resource of the CPU it runs on (-1
/// where `/sys` does not say).
fn hw_domains(parent: &Comm) -> Vec<i64> {
    let job = &parent.session.instance.job;
    let node = job.node_of[parent.my_proc() as usize] as i64;
    let cpu = hw::current_cpu();
    (0..hw::TYPES.len())
        .map(|t| {
            cpu.and_then(|c| hw::domain(c, t))
                .map_or(-1, |id| ((node << 16) | id as i64) & 0x7fff_ffff)
        })
        .collect()
}

/// `MPI_Comm_split_type`; `kind` `None` is `MPI_UNDEFINED`.
pub fn split_type(
    parent: &Comm,
    kind: Option<SplitType>,
    key_: i32,
) -> MpiResult<Option<Arc<Comm>>> {
    split_type_level(parent, kind, key_).map(|(c, _)| c)
}

/// `split_type`, also returning the level an unguided split chose (its
/// `mpi_hw_resource_type` value, which the caller reports in the info argument).
pub fn split_type_level(
    parent: &Comm,
    kind: Option<SplitType>,
    key_: i32,
) -> MpiResult<(Option<Arc<Comm>>, Option<&'static str>)> {
    let func = "MPI_Comm_split_type";
    let mut chosen = None;
    let node = || parent.session.instance.job.node_of[parent.my_proc() as usize];
    let color = match &kind {
        None => None,
        Some(SplitType::Shared) => Some(node()),
        Some(SplitType::Guided(v)) => match hw::type_index(v) {
            Some(0) => Some(node()),
            Some(t) => {
                let d = hw_domains(parent)[t];
                (d >= 0).then_some(d as u32)
            }
            None => None,
        },
        Some(SplitType::Unguided) => {
            // Everyone learns everyone's domains (both groups of an intercommunicator), then
            // all pick the same level: the largest that splits them into more than one part.
            let d = hw_domains(parent);
            let block: Vec<u8> = d.iter().flat_map(|x| x.to_le_bytes()).collect();
            let table = everyones_blocks(parent, &block)?;
            let n = table.len() / block.len();
            let at = |r: usize, l: usize| {
                let o = r * block.len() + l * 8;
                i64::from_le_bytes(table[o..o + 8].try_into().expect("8"))
            };
            let level = (0..d.len())
                .find(|&l| (0..n).all(|r| at(r, l) >= 0) && (1..n).any(|r| at(r, l) != at(0, l)));
            chosen = level.map(|l| hw::TYPES[l]);
            level.map(|l| d[l] as u32)
        }
    };
    // On an intercommunicator the processes of one domain on both sides form a new
    // intercommunicator (a domain present on one side only gives none), as MPICH does.
    let new = if parent.is_inter() {
        split_inter(parent, color, key_, func)?
    } else {
        split_impl(parent, color, key_, None, func)?
    };
    Ok((new, chosen))
}

/// Every process's `block` (all the same length), in rank order: the parent's, or on an
/// intercommunicator the local group's followed by the remote group's.
fn everyones_blocks(parent: &Comm, block: &[u8]) -> MpiResult<Vec<u8>> {
    let n = parent.size();
    let me = parent.rank as usize;
    if !parent.is_inter() {
        return Channel::collective(parent).allgather(&exchange::all(n), me, tag::SPLIT, block);
    }
    let mut table = Channel::local(parent).allgather(&exchange::all(n), me, tag::SPLIT, block)?;
    let mut remote = vec![0u8; parent.peer_size() as usize * block.len()];
    inter_levels(parent).swap(&table, &mut remote)?;
    table.extend_from_slice(&remote);
    Ok(table)
}

// ------------------------------------------------------------------ intercommunicators

/// `MPI_Intercomm_create`: `peer` (and `remote_leader`) matter only at the local leader.
pub fn intercomm_create(
    local: &Comm,
    local_leader: u32,
    peer: Option<&Comm>,
    remote_leader: u32,
    user_tag: i32,
) -> MpiResult<Arc<Comm>> {
    let func = "MPI_Intercomm_create";
    intra_only(local, func)?;
    let am_leader = local.rank == local_leader;
    let t = tag::intercomm(user_tag);
    let levels = TwoLevel {
        local: Channel::collective(local),
        local_tag: tag::LOCAL,
        members: exchange::all(local.size()),
        me: local.rank as usize,
        leader: local_leader as usize,
        bridge: match (am_leader, peer) {
            (true, Some(p)) => Some((Channel::collective(p), remote_leader, t)),
            (true, None) => {
                return fail(
                    ErrorClass::Comm,
                    format!("{func}(peer_comm): the local leader needs a peer communicator"),
                )
            }
            (false, _) => None,
        },
    };
    // The leaders swap the lengths of their member lists and their local context ids, then
    // the lists; each leader broadcasts the other's. Members go by the names every job
    // knows them by (`Instance::encode_names`), not by this process's ids: the groups may
    // hold processes of other jobs, which each process numbers in its own connection order.
    let inst = &local.session.instance;
    let mine = inst.encode_names(local.group.members(), func)?;
    let mut mine_n = (mine.len() as u64).to_le_bytes().to_vec();
    mine_n.extend_from_slice(&(local.context_id() as u64).to_le_bytes());
    let mut theirs_n = [0u8; 16];
    levels.swap(&mine_n, &mut theirs_n)?;
    let remote_len = u64::from_le_bytes(theirs_n[..8].try_into().expect("8")) as usize;
    let remote_context = u64::from_le_bytes(theirs_n[8..].try_into().expect("8")) as u32;
    let mut theirs = vec![0u8; remote_len];
    levels.swap(&mine, &mut theirs)?;
    let names = match ProcName::decode_all(&theirs) {
        Some((names, [])) => names,
        _ => {
            return fail(
                ErrorClass::Intern,
                format!("{func}: the other leader's member list is garbled"),
            )
        }
    };
    // Groups of this job alone need no connection, and so no agreement that all connected
    // (every member of both groups sees the same: a process of another job in either list).
    let job_name = inst.job.name();
    let one_job = local.group.members().iter().all(|&p| p < inst.job.size)
        && names
            .iter()
            .all(|n| n.job == job_name && n.rank < inst.job.size);
    let remote = Group::new(if one_job {
        names.iter().map(|n| n.rank).collect()
    } else {
        inst.connect_all(&names, func, |w| levels.reduce(w))?
    });
    if remote.members().iter().any(|&p| local.group.contains(p)) {
        return fail(
            ErrorClass::Comm,
            format!("{func}: the local and remote groups overlap"),
        );
    }
    // The agreement's key must be the same on both sides: the lower local context id.
    let k = key(
        local.context_id().min(remote_context),
        sub_key::intercomm(user_tag),
    );
    let ctx = context_id::agree(k, func, |b| levels.reduce(b), pause(local))?;
    Ok(Comm::inter(local, remote, ctx))
}

/// `MPI_Intercomm_merge`: an intracommunicator of both groups; the group that passed
/// `high = false` comes first (if both passed the same, the one holding the lower job rank).
pub fn intercomm_merge(inter: &Comm, high: bool) -> MpiResult<Arc<Comm>> {
    let func = "MPI_Intercomm_merge";
    let remote = inter.remote.clone().ok_or_else(|| {
        MpiError::new(
            ErrorClass::Comm,
            format!("{func}(intercomm): an intercommunicator is required"),
        )
    })?;
    let levels = inter_levels(inter);
    // With equal `high`s, the group holding the lower process goes first; processes are
    // compared by a key every job computes alike (the groups may be of two jobs).
    let inst = &inter.session.instance;
    let lowest = |g: &Group| g.members().iter().map(|&p| inst.universal_key(p)).min();
    let (job, rank) = lowest(&inter.group).unwrap_or_default();
    let mut mine = vec![high as u8];
    mine.extend_from_slice(&job.to_le_bytes());
    mine.extend_from_slice(&rank.to_le_bytes());
    let mut theirs = [0u8; 13];
    levels.swap(&mine, &mut theirs)?;
    let remote_high = theirs[0] != 0;
    let remote_lowest = (
        u64::from_le_bytes(theirs[1..9].try_into().expect("8")),
        u32::from_le_bytes(theirs[9..13].try_into().expect("4")),
    );
    let local_first = if high != remote_high {
        !high
    } else {
        (job, rank) < remote_lowest
    };
    let k = key(inter.context_id(), sub_key::COLLECTIVE);
    let ctx = context_id::agree(k, func, |b| levels.reduce(b), pause(inter))?;
    let (group, rank) = if local_first {
        (inter.group.union(&remote), inter.rank)
    } else {
        (remote.union(&inter.group), remote.size() + inter.rank)
    };
    Ok(Arc::new(Comm::derived(
        inter,
        Spec {
            kind: CommKind::Intra,
            group,
            rank,
            remote: None,
            topo: None,
        },
        ctx,
    )))
}

// -------------------------------------------------------------------------- topologies

/// `MPI_Cart_create`: ranks beyond the grid get no communicator (reordering keeps ranks).
pub fn cart_create(parent: &Comm, dims: &[i32], periods: &[bool]) -> MpiResult<Option<Arc<Comm>>> {
    let func = "MPI_Cart_create";
    intra_only(parent, func)?;
    let n = super::topo::cart_size(dims, func)?;
    if n > parent.size() {
        return fail(
            ErrorClass::Arg,
            format!(
                "{func}(dims): the grid has {n} processes, more than the communicator's {}",
                parent.size()
            ),
        );
    }
    let topo = Arc::new(Topology::Cart {
        dims: dims.to_vec(),
        periods: periods.to_vec(),
    });
    let color = (parent.rank < n).then_some(0);
    split_impl(parent, color, parent.rank as i32, Some(topo), func)
}

/// `MPI_Cart_sub`: the sub-grids that keep the dimensions `remain`.
pub fn cart_sub(cart: &Comm, remain: &[bool]) -> MpiResult<Option<Arc<Comm>>> {
    let func = "MPI_Cart_sub";
    let Some(Topology::Cart { dims, periods }) = cart.topo.as_deref() else {
        return fail(
            ErrorClass::Topology,
            format!("{func}(comm): not a Cartesian communicator"),
        );
    };
    let coords = Topology::cart_coords(dims, cart.rank);
    let (mut color, mut key_) = (0i64, 0i64);
    let (mut sub_dims, mut sub_periods) = (Vec::new(), Vec::new());
    for i in 0..dims.len() {
        if remain[i] {
            key_ = key_ * dims[i] as i64 + coords[i] as i64;
            sub_dims.push(dims[i]);
            sub_periods.push(periods[i]);
        } else {
            color = color * dims[i] as i64 + coords[i] as i64;
        }
    }
    let topo = Arc::new(Topology::Cart {
        dims: sub_dims,
        periods: sub_periods,
    });
    split_impl(cart, Some(color as u32), key_ as i32, Some(topo), func)
}

/// `MPI_Graph_create`: ranks beyond the graph's nodes get no communicator.
pub fn graph_create(parent: &Comm, index: &[i32], edges: &[i32]) -> MpiResult<Option<Arc<Comm>>> {
    let func = "MPI_Graph_create";
    intra_only(parent, func)?;
    let n = index.len() as u32;
    if n > parent.size() {
        return fail(
            ErrorClass::Arg,
            format!(
                "{func}(nnodes={n}): more nodes than the communicator's {} processes",
                parent.size()
            ),
        );
    }
    super::topo::check_graph(n as i32, index, edges, func)?;
    let topo = Arc::new(Topology::Graph {
        index: index.to_vec(),
        edges: edges.to_vec(),
    });
    let color = (parent.rank < n).then_some(0);
    split_impl(parent, color, parent.rank as i32, Some(topo), func)
}

/// A communicator over all of `parent` with topology `topo` (distributed graphs).
fn with_topology(parent: &Comm, topo: Topology, func: &str) -> MpiResult<Arc<Comm>> {
    intra_only(parent, func)?;
    let ctx = agree_intra(parent, func)?;
    Ok(Arc::new(Comm::derived(
        parent,
        Spec {
            kind: CommKind::Intra,
            group: parent.group.clone(),
            rank: parent.rank,
            remote: None,
            topo: Some(Arc::new(topo)),
        },
        ctx,
    )))
}

/// `MPI_Dist_graph_create_adjacent`.
pub fn dist_graph_create_adjacent(
    parent: &Comm,
    sources: Vec<i32>,
    source_weights: Vec<i32>,
    destinations: Vec<i32>,
    dest_weights: Vec<i32>,
    weighted: bool,
) -> MpiResult<Arc<Comm>> {
    with_topology(
        parent,
        Topology::DistGraph {
            sources,
            source_weights,
            destinations,
            dest_weights,
            weighted,
        },
        "MPI_Dist_graph_create_adjacent",
    )
}

/// `MPI_Dist_graph_create`: `edges` are (source, destination, weight) triples this process
/// specifies; each goes to the two processes it concerns.
pub fn dist_graph_create(
    parent: &Comm,
    edges: &[(i32, i32, i32)],
    weighted: bool,
) -> MpiResult<Arc<Comm>> {
    let func = "MPI_Dist_graph_create";
    intra_only(parent, func)?;
    let n = parent.size() as usize;
    let me = parent.rank as usize;
    let ch = Channel::collective(parent);
    // For every process, the edges that concern it, with (origin, position) for a stable order.
    let mut outbox: Vec<Vec<i32>> = vec![Vec::new(); n];
    for (pos, &(s, d, w)) in edges.iter().enumerate() {
        let rec = [s, d, w, me as i32, pos as i32];
        outbox[s as usize].extend_from_slice(&rec);
        if d != s {
            outbox[d as usize].extend_from_slice(&rec);
        }
    }
    let to_bytes = |v: &[i32]| -> Vec<u8> { v.iter().flat_map(|x| x.to_le_bytes()).collect() };
    let mut mine: Vec<i32> = outbox[me].clone();
    for step in 1..n {
        let to = ((me + step) % n) as u32;
        let from = ((me + n - step) % n) as u32;
        let len = (outbox[to as usize].len() as u64).to_le_bytes();
        let mut their_len = [0u8; 8];
        ch.sendrecv(to, &len, from, &mut their_len, tag::EDGES)?;
        let mut got = vec![0u8; u64::from_le_bytes(their_len) as usize * 4];
        ch.sendrecv(
            to,
            &to_bytes(&outbox[to as usize]),
            from,
            &mut got,
            tag::EDGES,
        )?;
        mine.extend(
            got.chunks_exact(4)
                .map(|c| i32::from_le_bytes(c.try_into().expect("4"))),
        );
    }
    let mut recs: Vec<[i32; 5]> = mine
        .chunks_exact(5)
        .map(|c| [c[0], c[1], c[2], c[3], c[4]])
        .collect();
    recs.sort_by_key(|r| (r[3], r[4]));
    let (mut sources, mut sw, mut dests, mut dw) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for r in &recs {
        if r[1] == me as i32 {
            sources.push(r[0]);
            sw.push(r[2]);
        }
        if r[0] == me as i32 {
            dests.push(r[1]);
            dw.push(r[2]);
        }
    }
    with_topology(
        parent,
        Topology::DistGraph {
            sources,
            source_weights: sw,
            destinations: dests,
            dest_weights: dw,
            weighted,
        },
        func,
    )
}
