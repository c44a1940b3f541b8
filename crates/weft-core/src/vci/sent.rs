//! The recent eager sends that returned the VCI's shared completed send request (the first
//! branch of `engine::start_send`): each takes the next number of the VCI's count, which its
//! handle carries as its generation (the handle's bits are its header's token too), and a
//! small ring of fixed size remembers where the last `LOG` of them went. That is all
//! `MPI_Cancel` needs to ask the receiver to withdraw such a message (`vci::cancel`); an
//! older one (its entry written over) cannot be cancelled: its cancel fails, as it may when
//! the message was delivered.
#![forbid(unsafe_code)]

use crate::request::ReqId;

/// How many recent sends the ring remembers (a power of two). As many as a receive ring's
/// default cells: a burst of sends that fills the peer's ring stays cancellable.
const LOG: usize = 64;

/// A handle's generation from a send's number: 23 bits of it with bit 23 set, so that it is
/// never 0 (a generation 0 handle would not be a user handle).
const GEN_BITS: u32 = (1 << 23) - 1;
const GEN_SET: u32 = 1 << 23;

#[derive(Clone, Copy, Default)]
struct Entry {
    /// The completed-send id the send returned (its bits; 0: no send yet).
    id: u64,
    dest: u32,
    dest_vci: u8,
}

/// Where a remembered send went, and the token its header carried.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SentTo {
    pub dest: u32,
    pub dest_vci: u8,
    pub token: u64,
}

pub struct SentLog {
    /// The last send's number.
    last: u32,
    ring: [Entry; LOG],
}

impl Default for SentLog {
    fn default() -> SentLog {
        SentLog {
            last: 0,
            ring: [Entry::default(); LOG],
        }
    }
}

impl SentLog {
    /// Remember a send from VCI `vci` to VCI `dest_vci` of job rank `dest`; returns the
    /// completed-send id to hand out and the token for the message's header: the id's bits
    /// (slot 0: no request's token, as slot 0 is never allocated).
    #[inline]
    pub fn record(&mut self, vci: u8, dest: u32, dest_vci: u8) -> (ReqId, u64) {
        let number = self.last.wrapping_add(1);
        self.last = number;
        let id = ReqId::completed_send(vci, (number & GEN_BITS) | GEN_SET);
        self.ring[number as usize % LOG] = Entry {
            id: id.bits(),
            dest,
            dest_vci,
        };
        (id, id.bits())
    }

    /// Where the send that returned completed-send id `id` went, if it is still remembered.
    pub fn find(&self, id: ReqId) -> Option<SentTo> {
        // The generation keeps the number's low 23 bits, so its place in the ring too.
        // (A send 2^23 sends later has the same generation: a handle kept that long and then
        // cancelled names the later one. Nothing shorter-lived is confused.)
        let e = &self.ring[id.gen() as usize % LOG];
        (e.id == id.bits()).then_some(SentTo {
            dest: e.dest,
            dest_vci: e.dest_vci,
            token: e.id,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_the_last_sends_only() {
        let mut log = SentLog::default();
        let ids: Vec<(ReqId, u64)> = (0..LOG as u32 + 10).map(|i| log.record(2, i, 1)).collect();
        for (i, &(id, token)) in ids.iter().enumerate() {
            assert!(id.is_completed_send());
            assert_eq!(id.vci(), 2);
            assert_ne!(id.gen(), 0);
            let found = log.find(id);
            if i < 10 {
                assert_eq!(found, None, "send {i} was written over");
            } else {
                let want = SentTo {
                    dest: i as u32,
                    dest_vci: 1,
                    token,
                };
                assert_eq!(found, Some(want));
            }
        }
        let tokens: std::collections::HashSet<u64> = ids.iter().map(|p| p.1).collect();
        assert_eq!(tokens.len(), ids.len(), "every message its own token");
        assert!(
            tokens.iter().all(|t| t & 0xffff_ffff == 0),
            "no request's token"
        );
    }

    #[test]
    fn the_number_wraps_without_generation_0() {
        let mut log = SentLog {
            last: u32::MAX - 1,
            ..SentLog::default()
        };
        let sent: Vec<(ReqId, u64)> = (7..10).map(|d| log.record(0, d, 0)).collect();
        assert_eq!(log.last, 1);
        for (i, &(id, token)) in sent.iter().enumerate() {
            assert_ne!(id.gen(), 0);
            assert_eq!(
                log.find(id),
                Some(SentTo {
                    dest: 7 + i as u32,
                    dest_vci: 0,
                    token
                })
            );
        }
    }
}
