//! A per-VCI slab of requests. Ids carry the VCI, the slot and a generation, so a stale id
//! (a request already completed and released) is recognised instead of aliasing a new one.
#![forbid(unsafe_code)]

use super::{Kind, Request, Status};

/// Generations and slots use 24 bits each, matching the handle encoding.
const GEN_MASK: u32 = (1 << 24) - 1;
const SLOT_LIMIT: u32 = 1 << 24;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReqId {
    pub vci: u8,
    pub slot: u32,
    pub gen: u32,
}

impl ReqId {
    /// The id as one integer for the wire (echoed back by peers in acks).
    pub fn token(self) -> u64 {
        ((self.gen as u64) << 32) | self.slot as u64
    }

    /// Whether this is a pool's shared completed send (see `COMPLETED_SEND_SLOT`).
    pub fn is_completed_send(self) -> bool {
        self.slot == COMPLETED_SEND_SLOT && self.gen == 1
    }

    pub fn from_token(vci: u8, token: u64) -> ReqId {
        ReqId {
            vci,
            slot: token as u32,
            gen: (token >> 32) as u32,
        }
    }
}

/// Slot 0 of every pool: a send that completed when it started (an eager message already in
/// the peer's ring). Nonblocking sends of that kind all return it instead of allocating a
/// request, as MPICH does with its built-in completed request: waiting on it or freeing it
/// takes nothing away.
const COMPLETED_SEND_SLOT: u32 = 0;

struct Slot {
    gen: u32,
    req: Option<Request>,
}

#[derive(Default)]
pub struct RequestPool {
    slots: Vec<Slot>,
    free: Vec<u32>,
    vci: u8,
}

impl RequestPool {
    pub fn new(vci: u8) -> RequestPool {
        let done = Request::completed(Kind::Send, Status::default());
        RequestPool {
            slots: vec![Slot {
                gen: 1,
                req: Some(done),
            }],
            free: Vec::new(),
            vci,
        }
    }

    /// The shared request of sends that completed when they started (see
    /// `COMPLETED_SEND_SLOT`).
    pub fn completed_send(&self) -> ReqId {
        ReqId {
            vci: self.vci,
            slot: COMPLETED_SEND_SLOT,
            gen: 1,
        }
    }

    pub fn alloc(&mut self, req: Request) -> ReqId {
        let slot = match self.free.pop() {
            Some(slot) => slot,
            None => {
                let slot = self.slots.len() as u32;
                assert!(
                    slot < SLOT_LIMIT,
                    "more than 2^24 requests pending on one VCI"
                );
                self.slots.push(Slot { gen: 0, req: None });
                slot
            }
        };
        let entry = &mut self.slots[slot as usize];
        entry.gen = match (entry.gen + 1) & GEN_MASK {
            0 => 1,
            g => g,
        };
        entry.req = Some(req);
        ReqId {
            vci: self.vci,
            slot,
            gen: entry.gen,
        }
    }

    pub fn get(&self, id: ReqId) -> Option<&Request> {
        let entry = self.slots.get(id.slot as usize)?;
        if entry.gen == id.gen && id.vci == self.vci {
            entry.req.as_ref()
        } else {
            None
        }
    }

    pub fn get_mut(&mut self, id: ReqId) -> Option<&mut Request> {
        let vci = self.vci;
        let entry = self.slots.get_mut(id.slot as usize)?;
        if entry.gen == id.gen && id.vci == vci {
            entry.req.as_mut()
        } else {
            None
        }
    }

    /// Remove a request, returning it.
    pub fn release(&mut self, id: ReqId) -> Option<Request> {
        let vci = self.vci;
        let entry = self.slots.get_mut(id.slot as usize)?;
        if entry.gen != id.gen || id.vci != vci {
            return None;
        }
        if id.slot == COMPLETED_SEND_SLOT {
            return Some(Request::completed(Kind::Send, Status::default()));
        }
        let req = entry.req.take()?;
        self.free.push(id.slot);
        Some(req)
    }

    /// Remove a request, returning what `read` takes from it (the request itself is dropped
    /// where it lies, not moved out).
    pub fn release_with<R>(&mut self, id: ReqId, read: impl FnOnce(&Request) -> R) -> Option<R> {
        let vci = self.vci;
        let entry = self.slots.get_mut(id.slot as usize)?;
        if entry.gen != id.gen || id.vci != vci {
            return None;
        }
        let value = read(entry.req.as_ref()?);
        if id.slot != COMPLETED_SEND_SLOT {
            entry.req = None;
            self.free.push(id.slot);
        }
        Some(value)
    }

    /// Number of live requests (for leak checks; the shared completed send is not counted).
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len() - 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::Buf;

    #[test]
    fn stale_ids_do_not_alias() {
        let mut pool = RequestPool::new(3);
        let a = pool.alloc(Request::new(Kind::Send, Buf::EMPTY));
        assert_eq!(a.vci, 3);
        assert!(pool.get(a).is_some());
        assert!(pool.release(a).is_some());
        assert!(pool.get(a).is_none());
        let b = pool.alloc(Request::new(Kind::Recv, Buf::EMPTY));
        assert_eq!(a.slot, b.slot);
        assert_ne!(a.gen, b.gen);
        assert!(pool.get(a).is_none());
        assert_eq!(pool.get(b).map(|r| r.kind), Some(Kind::Recv));
        assert_eq!(ReqId::from_token(3, b.token()), b);
        assert_eq!(pool.live(), 1);
    }

    #[test]
    fn the_completed_send_outlives_every_release() {
        let mut pool = RequestPool::new(2);
        let done = pool.completed_send();
        assert_eq!(done.vci, 2);
        for _ in 0..3 {
            let r = pool.release(done).expect("always there");
            assert!(r.complete);
            assert_eq!(r.kind, Kind::Send);
            assert_eq!(r.status, Status::default());
        }
        assert!(pool.get(done).is_some_and(|r| r.complete));
        let a = pool.alloc(Request::new(Kind::Recv, Buf::EMPTY));
        assert_ne!(a.slot, done.slot, "never handed out to another request");
        assert_eq!(pool.live(), 1);
    }
}
