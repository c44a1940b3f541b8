//! A thread communicator spanning several processes: how its thread ranks are numbered and
//! how a message reaches a thread of another process.
//!
//! The ranks are numbered by process (the parent communicator's order), then by arrival in
//! `start` inside the process: process `p` owns ranks `first[p] .. first[p + 1]`, where
//! `first` sums the thread counts the processes gave to `MPIX_Threadcomm_init` (they may
//! differ). A message between threads of two processes travels over a `Wire` to the
//! destination *process*, with a header naming the destination thread rank, the source
//! thread rank, the tag and the traffic (`Ctx`). In the receiving process, whichever of its
//! thread ranks is waiting takes the arrivals off the wire (`pump`, one thread at a time per
//! thread communicator, so arrivals are handed on in the order they came) and pushes each
//! onto the destination rank's queue, where it is matched like a message from a thread of
//! the same process. One sender's messages stay in order: a wire keeps the order between two
//! processes, and the pump hands them on in that order.
//!
//! The wire itself (`pt2pt::thread_wire`: a hidden duplicate of the parent communicator) is
//! built above the communicator objects, which hold thread communicators; this module sees
//! it only through the `Wire` trait, so the imports point down.
#![forbid(unsafe_code)]

use std::sync::Mutex;

use super::p2p::Ctx;
use crate::datatype::access::Scratch;
use crate::datatype::Buf;
use crate::error::{ErrorClass, MpiError, MpiResult};

/// The header in front of every message between processes: destination rank, source rank,
/// tag, traffic.
const HEADER: usize = 16;

/// Ordered, reliable byte messages between the processes of a spanning thread communicator.
pub trait Wire: Send + Sync {
    /// This process's index among the processes.
    fn process(&self) -> u32;
    /// Send `msg` to process `dest`, waiting until the transports hold it (with `sync`:
    /// until `dest` took it); `on_wait` runs while waiting, and must take arrivals, or two
    /// processes sending large messages to each other would wait for each other forever.
    fn send(
        &self,
        dest: u32,
        msg: &mut Scratch,
        sync: bool,
        on_wait: &mut dyn FnMut(&mut u32),
    ) -> MpiResult<()>;
    /// The next message that arrived from any process, if any. Called by one thread at a
    /// time (`Link::pump`'s lock).
    fn take(&self) -> Option<Vec<u8>>;
}

/// The processes of a spanning thread communicator and the wire between them.
pub(super) struct Link {
    wire: Box<dyn Wire>,
    /// `first[p]`: the first thread rank of process `p`; `first[P]` is the size.
    first: Vec<u32>,
    /// Held by the thread taking arrivals off the wire (tried, never waited for).
    pump: Mutex<()>,
}

impl std::fmt::Debug for Link {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Link").field("first", &self.first).finish()
    }
}

/// A message taken off the link for one of this process's thread ranks.
pub(super) struct Arrival {
    pub dest: u32,
    pub src: u32,
    pub tag: i32,
    pub ctx: Ctx,
    pub data: Vec<u8>,
}

impl Link {
    /// The link over `wire` between processes bringing `counts[p]` threads each.
    pub(super) fn new(wire: Box<dyn Wire>, counts: &[u32]) -> MpiResult<Link> {
        let mut first = vec![0u32];
        let mut total = 0u64;
        for &c in counts {
            total += u64::from(c);
            if total > i32::MAX as u64 {
                return Err(MpiError::new(
                    ErrorClass::Arg,
                    "MPIX_Threadcomm_init(num_threads): the processes' thread counts add up \
                     to more ranks than an int holds",
                ));
            }
            first.push(total as u32);
        }
        Ok(Link {
            wire,
            first,
            pump: Mutex::new(()),
        })
    }

    /// The thread ranks of this process.
    pub(super) fn mine(&self) -> (u32, u32) {
        let p = self.wire.process() as usize;
        (self.first[p], self.first[p + 1])
    }

    /// The size of the thread communicator.
    pub(super) fn size(&self) -> u32 {
        *self.first.last().expect("at least one process")
    }

    /// Each process's first rank (the ranks that meet in `finish`).
    pub(super) fn leaders(&self) -> &[u32] {
        &self.first[..self.first.len() - 1]
    }

    /// The process owning thread rank `r`.
    fn process_of(&self, r: u32) -> u32 {
        (self.first.partition_point(|&f| f <= r) - 1) as u32
    }

    /// Send `data` (packed bytes, or the whole of `buf`) from rank `src` to rank `dest` of
    /// another process; `on_wait` runs while the wire still holds the message.
    pub(super) fn send(
        &self,
        (src, dest): (u32, u32),
        tag: i32,
        ctx: Ctx,
        data: Data<'_>,
        sync: bool,
        mut on_wait: impl FnMut(&mut u32),
    ) -> MpiResult<()> {
        let len = match data {
            Data::Bytes(b) => b.len(),
            Data::Buf(b) => b.len(),
        };
        let mut s = Scratch::new(HEADER + len);
        let m = s.bytes_mut();
        m[0..4].copy_from_slice(&dest.to_le_bytes());
        m[4..8].copy_from_slice(&src.to_le_bytes());
        m[8..12].copy_from_slice(&tag.to_le_bytes());
        m[12..16].copy_from_slice(&ctx_code(ctx).to_le_bytes());
        match data {
            Data::Bytes(b) => m[HEADER..].copy_from_slice(b),
            Data::Buf(b) => b.pack(0, &mut m[HEADER..]),
        }
        self.wire
            .send(self.process_of(dest), &mut s, sync, &mut on_wait)
    }

    /// Take what arrived for this process's thread ranks, handing each message to `deliver`
    /// in arrival order; nothing when another thread is doing it. Returns whether anything
    /// arrived.
    pub(super) fn pump(&self, mut deliver: impl FnMut(Arrival)) -> bool {
        let Ok(_one) = self.pump.try_lock() else {
            return false;
        };
        let mut any = false;
        while let Some(mut m) = self.wire.take() {
            if m.len() < HEADER {
                continue;
            }
            let word = |i: usize| u32::from_le_bytes(m[i..i + 4].try_into().expect("4 bytes"));
            let (dest, src, tag, ctx) = (word(0), word(4), word(8) as i32, word(12));
            m.drain(..HEADER);
            deliver(Arrival {
                dest,
                src,
                tag,
                ctx: match ctx {
                    1 => Ctx::Coll,
                    2 => Ctx::Part,
                    _ => Ctx::User,
                },
                data: m,
            });
            any = true;
        }
        any
    }
}

/// The traffic's number in a message's header.
fn ctx_code(ctx: Ctx) -> u32 {
    match ctx {
        Ctx::User => 0,
        Ctx::Coll => 1,
        Ctx::Part => 2,
    }
}

/// What a message between processes carries.
#[derive(Clone, Copy)]
pub(super) enum Data<'a> {
    Bytes(&'a [u8]),
    Buf(&'a Buf),
}
