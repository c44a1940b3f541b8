//! Point-to-point between the thread ranks of one process: the `thread` transport.
//!
//! Each rank has a lock-free queue (`queue::Mpsc`) that every sender pushes envelopes onto,
//! and a private list of posted receives and unexpected messages behind a lock that only its
//! own thread takes in the common case (a thread waiting on another rank's request may
//! progress that rank with `try_lock`, never blocking on it). Small messages are copied into
//! the envelope (eager); larger ones and synchronous sends travel as the sender's buffer, and
//! the receiver copies once from it into its own, then sets the envelope's `done` flag that the
//! sender waits for.
//!
//! A small message from a thread of this process usually skips the queue: it goes in the
//! slot of its sender/receiver pair (`pair`), which the receiver looks at before its queue.
//! Whenever `pair` says the slot cannot be used, the message goes through the queue, counted
//! so that the receiver takes the slot before it (MPI's order between two ranks).
//!
//! A blocking receive that found nothing waits without its lock (`Mailbox::quiet`): it polls
//! the slots it looks at, the queue's head and `moved` with plain loads until one changes,
//! then makes a locked pass again. Matching stays under the lock; the polling only decides
//! when to look. It misses nothing: a message reaches the receiver's lists only through a
//! slot, the queue, or another thread's `try_progress`, which moves it under the lock and
//! bumps `moved` there; the receiver read `moved` under the lock at the end of its pass, so
//! either that pass saw the moved message or its later value differs from the one read
//! (the lock orders the two). A slot or queue filled after the pass is seen by a later load
//! (coherence), so the wait ends.
#![forbid(unsafe_code)]

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use super::coll::Line;
use super::pair::{Pair, Taken, SLOT_BYTES};
use super::queue::Mpsc;
use crate::datatype::Buf;
use crate::error::ErrorClass;
use crate::message::{SourceSel, Status, TagSel};

/// Largest message copied into its envelope; larger ones are copied once, by the receiver,
/// straight from the sender's buffer.
pub const EAGER_MAX: usize = 16 * 1024;

/// A message whose data the receiver copies from the sender's buffer.
#[derive(Debug)]
pub struct Direct {
    pub buf: Buf,
    /// Set by the receiver once it copied (the sender's buffer is free again).
    pub done: AtomicBool,
}

/// Largest message carried in the envelope itself (no allocation besides the queue's node).
const SMALL: usize = SLOT_BYTES;

/// Most thread ranks per process given pair slots (`n * n` of them, two lines each).
pub const PAIRS_MAX: u32 = 64;

#[derive(Debug)]
enum Payload {
    Small(u8, [u8; SMALL]),
    Eager(Vec<u8>),
    Direct(Arc<Direct>),
}

impl Payload {
    fn len(&self) -> usize {
        match self {
            Payload::Small(n, _) => usize::from(*n),
            Payload::Eager(v) => v.len(),
            Payload::Direct(d) => d.buf.len(),
        }
    }
}

/// Which traffic an envelope belongs to: the program's point-to-point messages, the
/// messages of the collectives that run over point-to-point (`span`), or those of
/// partitioned operations (`part`); no user receive or probe matches the last two.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Ctx {
    User,
    Coll,
    Part,
}

#[derive(Debug)]
pub(super) struct Envelope {
    src: u32,
    tag: i32,
    ctx: Ctx,
    /// Counted in the `pair` of its sender (a thread of this process).
    paired: bool,
    payload: Payload,
}

impl Envelope {
    fn from_slot(src: u32, t: Taken) -> Envelope {
        Envelope {
            src,
            tag: t.tag,
            ctx: Ctx::User,
            paired: false,
            payload: Payload::Small(t.len as u8, t.bytes),
        }
    }
}

/// A receive waiting for its message.
#[derive(Debug)]
pub struct PostedRecv {
    ctx: Ctx,
    source: SourceSel,
    tag: TagSel,
    buf: Buf,
    /// Set once matched and copied.
    pub status: OnceLock<Status>,
}

impl PostedRecv {
    fn matches(&self, e: &Envelope) -> bool {
        matches(self.ctx, self.source, self.tag, e)
    }
}

fn matches(ctx: Ctx, source: SourceSel, tag: TagSel, e: &Envelope) -> bool {
    e.ctx == ctx
        && (match source {
            SourceSel::Any => true,
            SourceSel::Rank(r) => r == e.src,
        })
        && (match tag {
            TagSel::Any => true,
            TagSel::Tag(t) => t == e.tag,
            TagSel::Masked { tag, ignore } => e.tag & !ignore == tag,
        })
}

/// A message a matched probe took out of its rank's mailbox (`MPI_Mprobe`), until a matched
/// receive copies it (`deliver`).
#[derive(Debug)]
pub struct Matched(Envelope);

impl Matched {
    /// Copy the message into `buf` (a direct sender is released): the receive's status.
    pub fn deliver(self, buf: &Buf) -> Status {
        deliver(self.0, buf)
    }
}

/// What only the rank itself (or one thread progressing it) touches.
#[derive(Debug, Default)]
pub(super) struct Local {
    unexpected: VecDeque<Envelope>,
    posted: VecDeque<Arc<PostedRecv>>,
    incoming: VecDeque<Envelope>,
}

/// One thread rank's mailbox, on cache lines of its own, in three parts: the queue's head
/// (written by senders that queue), the owner's lock and lists (written by the owner on each
/// locked pass), and what senders only read (`base`, `pairs`). Side by side in one line, the
/// owner's passes would take the line away from the senders that read it, and the ranks'
/// mailboxes (adjacent in memory) would bounce lines between their owners' cores.
#[repr(align(128))]
pub(super) struct Mailbox {
    queue: Line<Mpsc<Envelope>>,
    local: Line<Mutex<Local>>,
    /// Passes by other threads (`try_progress`) that moved arrivals into `local`: a waiting
    /// owner that polls without the lock (`quiet`) sees its lists changed.
    moved: AtomicU32,
    /// The rank of the process's first thread (whose pair is `pairs[0]`).
    base: u32,
    /// Per sender of this process: its pair slot (none past `PAIRS_MAX` threads).
    pairs: Box<[Line<Pair>]>,
}

/// Which pair slots a pass looks at (before the queue).
#[derive(Clone, Copy)]
enum Look {
    All,
    One(usize),
    None,
}

fn lock(m: &Mutex<Local>) -> MutexGuard<'_, Local> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Copy `e`'s data into `buf`; the receive's status.
fn deliver(e: Envelope, buf: &Buf) -> Status {
    let len = e.payload.len();
    let n = len.min(buf.len());
    match &e.payload {
        Payload::Small(_, b) => buf.unpack(0, &b[..n]),
        Payload::Eager(v) => buf.unpack(0, &v[..n]),
        Payload::Direct(d) => {
            d.buf.copy_to(buf, n);
            d.done.store(true, Ordering::Release);
        }
    }
    let mut status = Status {
        source: e.src as i32,
        tag: e.tag,
        bytes: n as u64,
        ..Status::default()
    };
    if len > buf.len() {
        status.error = ErrorClass::Truncate as i32;
    } else if buf.ends_inside_element(n as u64) {
        status.error = ErrorClass::Type as i32;
    }
    status
}

impl Mailbox {
    /// The mailbox of a rank of a process whose `n` threads are ranks `base ..`.
    pub(super) fn new(base: u32, n: u32) -> Mailbox {
        let pairs = if n <= PAIRS_MAX { n } else { 0 };
        Mailbox {
            queue: Line(Mpsc::new()),
            local: Line(Mutex::default()),
            moved: AtomicU32::new(0),
            base,
            pairs: (0..pairs).map(|_| Line(Pair::default())).collect(),
        }
    }

    /// The pair slot of rank `src`, if it is a thread of this process that has one.
    fn pair_of(&self, src: u32) -> Option<&Pair> {
        let i = src.checked_sub(self.base)? as usize;
        self.pairs.get(i).map(|l| &l.0)
    }

    /// Which slots a pass for messages from `source` looks at.
    fn look(&self, source: SourceSel) -> Look {
        match source {
            SourceSel::Any => Look::All,
            SourceSel::Rank(r) => match r.checked_sub(self.base) {
                Some(i) if (i as usize) < self.pairs.len() => Look::One(i as usize),
                _ => Look::None,
            },
        }
    }

    /// A message from `src`, a thread of this process (its own thread calls this): through
    /// their pair slot when it can (`pair`), else queued.
    pub(super) fn push(&self, src: u32, tag: i32, buf: &Buf, direct: bool) -> Option<Arc<Direct>> {
        let Some(pair) = self.pair_of(src) else {
            return self.push_in(Ctx::User, src, tag, buf, direct);
        };
        if !direct && buf.len() <= SLOT_BYTES {
            let mut b = [0u8; SLOT_BYTES];
            buf.pack(0, &mut b[..buf.len()]);
            if pair.put(tag, &b[..buf.len()]) {
                return None;
            }
        }
        pair.enqueue();
        self.push_envelope((Ctx::User, true), src, tag, buf, direct)
    }

    /// `push` in traffic `ctx`.
    pub(super) fn push_in(
        &self,
        ctx: Ctx,
        src: u32,
        tag: i32,
        buf: &Buf,
        direct: bool,
    ) -> Option<Arc<Direct>> {
        self.push_envelope((ctx, false), src, tag, buf, direct)
    }

    /// Queue a message in traffic `ctx`, `paired` when its sender's pair counted it.
    fn push_envelope(
        &self,
        (ctx, paired): (Ctx, bool),
        src: u32,
        tag: i32,
        buf: &Buf,
        direct: bool,
    ) -> Option<Arc<Direct>> {
        if direct {
            let d = Arc::new(Direct {
                buf: *buf,
                done: AtomicBool::new(false),
            });
            self.queue.0.push(Envelope {
                src,
                tag,
                ctx,
                paired,
                payload: Payload::Direct(d.clone()),
            });
            Some(d)
        } else {
            let payload = if buf.len() <= SMALL {
                let mut b = [0u8; SMALL];
                buf.pack(0, &mut b[..buf.len()]);
                Payload::Small(buf.len() as u8, b)
            } else {
                let mut v = vec![0u8; buf.len()];
                buf.pack(0, &mut v);
                Payload::Eager(v)
            };
            self.queue.0.push(Envelope {
                src,
                tag,
                ctx,
                paired,
                payload,
            });
            None
        }
    }

    /// Queue a message whose bytes are already copied (a collective's, or one that came
    /// from another process).
    pub(super) fn push_bytes(&self, src: u32, tag: i32, ctx: Ctx, data: Vec<u8>) {
        self.queue.0.push(Envelope {
            src,
            tag,
            ctx,
            paired: false,
            payload: Payload::Eager(data),
        });
    }

    /// Take the oldest collective message from `src`, if one arrived.
    pub(super) fn take_coll(&self, src: u32) -> Option<Vec<u8>> {
        let mut l = lock(&self.local.0);
        self.progress_locked(&mut l, Look::None);
        let i = l
            .unexpected
            .iter()
            .position(|e| e.ctx == Ctx::Coll && e.src == src)?;
        match l
            .unexpected
            .remove(i)
            .expect("position is in range")
            .payload
        {
            Payload::Eager(v) => Some(v),
            Payload::Small(n, b) => Some(b[..usize::from(n)].to_vec()),
            Payload::Direct(_) => unreachable!("collective messages are always copied"),
        }
    }

    /// Match what arrived (the slots `look` names, then the queue) against the posted
    /// receives (in order), keeping the rest as unexpected. Returns whether anything arrived.
    fn progress_locked(&self, l: &mut Local, look: Look) -> bool {
        let mut arrived = match look {
            Look::All => {
                // Every slot is taken (no short cut once one had a message).
                let mut any = false;
                for i in 0..self.pairs.len() {
                    any |= self.take_slot(l, i);
                }
                any
            }
            Look::One(i) => self.take_slot(l, i),
            Look::None => false,
        };
        let mut incoming = std::mem::take(&mut l.incoming);
        if self.queue.0.take_all(&mut incoming) != 0 {
            arrived = true;
        }
        while let Some(e) = incoming.pop_front() {
            // A counted message comes after what its sender's slot holds (`pair`).
            let paired = e.paired.then(|| (e.src - self.base) as usize);
            if let Some(i) = paired {
                self.take_slot(l, i);
            }
            arrive(l, e);
            if let Some(i) = paired {
                self.pairs[i].0.dequeue();
            }
        }
        l.incoming = incoming;
        arrived
    }

    /// Move the message in sender `i`'s slot, if any, to the posted receive it matches or
    /// the unexpected ones: whether there was one.
    fn take_slot(&self, l: &mut Local, i: usize) -> bool {
        match self.pairs[i].0.take() {
            Some(t) => {
                arrive(l, Envelope::from_slot(self.base + i as u32, t));
                true
            }
            None => false,
        }
    }

    /// Progress by the owner: whether anything arrived.
    pub(super) fn progress(&self) -> bool {
        self.progress_locked(&mut lock(&self.local.0), Look::All)
    }

    /// Progress from a thread that may not be the owner: skipped when someone else holds it.
    pub(super) fn try_progress(&self) {
        if let Ok(mut l) = self.local.0.try_lock() {
            if self.progress_locked(&mut l, Look::All) {
                // Under the lock, so an owner that read `moved` under it sees the change.
                self.moved.fetch_add(1, Ordering::Relaxed);
            }
        }
    }

    /// Whether nothing that a pass looking at `look` would take can have arrived since the
    /// owner read `moved` (as `epoch`) under the lock: the slots are empty, the queue too,
    /// and no other thread moved arrivals. Plain loads of lines that the senders write only
    /// when they send, so a waiting owner polls them without the lock; a hint (a message may
    /// land right after), after which the owner's next locked pass decides.
    fn quiet(&self, look: Look, epoch: u32) -> bool {
        let slots_empty = match look {
            Look::All => self.pairs.iter().all(|p| !p.0.has_message()),
            Look::One(i) => !self.pairs[i].0.has_message(),
            Look::None => true,
        };
        slots_empty && self.queue.0.is_empty() && self.moved.load(Ordering::Relaxed) == epoch
    }

    /// Post a receive: matched at once against an unexpected message if one fits, else
    /// queued (and completed by a later progress).
    pub(super) fn post(&self, source: SourceSel, tag: TagSel, buf: Buf) -> Arc<PostedRecv> {
        self.post_in(Ctx::User, source, tag, buf)
    }

    /// `post` in traffic `ctx`.
    pub(super) fn post_in(
        &self,
        ctx: Ctx,
        source: SourceSel,
        tag: TagSel,
        buf: Buf,
    ) -> Arc<PostedRecv> {
        let p = Arc::new(PostedRecv {
            ctx,
            source,
            tag,
            buf,
            status: OnceLock::new(),
        });
        let mut l = lock(&self.local.0);
        self.progress_locked(&mut l, self.look(source));
        // No posted receive matches an unexpected message (each took the first that fitted
        // when posted, and progress gives arrivals to posted receives first), so this one
        // may take the oldest that fits.
        if let Some(i) = l.unexpected.iter().position(|e| p.matches(e)) {
            let e = l.unexpected.remove(i).expect("position is in range");
            let _ = p.status.set(deliver(e, &p.buf));
            return p;
        }
        l.posted.push_back(p.clone());
        p
    }

    /// A blocking receive by the owner: the oldest message that `source`/`tag` match, waited
    /// for; `on_idle` runs after each pass that found nothing. No receive is posted (no
    /// allocation): while its thread waits here the rank posts nothing else, so arrivals that
    /// match no receive posted earlier go to the unexpected messages (in order) and this
    /// receive takes the first that fits, as a posted one would. Only arrivals are appended to
    /// them meanwhile (other threads' `try_progress`), so each pass looks at the new ones.
    pub(super) fn recv(
        &self,
        source: SourceSel,
        tag: TagSel,
        buf: &Buf,
        mut on_idle: impl FnMut(&mut u32),
    ) -> Status {
        let (mut spins, mut seen) = (0u32, 0usize);
        let look = self.look(source);
        loop {
            let mut l = lock(&self.local.0);
            if let Look::One(i) = look {
                if let Some(e) = self.slot_first(&l, i) {
                    if matches(Ctx::User, source, tag, &e) {
                        drop(l);
                        return deliver(e, buf);
                    }
                    l.unexpected.push_back(e);
                }
            }
            let arrived = self.progress_locked(&mut l, look);
            let found = l
                .unexpected
                .iter()
                .skip(seen)
                .position(|e| matches(Ctx::User, source, tag, e));
            if let Some(i) = found {
                let e = l.unexpected.remove(seen + i).expect("position is in range");
                drop(l);
                return deliver(e, buf);
            }
            seen = l.unexpected.len();
            let epoch = self.moved.load(Ordering::Relaxed);
            drop(l);
            if !arrived {
                on_idle(&mut spins);
                // Poll without the lock until something may have arrived.
                while self.quiet(look, epoch) {
                    on_idle(&mut spins);
                }
            }
        }
    }

    /// Sender `i`'s slot message when it is the oldest message from `i` that no receive
    /// posted earlier takes (none is posted, and no message of `i`'s is unexpected): the
    /// blocking receive's short path, past the matching lists.
    fn slot_first(&self, l: &Local, i: usize) -> Option<Envelope> {
        let src = self.base + i as u32;
        if !l.posted.is_empty()
            || l.unexpected
                .iter()
                .any(|e| e.ctx == Ctx::User && e.src == src)
        {
            return None;
        }
        self.pairs[i].0.take().map(|t| Envelope::from_slot(src, t))
    }

    /// The status of the first unexpected message `source`/`tag` match, if any (probe).
    pub(super) fn probe(&self, source: SourceSel, tag: TagSel) -> Option<Status> {
        let mut l = lock(&self.local.0);
        self.progress_locked(&mut l, self.look(source));
        l.unexpected
            .iter()
            .find(|e| matches(Ctx::User, source, tag, e))
            .map(|e| Status {
                source: e.src as i32,
                tag: e.tag,
                bytes: e.payload.len() as u64,
                ..Status::default()
            })
    }

    /// Take the first unexpected message `source`/`tag` match, if any (matched probe): no
    /// later receive or probe sees it.
    pub(super) fn take_match(&self, source: SourceSel, tag: TagSel) -> Option<(Status, Matched)> {
        let mut l = lock(&self.local.0);
        self.progress_locked(&mut l, self.look(source));
        let i = l
            .unexpected
            .iter()
            .position(|e| matches(Ctx::User, source, tag, e))?;
        let e = l.unexpected.remove(i).expect("position is in range");
        let status = Status {
            source: e.src as i32,
            tag: e.tag,
            bytes: e.payload.len() as u64,
            ..Status::default()
        };
        Some((status, Matched(e)))
    }

    /// Whether receives are posted and not matched yet.
    pub(super) fn has_posted(&self) -> bool {
        !lock(&self.local.0).posted.is_empty()
    }

    /// Drop the program's messages (after the region ended; an erroneous program's
    /// leftovers). Direct messages are marked done so no sender waits forever. Collective
    /// messages stay: another process's part of the finish may have sent one already.
    pub(super) fn clear(&self) {
        let mut l = lock(&self.local.0);
        self.progress_locked(&mut l, Look::All);
        l.unexpected.retain(|e| match &e.payload {
            _ if e.ctx == Ctx::Coll => true,
            Payload::Direct(d) => {
                d.done.store(true, Ordering::Release);
                false
            }
            Payload::Small(..) | Payload::Eager(_) => false,
        });
        l.posted.clear();
    }
}

/// Hand an arrival to the first posted receive it matches, else keep it as unexpected.
fn arrive(l: &mut Local, e: Envelope) {
    match l.posted.iter().position(|p| p.matches(&e)) {
        Some(i) => {
            let p = l.posted.remove(i).expect("position is in range");
            let s = deliver(e, &p.buf);
            let _ = p.status.set(s);
        }
        None => l.unexpected.push_back(e),
    }
}

/// The envelope is sent as the sender's buffer (receiver copies once) rather than copied.
pub(super) fn goes_direct(len: usize, synchronous: bool) -> bool {
    synchronous || len > EAGER_MAX
}
