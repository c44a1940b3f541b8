//! A per-VCI slab of requests. Ids carry the VCI, the slot and a generation, so a stale id
//! (a request already completed and released) is recognised instead of aliasing a new one.
#![forbid(unsafe_code)]

use super::{Ext, Kind, Request, SendCancel};
use crate::datatype::Buf;
use crate::message::Status;

/// Generations and slots use 24 bits each, matching the handle encoding.
const GEN_MASK: u32 = (1 << 24) - 1;
const SLOT_LIMIT: u32 = 1 << 24;

/// A request's id: slot, VCI and generation packed into one word, laid out as the bits of
/// its MPI handle (slot in bits 0..24, VCI in 32..40, generation in 40..64) so that it
/// travels in a register and converts to a handle with one OR.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReqId(u64);

const SLOT_BITS: u64 = (1 << 24) - 1;
const VCI_SHIFT: u32 = 32;
const GEN_SHIFT: u32 = 40;

impl ReqId {
    pub fn new(vci: u8, slot: u32, gen: u32) -> ReqId {
        ReqId(
            (slot as u64 & SLOT_BITS)
                | ((vci as u64) << VCI_SHIFT)
                | (((gen & GEN_MASK) as u64) << GEN_SHIFT),
        )
    }

    /// The id from its packed bits (`bits`); bits 24..32 are ignored.
    pub fn from_bits(bits: u64) -> ReqId {
        ReqId(bits & !(0xff << 24))
    }

    /// The packed bits (bits 24..32 zero: free for a handle's kind).
    pub fn bits(self) -> u64 {
        self.0
    }

    pub fn vci(self) -> u8 {
        (self.0 >> VCI_SHIFT) as u8
    }

    pub fn slot(self) -> u32 {
        (self.0 & SLOT_BITS) as u32
    }

    pub fn gen(self) -> u32 {
        (self.0 >> GEN_SHIFT) as u32
    }

    /// The id as one integer for the wire (echoed back by peers in acks).
    pub fn token(self) -> u64 {
        ((self.gen() as u64) << 32) | self.slot() as u64
    }

    /// Whether this is a pool's shared completed send (see `COMPLETED_SEND_SLOT`), under
    /// any generation.
    #[inline]
    pub fn is_completed_send(self) -> bool {
        self.slot() == COMPLETED_SEND_SLOT
    }

    /// The shared completed send of VCI `vci` under generation `gen` (1..=GEN_MASK: its
    /// handle is a user handle); the generation tells the sends that returned it apart
    /// (`vci::sent`).
    #[inline]
    pub fn completed_send(vci: u8, gen: u32) -> ReqId {
        ReqId::new(vci, COMPLETED_SEND_SLOT, gen)
    }

    pub fn from_token(vci: u8, token: u64) -> ReqId {
        ReqId::new(vci, token as u32, (token >> 32) as u32)
    }
}

/// Slot 0 of every pool: a send that completed when it started (an eager message already in
/// the peer's ring). Nonblocking sends of that kind all return it instead of allocating a
/// request, as MPICH does with its built-in completed request: waiting on it or freeing it
/// takes nothing away. Its ids carry any generation (each such send numbers its own, see
/// `vci::sent`); one whose send `MPI_Cancel` asked to withdraw stands for the request that
/// carries the cancel (`stand_in`) until it is taken or freed.
const COMPLETED_SEND_SLOT: u32 = 0;

/// Whether `id` names the request in `entry` of VCI `vci`'s pool (the completed send's slot
/// under any generation).
#[inline]
fn names(entry: &Slot, id: ReqId, vci: u8) -> bool {
    entry.live && (entry.gen == id.gen() || id.is_completed_send()) && id.vci() == vci
}

struct Slot {
    gen: u32,
    /// Whether `req` is a pending or completed request. A free slot keeps a vacant one (no
    /// type, no extension) that the next allocation overwrites field by field in place.
    live: bool,
    req: Request,
}

impl Slot {
    fn vacant() -> Slot {
        Slot {
            gen: 0,
            live: false,
            req: Request::new(Kind::Send, Buf::EMPTY),
        }
    }
}

#[derive(Default)]
pub struct RequestPool {
    slots: Vec<Slot>,
    free: Vec<u32>,
    vci: u8,
    /// Completed-send ids whose send is being cancelled, each with the request that carries
    /// the cancel (one per `MPI_Cancel` of such a handle, gone when the handle is taken or
    /// freed).
    stand_ins: Vec<(ReqId, ReqId)>,
}

impl RequestPool {
    pub fn new(vci: u8) -> RequestPool {
        let done = Request::completed(Kind::Send, Status::default());
        RequestPool {
            slots: vec![Slot {
                gen: 1,
                live: true,
                req: done,
            }],
            free: Vec::new(),
            vci,
            stand_ins: Vec::new(),
        }
    }

    /// The request that completed-send id `id` stands for while its send is being
    /// cancelled, if it does.
    pub fn stand_in(&self, id: ReqId) -> Option<ReqId> {
        let found = self.stand_ins.iter().find(|(h, _)| *h == id);
        found.map(|&(_, real)| real)
    }

    /// `id`, or the request it stands for (`stand_in`).
    pub fn resolve(&self, id: ReqId) -> ReqId {
        match id.is_completed_send() {
            true => self.stand_in(id).unwrap_or(id),
            false => id,
        }
    }

    /// From now on completed-send id `id` stands for request `real` (until `end_stand_in`).
    pub fn add_stand_in(&mut self, id: ReqId, real: ReqId) {
        debug_assert!(id.is_completed_send() && self.stand_in(id).is_none());
        self.stand_ins.push((id, real));
    }

    /// Completed-send id `id` no longer stands for another request; the one it stood for.
    pub fn end_stand_in(&mut self, id: ReqId) -> Option<ReqId> {
        let i = self.stand_ins.iter().position(|(h, _)| *h == id)?;
        Some(self.stand_ins.swap_remove(i).1)
    }

    /// How many completed-send ids stand for another request.
    pub fn stand_ins(&self) -> usize {
        self.stand_ins.len()
    }

    pub fn alloc(&mut self, req: Request) -> ReqId {
        let (id, entry) = self.take_free();
        entry.req = req;
        id
    }

    /// `alloc(Request::new(Kind::Recv, buf))` with `owner` set, written straight into the
    /// slot (the hot path of every receive: no request is built elsewhere and copied).
    #[inline]
    pub fn alloc_recv(&mut self, buf: Buf, owner: usize) -> ReqId {
        let (id, r) = self.alloc_in_place(Kind::Recv, false, buf);
        r.owner = owner;
        id
    }

    /// A send request whose message goes to VCI `vci` of job rank `dest` (`Ext::Sent`, what
    /// `MPI_Cancel` needs), complete already or not, written straight into the slot as
    /// `alloc_recv` does.
    #[inline]
    pub fn alloc_send(&mut self, buf: Buf, complete: bool, dest: u32, vci: u8) -> ReqId {
        let (id, r) = self.alloc_in_place(Kind::Send, complete, buf);
        r.ext = Ext::Sent {
            dest,
            vci,
            cancel: SendCancel::NotAsked,
            message: id.token(),
        };
        id
    }

    /// `Request::new(kind, buf)` (complete or not) written field by field into a free slot.
    #[inline]
    fn alloc_in_place(&mut self, kind: Kind, complete: bool, buf: Buf) -> (ReqId, &mut Request) {
        let (id, entry) = self.take_free();
        let r = &mut entry.req;
        r.kind = kind;
        r.complete = complete;
        r.status = Status::default();
        r.buf = buf;
        r.received = 0;
        r.expected = 0;
        r.detached = false;
        r.owner = 0;
        r.keep = buf.keep();
        debug_assert!(matches!(r.ext, Ext::None), "a vacant slot has no extension");
        (id, r)
    }

    /// A free slot, marked live under a new generation, and its id.
    #[inline]
    fn take_free(&mut self) -> (ReqId, &mut Slot) {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => self.grow(),
        };
        let entry = &mut self.slots[slot as usize];
        // Never wraps: a slot is retired when it held generation GEN_MASK (`give_back`).
        entry.gen += 1;
        debug_assert!(entry.gen <= GEN_MASK);
        entry.live = true;
        (ReqId::new(self.vci, slot, entry.gen), entry)
    }

    /// A new free slot at the end of the slab.
    #[cold]
    fn grow(&mut self) -> u32 {
        let slot = self.slots.len() as u32;
        assert!(
            slot < SLOT_LIMIT,
            "more than 2^24 requests pending on one VCI"
        );
        self.slots.push(Slot::vacant());
        slot
    }

    /// The live slot `id` names, if any.
    #[inline]
    fn slot_of(&mut self, id: ReqId) -> Option<&mut Slot> {
        let vci = self.vci;
        let entry = self.slots.get_mut(id.slot() as usize)?;
        names(entry, id, vci).then_some(entry)
    }

    #[inline]
    pub fn get(&self, id: ReqId) -> Option<&Request> {
        let entry = self.slots.get(id.slot() as usize)?;
        names(entry, id, self.vci).then_some(&entry.req)
    }

    #[inline]
    pub fn get_mut(&mut self, id: ReqId) -> Option<&mut Request> {
        self.slot_of(id).map(|entry| &mut entry.req)
    }

    /// Remove a request, returning it.
    pub fn release(&mut self, id: ReqId) -> Option<Request> {
        let entry = self.slot_of(id)?;
        if id.slot() == COMPLETED_SEND_SLOT {
            return Some(Request::completed(Kind::Send, Status::default()));
        }
        entry.live = false;
        let req = std::mem::replace(&mut entry.req, Request::new(Kind::Send, Buf::EMPTY));
        self.give_back(id);
        Some(req)
    }

    /// Puts a released slot on the free list, unless its generations are used up: then it
    /// is retired for good, since a generation that started over would make the slot's
    /// oldest ids (and handles) valid again.
    #[inline]
    fn give_back(&mut self, id: ReqId) {
        if id.gen() < GEN_MASK {
            self.free.push(id.slot());
        }
    }

    /// Remove a request, returning what `read` takes from it (the request is not moved out:
    /// what it holds is dropped where it lies and the slot stays vacant for reuse).
    #[inline]
    pub fn release_with<R>(&mut self, id: ReqId, read: impl FnOnce(&Request) -> R) -> Option<R> {
        let entry = self.slot_of(id)?;
        let value = read(&entry.req);
        if id.slot() != COMPLETED_SEND_SLOT {
            entry.live = false;
            entry.req.keep = None;
            entry.req.ext = Ext::None;
            self.give_back(id);
        }
        Some(value)
    }

    /// Whether a live request has not completed yet (the shared completed send excluded).
    pub fn any_incomplete(&self) -> bool {
        self.slots.iter().skip(1).any(|s| s.live && !s.req.complete)
    }

    /// The live point-to-point requests (sends and receives) that have not completed yet.
    pub fn incomplete_messages(&self) -> Vec<ReqId> {
        self.slots
            .iter()
            .enumerate()
            .skip(1)
            .filter(|(_, s)| {
                s.live && !s.req.complete && matches!(s.req.kind, Kind::Send | Kind::Recv)
            })
            .map(|(i, s)| ReqId::new(self.vci, i as u32, s.gen))
            .collect()
    }

    /// Number of live requests (for leak checks; the shared completed send and retired
    /// slots are not counted).
    pub fn live(&self) -> usize {
        self.slots.iter().skip(1).filter(|s| s.live).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stale_ids_do_not_alias() {
        let mut pool = RequestPool::new(3);
        let a = pool.alloc(Request::new(Kind::Send, Buf::EMPTY));
        assert_eq!(a.vci(), 3);
        assert!(pool.get(a).is_some());
        assert!(pool.release(a).is_some());
        assert!(pool.get(a).is_none());
        let b = pool.alloc(Request::new(Kind::Recv, Buf::EMPTY));
        assert_eq!(a.slot(), b.slot());
        assert_ne!(a.gen(), b.gen());
        assert!(pool.get(a).is_none());
        assert_eq!(pool.get(b).map(|r| r.kind), Some(Kind::Recv));
        assert_eq!(ReqId::from_token(3, b.token()), b);
        assert_eq!(pool.live(), 1);
    }

    #[test]
    fn a_reused_slot_holds_a_fresh_receive() {
        let mut pool = RequestPool::new(1);
        let a = pool.alloc(Request::new(Kind::Send, Buf::EMPTY));
        {
            let r = pool.get_mut(a).expect("live");
            r.complete = true;
            r.detached = true;
            r.received = 5;
            r.status.tag = 9;
        }
        assert_eq!(pool.release_with(a, |r| r.status.tag), Some(9));
        assert!(pool.get(a).is_none(), "released");
        assert_eq!(pool.release_with(a, |_| ()), None, "released only once");
        let b = pool.alloc_recv(Buf::EMPTY, 77);
        assert_eq!(b.slot(), a.slot(), "the slot is reused");
        let r = pool.get(b).expect("live");
        assert_eq!(r.kind, Kind::Recv);
        assert!(!r.complete && !r.detached);
        assert_eq!((r.received, r.owner, r.status), (0, 77, Status::default()));
        assert!(pool.get(a).is_none(), "the old id stays stale");
        assert_eq!(pool.live(), 1);
    }

    #[test]
    fn a_slot_is_retired_instead_of_wrapping_its_generation() {
        let mut pool = RequestPool::new(0);
        let first = pool.alloc(Request::new(Kind::Send, Buf::EMPTY));
        assert_eq!(first.gen(), 1);
        pool.release(first).unwrap();
        // Test hook: the slot has been reused until its next request takes the last
        // generation.
        pool.slots[first.slot() as usize].gen = GEN_MASK - 1;
        let last = pool.alloc(Request::new(Kind::Send, Buf::EMPTY));
        assert_eq!((last.slot(), last.gen()), (first.slot(), GEN_MASK));
        assert_eq!(pool.release_with(last, |_| ()), Some(()));
        // Wrapping to generation 1 would make `first` valid again: the slot is retired.
        for _ in 0..3 {
            let next = pool.alloc(Request::new(Kind::Recv, Buf::EMPTY));
            assert_ne!(
                next.slot(),
                first.slot(),
                "the retired slot is never reused"
            );
            assert!(pool.get(first).is_none() && pool.get(last).is_none());
            pool.release(next).unwrap();
        }
        assert_eq!(pool.live(), 0);
    }

    #[test]
    fn the_completed_send_outlives_every_release() {
        let mut pool = RequestPool::new(2);
        for gen in [1, 2, 77, GEN_MASK] {
            let done = ReqId::completed_send(2, gen);
            assert_eq!(done.vci(), 2);
            assert!(done.is_completed_send());
            for _ in 0..3 {
                let r = pool.release(done).expect("always there");
                assert!(r.complete);
                assert_eq!(r.kind, Kind::Send);
                assert_eq!(r.status, Status::default());
            }
            assert!(pool.get(done).is_some_and(|r| r.complete));
        }
        assert!(
            pool.get(ReqId::completed_send(3, 1)).is_none(),
            "another VCI's"
        );
        let a = pool.alloc(Request::new(Kind::Recv, Buf::EMPTY));
        assert_ne!(a.slot(), 0, "never handed out to another request");
        assert_eq!(pool.live(), 1);
    }

    #[test]
    fn a_completed_send_stands_in_while_cancelled() {
        let mut pool = RequestPool::new(0);
        let (h1, h2) = (ReqId::completed_send(0, 5), ReqId::completed_send(0, 6));
        let real = pool.alloc_send(Buf::EMPTY, false, 1, 0);
        assert_eq!(pool.stand_in(h1), None);
        pool.add_stand_in(h1, real);
        assert_eq!(pool.stand_in(h1), Some(real));
        assert_eq!(pool.stand_in(h2), None, "each send's own generation");
        assert_eq!(pool.stand_ins(), 1);
        assert_eq!(pool.end_stand_in(h2), None);
        assert_eq!(pool.end_stand_in(h1), Some(real));
        assert_eq!(pool.stand_ins(), 0);
        assert_eq!(pool.end_stand_in(h1), None);
    }
}
