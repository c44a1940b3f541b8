//! A per-VCI slab of requests. Ids carry the VCI, the slot and a generation, so a stale id
//! (a request already completed and released) is recognised instead of aliasing a new one.
#![forbid(unsafe_code)]

use super::Request;

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

    pub fn from_token(vci: u8, token: u64) -> ReqId {
        ReqId {
            vci,
            slot: token as u32,
            gen: (token >> 32) as u32,
        }
    }
}

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
        RequestPool {
            slots: Vec::new(),
            free: Vec::new(),
            vci,
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
        let req = entry.req.take()?;
        self.free.push(id.slot);
        Some(req)
    }

    /// Number of live requests (for leak checks).
    pub fn live(&self) -> usize {
        self.slots.len() - self.free.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::Buf;
    use crate::request::Kind;

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
}
