//! Ranks of a window on other nodes, reached through UCX (issue #24). A window that spans
//! nodes has one segment per node (created by the node's lowest rank of the window, with the
//! same layout of control words everywhere): a rank's control words (its lock, accumulate
//! mutex, post/complete and notification counters) live in its own node's segment. At
//! creation every rank registers its node's segment (and, for `MPI_Win_create`, its own
//! memory) with UCP and the packed remote keys are exchanged; each rank unpacks the keys of
//! the ranks on other nodes. An operation on such a target's memory is a UCP put or get
//! (complete at the target when it returns, like every Weft RMA operation), and a protocol
//! step on its control words is a UCP atomic on the same word in the target's segment, so
//! the ranks of the target's node (CPU atomics) and those elsewhere (UCP atomics, served by
//! CPU atomics at the target) follow the one protocol of `words`.

use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::transport::ucx::{Registration, RemoteKey, UcxTransport};
use crate::transport::Amo;

/// A rank on another node, as this process reaches it.
#[derive(Debug)]
pub struct FarPeer {
    /// Its node's segment (control words; an allocated window's memory).
    seg: RemoteKey,
    /// Where that segment is mapped in the peer.
    seg_base: u64,
    /// Its own window memory when the segment does not hold it (`MPI_Win_create`).
    data: Option<RemoteKey>,
}

/// The UCX side of a window that spans nodes.
pub struct Far {
    ucx: &'static UcxTransport,
    /// This process's registrations (kept while the window lives).
    _mine: Vec<Registration>,
    /// Per window rank: `None` for ranks on this node.
    peers: Vec<Option<FarPeer>>,
    /// This process's segment address: control words are found at the same offsets in
    /// every node's segment.
    seg_base: usize,
}

/// What a rank tells the others about its registrations (before the keys themselves).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Card {
    pub seg_base: u64,
    pub data_base: u64,
    /// Lengths of the packed keys (0: none; a segment key of 0 bytes: registration failed).
    pub seg_key: u32,
    pub data_key: u32,
}

impl Card {
    pub const BYTES: usize = 24;

    pub fn encode(&self) -> [u8; Self::BYTES] {
        let mut b = [0u8; Self::BYTES];
        b[0..8].copy_from_slice(&self.seg_base.to_le_bytes());
        b[8..16].copy_from_slice(&self.data_base.to_le_bytes());
        b[16..20].copy_from_slice(&self.seg_key.to_le_bytes());
        b[20..24].copy_from_slice(&self.data_key.to_le_bytes());
        b
    }

    pub fn decode(b: &[u8]) -> Card {
        let w = |r: std::ops::Range<usize>| u64::from_le_bytes(b[r].try_into().expect("8 bytes"));
        let h = |r: std::ops::Range<usize>| u32::from_le_bytes(b[r].try_into().expect("4 bytes"));
        Card {
            seg_base: w(0..8),
            data_base: w(8..16),
            seg_key: h(16..20),
            data_key: h(20..24),
        }
    }
}

fn ucx_error(func: &str, rank: u32, e: std::io::Error) -> MpiError {
    MpiError::new(
        ErrorClass::Other,
        format!("{func}: window rank {rank} on another node: {e}"),
    )
}

impl std::fmt::Debug for Far {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Far").field("peers", &self.peers).finish()
    }
}

impl Far {
    /// Register this process's segment (`seg`: address, length) and, when given, its own
    /// window memory (`data`); the card to send (a failed registration sends a zero key).
    ///
    /// # Safety
    /// Both stay mapped while the registrations returned live (the window's segment and the
    /// window memory, for the window's life; `WinRma` drops its `Far` before its segment).
    pub unsafe fn register(
        ucx: &'static UcxTransport,
        seg: (usize, usize),
        data: Option<(usize, usize)>,
        data_base: u64,
    ) -> (Vec<Registration>, Card) {
        let mut card = Card {
            seg_base: seg.0 as u64,
            data_base,
            ..Card::default()
        };
        let mut regs = Vec::new();
        // SAFETY: the caller's contract.
        if let Ok(r) = unsafe { ucx.register(seg.0, seg.1) } {
            card.seg_key = r.packed().len() as u32;
            regs.push(r);
            if let Some((addr, len)) = data.filter(|d| d.1 > 0) {
                // SAFETY: the caller's contract.
                match unsafe { ucx.register(addr, len) } {
                    Ok(d) => {
                        card.data_key = d.packed().len() as u32;
                        regs.push(d);
                    }
                    Err(_) => card.seg_key = 0,
                }
            }
        }
        (regs, card)
    }

    /// Unpack the keys of the ranks on other nodes. `far[r]` holds rank `r`'s job rank when
    /// it is on another node; `keys[r]` its packed keys (segment's, then memory's).
    pub fn connect(
        ucx: &'static UcxTransport,
        mine: Vec<Registration>,
        seg_base: usize,
        cards: &[Card],
        keys: &[&[u8]],
        far: &[Option<u32>],
        func: &str,
    ) -> MpiResult<Far> {
        let mut peers = Vec::with_capacity(far.len());
        for (r, job) in far.iter().enumerate() {
            let Some(job) = *job else {
                peers.push(None);
                continue;
            };
            let c = &cards[r];
            let (sk, dk) = keys[r].split_at(c.seg_key as usize);
            let seg = ucx
                .remote_key(job, sk)
                .map_err(|e| ucx_error(func, r as u32, e))?;
            let data = match c.data_key {
                0 => None,
                n => Some(
                    ucx.remote_key(job, &dk[..n as usize])
                        .map_err(|e| ucx_error(func, r as u32, e))?,
                ),
            };
            peers.push(Some(FarPeer {
                seg,
                seg_base: c.seg_base,
                data,
            }));
        }
        Ok(Far {
            ucx,
            _mine: mine,
            peers,
            seg_base,
        })
    }

    /// Whether window rank `t` is on another node.
    #[inline]
    pub fn is_far(&self, t: u32) -> bool {
        matches!(self.peers.get(t as usize), Some(Some(_)))
    }

    fn peer(&self, t: u32) -> &FarPeer {
        self.peers[t as usize]
            .as_ref()
            .expect("far operations only on ranks of other nodes")
    }

    /// Read rank `t`'s memory: `pieces` (address there, length), in order, into `out`.
    pub fn read(
        &self,
        t: u32,
        pieces: &[(usize, usize)],
        out: &mut [u8],
        func: &str,
    ) -> MpiResult<()> {
        let p = self.peer(t);
        let key = p.data.as_ref().unwrap_or(&p.seg);
        self.ucx
            .get(key, pieces, out)
            .map_err(|e| ucx_error(func, t, e))
    }

    /// Write `data` into rank `t`'s memory at `pieces` (address there, length), in order.
    pub fn write(
        &self,
        t: u32,
        pieces: &[(usize, usize)],
        data: &[u8],
        func: &str,
    ) -> MpiResult<()> {
        let p = self.peer(t);
        let key = p.data.as_ref().unwrap_or(&p.seg);
        self.ucx
            .put(key, pieces, data)
            .map_err(|e| ucx_error(func, t, e))
    }

    /// Apply `op` with `value` to rank `t`'s copy of the control word `word` (a word of this
    /// process's segment: the same offset in `t`'s); the previous value.
    pub fn word<T>(&self, t: u32, word: &T, op: Amo, value: u64, func: &str) -> MpiResult<u64> {
        let p = self.peer(t);
        let offset = (word as *const T as usize) - self.seg_base;
        self.ucx
            .atomic(&p.seg, p.seg_base + offset as u64, op, value)
            .map_err(|e| ucx_error(func, t, e))
    }
}

#[cfg(test)]
mod tests {
    use super::Card;

    #[test]
    fn card_round_trips() {
        let c = Card {
            seg_base: 0x7f00_1234_5000,
            data_base: u64::MAX - 7,
            seg_key: 141,
            data_key: 0,
        };
        let b = c.encode();
        assert_eq!(b.len(), Card::BYTES);
        assert_eq!(Card::decode(&b), c);
    }
}
