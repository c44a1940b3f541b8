//! Processes of other jobs on this node that this process is connected to (`MPI_Comm_spawn`,
//! `MPI_Comm_connect`/`accept`, `MPI_Comm_join`): each gets a *foreign id* (`FOREIGN_BASE`
//! and up) that stands for it in groups and routes, like a job rank does for the job's own
//! processes.
//!
//! Messages to a foreign process go through rings of their own: for each (sender, receiver,
//! receiver VCI) one MPSC ring (`pair::PairRing`, pushed with the compare-exchange push,
//! since any VCI of the sender may send) in a small segment named after the receiver's job
//! (`/weft.<receiver job>.x.<sender job>.<sender rank>.<receiver rank>.<vci>`, so the
//! receiver's launcher removes leftovers). Both ends open each ring with create-or-attach
//! when they connect; the name goes once both mapped it. The receiver drains its rings with
//! the stream pair rings (`PairsIn`), which give each arrival the sender's foreign id as its
//! origin.
//!
//! The table is bounded (`MAX_FOREIGN` processes in the life of an instance) and never
//! moves: a send finds its peer's rings with two indexes and two loads, without a lock; the
//! registry of names is locked only while connecting. It is allocated in chunks of `CHUNK`
//! slots as they fill, so an instance that meets no other job allocates none (a flat table
//! cost every `MPI_Init` the 64 page faults of initialising it, of about 210 in all).

use std::io;
use std::sync::{Mutex, OnceLock};

use super::pair::PairRing;
use super::WIRE_HEADER_BYTES;

/// The first foreign id; job ranks stay below it.
pub const FOREIGN_BASE: u32 = 1 << 30;
/// How many foreign processes one instance can know.
pub const MAX_FOREIGN: usize = 4096;
/// Slots per chunk of the table.
const CHUNK: usize = 64;

/// A process of another job, by its job's name and its rank there.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProcName {
    pub job: String,
    pub rank: u32,
}

impl ProcName {
    /// Append `names`: their count, then for each its job's name (length first) and rank.
    pub fn encode_all(names: &[ProcName], out: &mut Vec<u8>) {
        out.extend_from_slice(&(names.len() as u32).to_le_bytes());
        for n in names {
            out.extend_from_slice(&(n.job.len() as u32).to_le_bytes());
            out.extend_from_slice(n.job.as_bytes());
            out.extend_from_slice(&n.rank.to_le_bytes());
        }
    }

    /// The names `encode_all` wrote at the start of `bytes`, and the bytes after them
    /// (`None`: truncated or not UTF-8).
    pub fn decode_all(bytes: &[u8]) -> Option<(Vec<ProcName>, &[u8])> {
        let mut at = 0usize;
        let mut take = |n: usize| -> Option<&[u8]> {
            let head = bytes.get(at..at.checked_add(n)?)?;
            at += n;
            Some(head)
        };
        let word = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
        let count = word(take(4)?);
        let mut names = Vec::new();
        for _ in 0..count {
            let len = word(take(4)?) as usize;
            let job = String::from_utf8(take(len)?.to_vec()).ok()?;
            let rank = word(take(4)?);
            names.push(ProcName { job, rank });
        }
        Some((names, &bytes[at..]))
    }
}

/// A known foreign process: its name and the rings into it, one per VCI of its.
pub struct ForeignProc {
    pub name: ProcName,
    rings: Vec<PairRing>,
}

/// The foreign processes this instance knows.
pub struct Foreign {
    /// `MAX_FOREIGN / CHUNK` chunks, each set when its first slot is registered.
    chunks: Box<[OnceLock<Box<[OnceLock<ForeignProc>]>>]>,
    /// Names in slot order (index = foreign id - `FOREIGN_BASE`).
    registry: Mutex<Vec<ProcName>>,
}

impl Default for Foreign {
    fn default() -> Foreign {
        Foreign {
            chunks: (0..MAX_FOREIGN / CHUNK).map(|_| OnceLock::new()).collect(),
            registry: Mutex::new(Vec::new()),
        }
    }
}

impl Foreign {
    /// The process `id` names, if it is a known foreign process.
    #[inline]
    pub fn get(&self, id: u32) -> Option<&ForeignProc> {
        let i = id.checked_sub(FOREIGN_BASE)? as usize;
        self.chunks.get(i / CHUNK)?.get()?[i % CHUNK].get()
    }

    /// The id of `name`, registering it (with the rings `open` makes into it) if it is new;
    /// the flag says whether it was.
    pub fn register(
        &self,
        name: &ProcName,
        open: impl FnOnce() -> io::Result<Vec<PairRing>>,
    ) -> io::Result<(u32, bool)> {
        let mut registry = self.registry.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(i) = registry.iter().position(|n| n == name) {
            return Ok((FOREIGN_BASE + i as u32, false));
        }
        let i = registry.len();
        if i == MAX_FOREIGN {
            return Err(io::Error::other(format!(
                "this process already knows {MAX_FOREIGN} processes of other jobs"
            )));
        }
        let proc = ForeignProc {
            name: name.clone(),
            rings: open()?,
        };
        let chunk =
            self.chunks[i / CHUNK].get_or_init(|| (0..CHUNK).map(|_| OnceLock::new()).collect());
        if chunk[i % CHUNK].set(proc).is_err() {
            unreachable!("slots are filled in registry order, under the registry's lock");
        }
        registry.push(name.clone());
        Ok((FOREIGN_BASE + i as u32, true))
    }

    /// Put one message into the ring of VCI `vci` of foreign process `id`; false when it is
    /// full or there is no such ring.
    #[inline]
    pub fn try_push(
        &self,
        id: u32,
        vci: usize,
        header: &[u8; WIRE_HEADER_BYTES],
        len: usize,
        fill: impl FnOnce(&mut [u8]),
    ) -> bool {
        match self.get(id).and_then(|p| p.rings.get(vci)) {
            Some(ring) => ring.try_push_shared(header, len, fill),
            None => false,
        }
    }
}

/// The segment name of the ring from `from` into VCI `vci` of `to`.
pub fn ring_name(from: &ProcName, to: &ProcName, vci: usize) -> String {
    format!(
        "/weft.{}.x.{}.{}.{}.{vci}",
        to.job, from.job, from.rank, to.rank
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(rank: u32) -> ProcName {
        ProcName {
            job: "other".into(),
            rank,
        }
    }

    #[test]
    fn table_grows_by_chunks_and_finds_every_registered_process() {
        let f = Foreign::default();
        assert!(
            f.chunks.iter().all(|c| c.get().is_none()),
            "a fresh table allocates no slots"
        );
        for r in 0..=CHUNK as u32 {
            let (id, new) = f.register(&name(r), || Ok(Vec::new())).unwrap();
            assert_eq!((id, new), (FOREIGN_BASE + r, true));
        }
        assert_eq!(f.chunks.iter().filter(|c| c.get().is_some()).count(), 2);
        for r in [0, CHUNK as u32 - 1, CHUNK as u32] {
            assert_eq!(f.get(FOREIGN_BASE + r).map(|p| p.name.rank), Some(r));
        }
        assert!(f.get(FOREIGN_BASE + CHUNK as u32 + 1).is_none());
        assert!(f.get(FOREIGN_BASE + MAX_FOREIGN as u32).is_none());
        assert_eq!(
            f.register(&name(3), || unreachable!("known")).unwrap(),
            (FOREIGN_BASE + 3, false)
        );
    }
}
