//! Broadcast: the root's slot in shared memory (small messages, ranks of one node), binomial
//! tree (small messages), scatter + ring allgather (large messages, van de Geijn), or linear.
#![forbid(unsafe_code)]

use super::choice::{ran, Collective};
use super::config::Bcast;
use super::link::{header, header_says, Link, Pending, HEADER_LEN};
use super::shm::Turned;
use super::tag;
use crate::datatype::access::{Scratch, Staged};
use crate::datatype::Buf;
use crate::error::MpiResult;
use crate::object::Comm;

/// Messages at least this large use scatter + allgather on more than two ranks.
const SCATTER_ALLGATHER_MIN: usize = 256 * 1024;

pub fn bcast(comm: &Comm, buf: &Buf, root: u32) -> MpiResult<()> {
    if comm.is_inter() {
        return super::sched::block_on(comm, super::sched::ibcast(comm, buf, root, 0));
    }
    let choice = super::choice::bcast(comm);
    if comm.size() > 1 && matches!(choice, Bcast::Auto | Bcast::Shm) {
        // Any layout: the root packs straight into shared memory, the others unpack from it;
        // a larger message's size is announced there, so every rank follows the root's.
        if let Some(area) = super::shm::area(comm, true)? {
            match super::shm::bcast(comm, area, buf, root)? {
                Turned::Done => {
                    ran(comm, Collective::Bcast, Bcast::Shm as usize);
                    return Ok(());
                }
                Turned::PointToPoint => {}
                Turned::Mismatch(len) => {
                    // Take part with the root's size, so that no rank waits for this one,
                    // keep what fits and report the mismatch.
                    let mut scratch = Scratch::new(len);
                    let r = by_messages(comm, &scratch.buf(), root, choice, true);
                    let n = len.min(buf.len());
                    buf.unpack(0, &scratch.bytes()[..n]);
                    r?;
                    return Err(super::mismatch("the root", len, buf.len()));
                }
            }
        }
    }
    let compared = comm.size() > 1
        && matches!(choice, Bcast::Auto | Bcast::Shm)
        && super::shm::area(comm, true)?.is_some();
    by_messages(comm, buf, root, choice, compared)
}

/// The point-to-point algorithms. `compared`: the non-roots compared their sizes with the
/// root's on the area, and this one passed the root's.
fn by_messages(comm: &Comm, buf: &Buf, root: u32, choice: Bcast, compared: bool) -> MpiResult<()> {
    if !buf.is_contiguous() {
        let st = Staged::new(buf, comm.rank == root);
        by_messages(comm, &st.buf(), root, choice, compared)?;
        if comm.rank != root {
            st.store();
        }
        return Ok(());
    }
    let link = Link::new(comm);
    if link.size == 1 || buf.is_empty() {
        return Ok(());
    }
    let algo = match choice {
        Bcast::Auto | Bcast::Shm if link.size > 2 && buf.len() >= SCATTER_ALLGATHER_MIN => {
            Bcast::ScatterAllgather
        }
        Bcast::Auto | Bcast::Shm => Bcast::Binomial,
        a => a,
    };
    let algo = match algo {
        Bcast::ScatterAllgather if buf.len() >= link.size as usize => Bcast::ScatterAllgather,
        Bcast::Linear => Bcast::Linear,
        _ => Bcast::Binomial,
    };
    ran(comm, Collective::Bcast, algo as usize);
    if matches!(choice, Bcast::Auto | Bcast::Shm) && link.size > 2 && !compared {
        return follow_root(&link, buf, root, algo);
    }
    match algo {
        Bcast::ScatterAllgather => scatter_allgather(&link, buf, root),
        Bcast::Linear => linear(&link, buf, root),
        _ => binomial(&link, buf, root),
    }
}

fn linear(link: &Link, buf: &Buf, root: u32) -> MpiResult<()> {
    if link.rank != root {
        return link.recv(root, tag::BCAST, buf);
    }
    let mut ops = Vec::with_capacity(link.size as usize);
    let mut first_err = Ok(());
    for r in (0..link.size).filter(|&r| r != root) {
        match link.isend(r, tag::BCAST, buf) {
            Ok(p) => ops.push(p),
            Err(e) => {
                first_err = first_err.and(Err(e));
            }
        }
    }
    link.wait_all(ops).and(first_err)
}

pub(crate) fn binomial(link: &Link, buf: &Buf, root: u32) -> MpiResult<()> {
    let n = link.size;
    let vr = (link.rank + n - root) % n;
    // A failed receive (a size mismatch) still forwards, so the subtree does not wait: an
    // empty message, so that the subtree fails too instead of taking this rank's data.
    let mut result = Ok(());
    if vr != 0 {
        result = link.recv(parent(link, root), tag::BCAST, buf);
    }
    let forward = if result.is_ok() { *buf } else { Buf::EMPTY };
    to_children(link, &forward, root).and(result)
}

/// This rank's parent in the binomial tree rooted at `root` (not the root itself).
fn parent(link: &Link, root: u32) -> u32 {
    let n = link.size;
    let vr = (link.rank + n - root) % n;
    (vr - (vr & vr.wrapping_neg()) + root) % n
}

/// Send `buf` to this rank's children in the binomial tree rooted at `root`.
fn to_children(link: &Link, buf: &Buf, root: u32) -> MpiResult<()> {
    let n = link.size;
    let vr = (link.rank + n - root) % n;
    // The children are vr + m for the m below vr's lowest set bit (all m for the root).
    let mut mask = if vr == 0 {
        n.next_power_of_two()
    } else {
        vr & vr.wrapping_neg()
    };
    mask >>= 1;
    let mut result = Ok(());
    let mut ops: Vec<Pending> = Vec::new();
    while mask > 0 {
        if vr + mask < n {
            match link.isend((vr + mask + root) % n, tag::BCAST, buf) {
                Ok(p) => ops.push(p),
                Err(e) => result = result.and(Err(e)),
            }
        }
        mask >>= 1;
    }
    link.wait_all(ops).and(result)
}

/// A broadcast whose algorithm each rank chose by its own size (more than two ranks, no
/// sizes compared on the area): every rank follows the root's choice. A root that chose
/// scatter-allgather first sends a size header down the binomial tree; a root that chose
/// the binomial tree sends its data. A non-root's first message, from its parent, tells
/// which one came: after a header it forwards the header and takes part in
/// scatter-allgather with the root's size (into scratch when its own differs, then keeping
/// what fits and failing, as `Turned::Mismatch`); after data it goes on with the binomial
/// tree (a rank that expected a header fails and forwards an empty message, so its subtree
/// fails too). Nobody waits for a message that does not come.
fn follow_root(link: &Link, buf: &Buf, root: u32, mine: Bcast) -> MpiResult<()> {
    let hl = link.headers();
    let big = mine == Bcast::ScatterAllgather;
    if link.rank == root {
        if !big {
            return binomial(link, buf, root);
        }
        to_children(&hl, &header(buf.len(), &Ok(())).buf(), root)?;
        return scatter_allgather(link, buf, root);
    }
    // A header must fit where the first message lands.
    let mut first = Scratch::new(if big || buf.len() < HEADER_LEN {
        HEADER_LEN
    } else {
        0
    });
    let into = if first.is_empty() { *buf } else { first.buf() };
    let from = parent(link, root);
    let (got, arrived) = (if big { &hl } else { link }).recv_telling(from, tag::BCAST, &into);
    if arrived.header {
        let len = into.with_bytes(header_says);
        let fwd = to_children(&hl, &header(len, &Ok(())).buf(), root);
        if len == buf.len() {
            return fwd.and(scatter_allgather(link, buf, root));
        }
        let mut scratch = Scratch::new(len);
        let r = scatter_allgather(link, &scratch.buf(), root);
        let n = len.min(buf.len());
        buf.unpack(0, &scratch.bytes()[..n]);
        return fwd
            .and(r)
            .and(Err(super::mismatch("the root", len, buf.len())));
    }
    let got = if big {
        got
    } else if !first.is_empty() {
        // A message shorter than the header scratch: its size decides.
        if arrived.bytes == buf.len() && got.is_err() {
            buf.unpack(0, &first.bytes()[..arrived.bytes]);
            Ok(())
        } else {
            got.and(Err(super::mismatch(
                &format!("rank {from}"),
                arrived.bytes,
                buf.len(),
            )))
        }
    } else {
        got
    };
    let forward = if got.is_ok() { *buf } else { Buf::EMPTY };
    to_children(link, &forward, root).and(got)
}

/// Block `i` of `n` blocks of a `len`-byte buffer: (offset, length).
fn block(len: usize, n: usize, i: usize) -> (usize, usize) {
    let size = len.div_ceil(n);
    let start = (i * size).min(len);
    (start, size.min(len - start))
}

fn scatter_allgather(link: &Link, buf: &Buf, root: u32) -> MpiResult<()> {
    let n = link.size as usize;
    let len = buf.len();
    let vr = (link.rank as usize + n - root as usize) % n;
    let real = |v: usize| ((v + root as usize) % n) as u32;
    // Bytes of relative blocks [a, b).
    let span = |a: usize, b: usize| -> (usize, usize) {
        let (s, _) = block(len, n, a.min(n));
        let e = if b >= n { len } else { block(len, n, b).0 };
        (s, e - s)
    };
    // Binomial scatter: a rank with relative rank vr receives blocks [vr, vr + its subtree).
    let mut mask = 1;
    while mask < n {
        if vr & mask != 0 {
            let (off, l) = span(vr, vr + mask);
            if l > 0 {
                link.recv(real(vr - mask), tag::BCAST, &buf.slice(off, l))?;
            }
            break;
        }
        mask <<= 1;
    }
    mask >>= 1;
    while mask > 0 {
        if vr + mask < n {
            let (off, l) = span(vr + mask, vr + 2 * mask);
            if l > 0 {
                link.send(real(vr + mask), tag::BCAST, &buf.slice(off, l))?;
            }
        }
        mask >>= 1;
    }
    // Ring allgather of the blocks, in relative numbering.
    let right = real((vr + 1) % n);
    let left = real((vr + n - 1) % n);
    for step in 0..n - 1 {
        let send_blk = (vr + n - step) % n;
        let recv_blk = (vr + n - step - 1) % n;
        let (so, sl) = block(len, n, send_blk);
        let (ro, rl) = block(len, n, recv_blk);
        link.sendrecv(
            right,
            &buf.slice(so, sl),
            left,
            &buf.slice(ro, rl),
            tag::BCAST,
        )?;
    }
    Ok(())
}
