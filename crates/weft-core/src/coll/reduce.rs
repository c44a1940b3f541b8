//! Reductions: reduce, allreduce, reduce-scatter, scan, exscan, reduce_local.
//!
//! Order: for a non-commutative op the result is x0 op x1 op ... op x(n-1). Every algorithm
//! used with such ops combines a block of lower ranks with the adjacent block of higher ranks,
//! lower first. Ranks that compute the same value compute it in the same order, so allreduce
//! gives bit-identical results everywhere, floating point included.
#![forbid(unsafe_code)]

use super::choice::{ran, Collective};
use super::config::{Allreduce, Reduce, ReduceScatter, Scan};
use super::flat;
use super::link::{check_header, header, Link, HEADER_LEN};
use super::sched::{self, block_on};
use super::shm::Turned;
use super::shm_data;
use super::{gather, pairwise_steps, pof2_floor, tag, Side};
use crate::datatype::access::{with_pair, Scratch, Staged};
use crate::datatype::Buf;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::object::Comm;
use crate::op::Reduction;

/// Allreduce messages at least this large use a reduce-scatter + allgather algorithm.
const LARGE_ALLREDUCE: usize = 16 * 1024;
/// Reduce messages at least this large use Rabenseifner's algorithm (commutative ops).
const LARGE_REDUCE: usize = 64 * 1024;
/// The same limit on a communicator with a node-level area (all ranks on this node): there
/// the binomial tree lets a leaf that sends only to the root run ahead of it, where
/// Rabenseifner's exchanges make every rank wait for its partners (64 KiB of doubles,
/// `bench/coll.py`: 2 ranks 92 against 179 us, 4 oversubscribed ranks 177 against 359 us;
/// at 1 MiB the two are even at 4 ranks).
const LARGE_REDUCE_ON_NODE: usize = 1024 * 1024;

/// `inout = input op inout`.
fn combine(red: &Reduction, input: &Buf, inout: &Buf) {
    with_pair(input, inout, |a, b| red.apply(a, b));
}

/// `acc = acc op later`: `acc` holds the lower ranks' contribution. Clobbers `later`.
fn combine_lower_first(red: &Reduction, acc: &Buf, later: &Buf) {
    if red.commutative() {
        combine(red, later, acc);
    } else {
        combine(red, acc, later);
        later.copy_to(acc, acc.len());
    }
}

fn check_len(what: &str, a: usize, b: usize) -> MpiResult<()> {
    if a != b {
        return Err(MpiError::new(
            ErrorClass::Intern,
            format!("{what}: buffer sizes differ ({a} and {b} bytes)"),
        ));
    }
    Ok(())
}

/// `MPI_Reduce_local`: `inout = input op inout`.
pub fn reduce_local(input: &Buf, inout: &Buf, red: &Reduction) -> MpiResult<()> {
    check_len("reduce_local", input.len(), inout.len())?;
    let mut hold = Vec::new();
    let input = flat(input, &mut hold);
    let st = Staged::new(inout, true);
    combine(red, &input, &st.buf());
    st.store();
    Ok(())
}

/// `MPI_Reduce`. `send` is `None` for `MPI_IN_PLACE` at the root (the data is in `recv`);
/// `recv` matters only at the root.
pub fn reduce(
    comm: &Comm,
    send: Option<&Buf>,
    recv: &Buf,
    red: &Reduction,
    root: u32,
) -> MpiResult<()> {
    if comm.is_inter() {
        return block_on(comm, sched::ireduce(comm, send, recv, red, root, 0));
    }
    let mut hold = Vec::new();
    let send = send.map(|s| flat(s, &mut hold));
    let send = send.as_ref();
    if comm.rank == root && !recv.is_contiguous() {
        let st = Staged::new(recv, send.is_none());
        reduce(comm, send, &st.buf(), red, root)?;
        st.store();
        return Ok(());
    }
    let link = Link::reducing(comm, red);
    let mine = send.unwrap_or(recv);
    let is_root = link.rank == root;
    if is_root {
        check_len("reduce", mine.len(), recv.len())?;
    }
    if link.size == 1 {
        if let Some(s) = send {
            s.copy_to(recv, s.len());
        }
        return Ok(());
    }
    let choice = super::choice::reduce(comm);
    let area = match choice {
        Reduce::Auto | Reduce::Shm => super::shm::area(comm, true)?,
        _ => None,
    };
    let algo = reduce_algorithm(choice, red, mine.len(), link.size, area.is_some());
    // Whether the ranks compared their sizes on the area (those that chose by size did).
    let mut compared = false;
    if let Some(area) = area {
        let n = link.size;
        // Only a predefined op's leaves run ahead, in its tree rooted at the root. A user
        // op's tree is rooted at rank 0: were its leaves to run ahead too, a rank that passed
        // the other kind of op could be a leaf of its own tree, run ahead as well and never
        // receive the message its child sent it (c/coll/commute_differs_4 hung).
        let parent_of = |r| leaf_parent(r, n, root);
        let ahead = algo == Reduce::Binomial && !red.is_user() && parent_of(link.rank).is_some();
        let tree = (ahead, &parent_of as &dyn Fn(u32) -> Option<u32>);
        if super::shm::reduce(comm, area, mine, recv, red, root, tree)? == Turned::Done {
            ran(comm, Collective::Reduce, Reduce::Shm as usize);
            return Ok(());
        }
        compared = true;
    }
    if mine.is_empty() {
        return Ok(());
    }
    // Rabenseifner's algorithm (predefined ops) agrees on the sizes along the binomial tree
    // rooted at the root first. A user op's binomial tree is rooted at rank 0 instead
    // (`tree_root`), so for another root its ranks agree along the root's tree too: a rank
    // with a predefined op meets their headers, they its data or headers (with another op
    // mark), and no rank waits for a message of the other tree (`Link::agree_on_tree`).
    let agree = match algo {
        Reduce::Rabenseifner => true,
        Reduce::Binomial => tree_root(red, root) != root,
        _ => false,
    };
    if agree && !compared {
        link.agree_on_tree(mine.len(), root, tag::REDUCE)?;
    }
    ran(comm, Collective::Reduce, algo as usize);
    // The accumulator: the root's receive buffer, a scratch elsewhere.
    let mut scratch = Scratch::default();
    let acc = if is_root {
        if let Some(s) = send {
            s.copy_to(recv, s.len());
        }
        *recv
    } else {
        scratch = Scratch::copy_of(mine);
        scratch.buf()
    };
    let result = match algo {
        Reduce::Linear => linear_reduce(&link, &acc, red, root),
        Reduce::Rabenseifner => {
            let h = Halving::new(&link, mine.len() / red.extent, red.extent);
            h.reduce_scatter(&link, &acc, red, tag::REDUCE)
                .and_then(|h| h.gather_to_root(&link, &acc, root, tag::REDUCE))
        }
        _ => binomial_reduce(&link, &acc, red, root),
    };
    drop(scratch);
    result
}

/// The point-to-point algorithm of a reduce of `len` bytes on `n` ranks under `choice`.
/// Rabenseifner's algorithm only for predefined ops: a user op's commutativity is each
/// process's own `MPI_Op_create` argument, and ranks that disagree on it must still run one
/// algorithm (they then fail on the op mark, `Reduction::mark`). `on_node`: the communicator
/// has a node-level area (the same on every rank), which moves the size limit.
fn reduce_algorithm(choice: Reduce, red: &Reduction, len: usize, n: u32, on_node: bool) -> Reduce {
    let count = len / red.extent;
    let large = if on_node {
        LARGE_REDUCE_ON_NODE
    } else {
        LARGE_REDUCE
    };
    match choice {
        Reduce::Auto | Reduce::Shm
            if !red.is_user() && len >= large && count >= pof2_floor(n) as usize =>
        {
            Reduce::Rabenseifner
        }
        Reduce::Auto | Reduce::Shm => Reduce::Binomial,
        Reduce::Rabenseifner if red.is_user() => Reduce::Binomial,
        a => a,
    }
}

/// The rank the binomial tree of a reduce to `root` is rooted at: the root for a predefined
/// op (commutative on every rank); rank 0 for a user op, commutative or not, so that ranks
/// that disagree on its commutativity walk the same tree (whose subtrees are contiguous
/// rank ranges, as a non-commutative op needs) and meet each other's op mark.
fn tree_root(red: &Reduction, root: u32) -> u32 {
    if red.is_user() {
        0
    } else {
        root
    }
}

/// The rank that `rank`'s whole part in the binomial tree rooted at `root` (a predefined
/// op's) is one send of its contribution to, if it is such a rank: a leaf. Such a rank need
/// not wait for the others' sizes on the area (its parent drains its message if they differ,
/// `shm::reduce`).
fn leaf_parent(rank: u32, n: u32, root: u32) -> Option<u32> {
    if rank == root {
        return None;
    }
    let vr = (rank + n - root) % n;
    let low = vr & vr.wrapping_neg();
    // No children: a rank's children are vr + m for the m below its lowest set bit.
    let leaf = low == 1 || vr + 1 >= n;
    leaf.then_some((vr - low + root) % n)
}

fn binomial_reduce(link: &Link, acc: &Buf, red: &Reduction, root: u32) -> MpiResult<()> {
    let n = link.size;
    // Predefined ops reduce along a tree rooted at the root; user ops along a tree rooted at
    // rank 0 whose subtrees are contiguous rank ranges, then rank 0 forwards the result.
    let tree_root = tree_root(red, root);
    let vr = (link.rank + n - tree_root) % n;
    let real = |v: u32| (v + tree_root) % n;
    let mut tmp = Scratch::new(acc.len());
    let tb = tmp.buf();
    // A failed receive (the ranks passed different sizes) does not stop this rank's part:
    // its peers would wait for it. A child that sent a size header (it chose Rabenseifner's
    // algorithm by its size, `agree_on_tree`) waits for a verdict: it gets a failing one.
    let mut result = Ok(());
    let mut owed = Vec::new();
    let mut mask = 1;
    while mask < n {
        if vr & mask != 0 {
            let sent = link.after(&result).send(real(vr - mask), tag::REDUCE, acc);
            result = result.and(sent);
            break;
        }
        if vr + mask < n {
            let (got, arrived) = link.recv_telling(real(vr + mask), tag::REDUCE, &tb);
            if arrived.header {
                owed.push(real(vr + mask));
            }
            result = result.and(got);
            combine_lower_first(red, acc, &tb);
        }
        mask <<= 1;
    }
    if tree_root != root {
        if link.rank == tree_root {
            let sent = link.after(&result).send(root, tag::REDUCE, acc);
            result = result.and(sent);
        } else if link.rank == root {
            result = result.and(link.recv(tree_root, tag::REDUCE, acc));
        }
    }
    result.and(link.owe_verdicts(&owed, tag::REDUCE))
}

/// Before an allreduce algorithm that every rank must run (chosen by size), when the ranks
/// did not compare their sizes on the area: size headers (`link::header`) go through the
/// messages of `recursive_doubling` (the same partners in the same order, so a rank that
/// chose it by a smaller size meets a header and fails, and this rank meets its data and
/// fails); a rank that found a difference says so in its later headers, so every rank that
/// sends headers learns it. Only ranks of a large allreduce pay for it (log2 n exchanges
/// of 8 bytes).
fn agree_by_doubling(link: &Link, len: usize) -> MpiResult<()> {
    let hl = link.headers();
    let fold = Fold::new(link);
    let mut theirs = Scratch::new(HEADER_LEN);
    let tb = theirs.buf();
    let r = link.rank;
    let mut result = Ok(());
    if r < 2 * fold.rem {
        if r.is_multiple_of(2) {
            result = hl.send(r + 1, tag::ALLREDUCE, &header(len, &Ok(())).buf());
        } else {
            let got = hl.recv(r - 1, tag::ALLREDUCE, &tb);
            result = got.and(check_header(theirs.bytes(), len, r - 1));
        }
    }
    if let Some(nr) = fold.newrank {
        let masks = std::iter::successors(Some(1u32), |m| m.checked_mul(2));
        let partners = masks
            .take_while(|&m| m < fold.pof2)
            .map(|m| (fold.real(nr ^ m), fold.real(nr ^ m)));
        result = link.agree_in_rounds(len, tag::ALLREDUCE, partners, result);
    }
    if r < 2 * fold.rem {
        if r % 2 == 1 {
            let mut mine = header(len, &result);
            result = result.and(hl.send(r - 1, tag::ALLREDUCE, &mine.buf()));
        } else {
            let got = hl.recv(r + 1, tag::ALLREDUCE, &tb);
            result = result
                .and(got)
                .and(check_header(theirs.bytes(), len, r + 1));
        }
    }
    result
}

fn linear_reduce(link: &Link, acc: &Buf, red: &Reduction, root: u32) -> MpiResult<()> {
    if link.rank != root {
        return link.send(root, tag::REDUCE, acc);
    }
    // Combine in rank order: total = x0 op x1 op ... ; acc holds the root's own data.
    let len = acc.len();
    let mut total = Scratch::new(len);
    let mut tmp = Scratch::new(len);
    let (totb, tb) = (total.buf(), tmp.buf());
    // Every rank's message is received, also after one failed (sizes that differ).
    let mut result = Ok(());
    for i in 0..link.size {
        let data = if i == root {
            *acc
        } else {
            result = result.and(link.recv(i, tag::REDUCE, &tb));
            tb
        };
        if i == 0 {
            data.copy_to(&totb, len);
        } else {
            let d = if i == root {
                // Do not clobber the root's data: combine through the scratch.
                data.copy_to(&tb, len);
                tb
            } else {
                data
            };
            combine_lower_first(red, &totb, &d);
        }
    }
    totb.copy_to(acc, len);
    result
}

/// `MPI_Allreduce`. `send` is `None` for `MPI_IN_PLACE`.
pub fn allreduce(comm: &Comm, send: Option<&Buf>, recv: &Buf, red: &Reduction) -> MpiResult<()> {
    if comm.is_inter() {
        return block_on(comm, sched::iallreduce(comm, send, recv, red, 0));
    }
    let mut hold = Vec::new();
    let send = send.map(|s| flat(s, &mut hold));
    let send = send.as_ref();
    if !recv.is_contiguous() {
        let st = Staged::new(recv, send.is_none());
        allreduce(comm, send, &st.buf(), red)?;
        st.store();
        return Ok(());
    }
    let link = Link::reducing(comm, red);
    if let Some(s) = send {
        check_len("allreduce", s.len(), recv.len())?;
        s.copy_to(recv, s.len());
    }
    if link.size == 1 {
        return Ok(());
    }
    let choice = super::choice::allreduce(comm);
    // Whether the ranks compared their sizes on the area.
    let mut compared = false;
    if matches!(choice, Allreduce::Auto | Allreduce::Shm) {
        if let Some(area) = super::shm::area(comm, true)? {
            if super::shm::allreduce(comm, area, recv, red)? == Turned::Done {
                ran(comm, Collective::Allreduce, Allreduce::Shm as usize);
                return Ok(());
            }
            compared = true;
        }
    }
    if recv.is_empty() {
        return Ok(());
    }
    let count = recv.len() / red.extent;
    let pof2 = pof2_floor(link.size) as usize;
    // Rabenseifner and ring for predefined ops only: ranks that disagree on a user op's
    // commutativity must run one algorithm (as `reduce_algorithm`).
    let algo = match choice {
        Allreduce::Auto | Allreduce::Shm
            if !red.is_user() && recv.len() >= LARGE_ALLREDUCE && count >= pof2 =>
        {
            Allreduce::Rabenseifner
        }
        Allreduce::Auto | Allreduce::Shm => Allreduce::RecursiveDoubling,
        Allreduce::Rabenseifner | Allreduce::Ring if red.is_user() => Allreduce::RecursiveDoubling,
        a => a,
    };
    if matches!(algo, Allreduce::Rabenseifner | Allreduce::Ring) && !compared {
        agree_by_doubling(&link, recv.len())?;
    }
    ran(comm, Collective::Allreduce, algo as usize);
    match algo {
        Allreduce::Rabenseifner => {
            let h = Halving::new(&link, count, red.extent);
            h.reduce_scatter(&link, recv, red, tag::ALLREDUCE)
                .and_then(|h| h.allgather(&link, recv, tag::ALLREDUCE))
        }
        Allreduce::Ring => ring_allreduce(&link, recv, red, count),
        Allreduce::ReduceBcast => {
            let r = if link.rank == 0 {
                reduce(comm, None, recv, red, 0)
            } else {
                reduce(comm, Some(recv), &Buf::EMPTY, red, 0)
            };
            r.and_then(|_| super::bcast(comm, recv, 0))
        }
        _ => recursive_doubling(&link, recv, red),
    }
}

/// Ranks beyond the largest power of two fold into their neighbours first: of each pair
/// (2i, 2i+1) below 2*rem, the even rank hands its data to the odd one and waits.
struct Fold {
    pof2: u32,
    rem: u32,
    /// This rank's number among the pof2 ranks that take part, if it does.
    newrank: Option<u32>,
}

impl Fold {
    fn new(link: &Link) -> Fold {
        let pof2 = pof2_floor(link.size);
        let rem = link.size - pof2;
        let r = link.rank;
        let newrank = if r < 2 * rem {
            (r % 2 == 1).then_some(r / 2)
        } else {
            Some(r - rem)
        };
        Fold { pof2, rem, newrank }
    }

    fn real(&self, v: u32) -> u32 {
        if v < self.rem {
            2 * v + 1
        } else {
            v + self.rem
        }
    }

    /// The even ranks of the folded pairs send their data; the odd ones combine it.
    fn fold_in(
        &self,
        link: &Link,
        acc: &Buf,
        tmp: &Buf,
        red: &Reduction,
        tag: i32,
    ) -> MpiResult<()> {
        let r = link.rank;
        if r < 2 * self.rem {
            if r.is_multiple_of(2) {
                return link.send(r + 1, tag, acc);
            }
            let got = link.recv(r - 1, tag, tmp);
            combine(red, tmp, acc);
            return got;
        }
        Ok(())
    }

    /// The odd ranks of the folded pairs hand the result back.
    fn fold_out(&self, link: &Link, acc: &Buf, tag: i32) -> MpiResult<()> {
        let r = link.rank;
        if r < 2 * self.rem {
            if r % 2 == 1 {
                link.send(r - 1, tag, acc)?;
            } else {
                link.recv(r + 1, tag, acc)?;
            }
        }
        Ok(())
    }
}

fn recursive_doubling(link: &Link, acc: &Buf, red: &Reduction) -> MpiResult<()> {
    let fold = Fold::new(link);
    let mut tmp = Scratch::new(acc.len());
    let tb = tmp.buf();
    // A failed step (the ranks passed different sizes) does not stop this rank's part: its
    // later partners would wait for it.
    let mut result = fold.fold_in(link, acc, &tb, red, tag::ALLREDUCE);
    if let Some(nr) = fold.newrank {
        let mut mask = 1;
        while mask < fold.pof2 {
            let partner = nr ^ mask;
            let exchanged = link.after(&result).sendrecv(
                fold.real(partner),
                acc,
                fold.real(partner),
                &tb,
                tag::ALLREDUCE,
            );
            result = result.and(exchanged);
            if partner < nr {
                combine(red, &tb, acc);
            } else {
                combine_lower_first(red, acc, &tb);
            }
            mask <<= 1;
        }
    }
    let out = fold.fold_out(&link.after(&result), acc, tag::ALLREDUCE);
    result.and(out)
}

/// Recursive halving over element blocks (commutative ops): after it, participating rank
/// `newrank` holds the reduced block `newrank` of `pof2` blocks.
struct Halving {
    fold: Fold,
    /// Byte offset of block i (pof2 + 1 entries).
    offs: Vec<usize>,
}

impl Halving {
    fn new(link: &Link, count: usize, extent: usize) -> Halving {
        let fold = Fold::new(link);
        let p = fold.pof2 as usize;
        let (base, extra) = (count / p, count % p);
        let offs = (0..=p)
            .map(|i| (i * base + i.min(extra)) * extent)
            .collect();
        Halving { fold, offs }
    }

    fn range(&self, acc: &Buf, lo: u32, hi: u32) -> Buf {
        let (a, b) = (self.offs[lo as usize], self.offs[hi as usize]);
        acc.slice(a, b - a)
    }

    fn reduce_scatter(
        self,
        link: &Link,
        acc: &Buf,
        red: &Reduction,
        tag: i32,
    ) -> MpiResult<HalvingDone> {
        let mut tmp = Scratch::new(acc.len());
        let tb = tmp.buf();
        self.fold.fold_in(link, acc, &tb, red, tag)?;
        let (mut lo, mut hi) = (0, self.fold.pof2);
        if let Some(nr) = self.fold.newrank {
            let mut mask = self.fold.pof2 >> 1;
            while mask > 0 {
                let partner = self.fold.real(nr ^ mask);
                let mid = (lo + hi) / 2;
                let (keep, give) = if nr & mask == 0 {
                    ((lo, mid), (mid, hi))
                } else {
                    ((mid, hi), (lo, mid))
                };
                let kept = self.range(acc, keep.0, keep.1);
                let incoming = self.range(&tb, keep.0, keep.1);
                link.sendrecv(
                    partner,
                    &self.range(acc, give.0, give.1),
                    partner,
                    &incoming,
                    tag,
                )?;
                combine(red, &incoming, &kept);
                (lo, hi) = keep;
                mask >>= 1;
            }
        }
        Ok(HalvingDone { h: self, lo, hi })
    }
}

struct HalvingDone {
    h: Halving,
    lo: u32,
    hi: u32,
}

impl HalvingDone {
    /// Recursive doubling of the reduced blocks, so every rank holds the whole result.
    fn allgather(self, link: &Link, acc: &Buf, tag: i32) -> MpiResult<()> {
        let fold = &self.h.fold;
        if let Some(nr) = fold.newrank {
            let (mut lo, mut hi) = (self.lo, self.hi);
            let mut mask = 1;
            while mask < fold.pof2 {
                let partner = fold.real(nr ^ mask);
                let (plo, phi) = if nr & mask == 0 {
                    (hi, hi + mask)
                } else {
                    (lo - mask, lo)
                };
                link.sendrecv(
                    partner,
                    &self.h.range(acc, lo, hi),
                    partner,
                    &self.h.range(acc, plo, phi),
                    tag,
                )?;
                lo = lo.min(plo);
                hi = hi.max(phi);
                mask <<= 1;
            }
        }
        fold.fold_out(link, acc, tag)
    }

    /// Binomial gather of the reduced blocks to participating rank 0, which passes the
    /// result to `root` (whose `acc` is its receive buffer).
    fn gather_to_root(self, link: &Link, acc: &Buf, root: u32, tag: i32) -> MpiResult<()> {
        let fold = &self.h.fold;
        if let Some(nr) = fold.newrank {
            let (lo, mut hi) = (self.lo, self.hi);
            let mut mask = 1;
            while mask < fold.pof2 {
                if nr & mask != 0 {
                    link.send(fold.real(nr - mask), tag, &self.h.range(acc, lo, hi))?;
                    break;
                }
                link.recv(fold.real(nr + mask), tag, &self.h.range(acc, hi, hi + mask))?;
                hi += mask;
                mask <<= 1;
            }
        }
        let holder = fold.real(0);
        if holder != root {
            if link.rank == holder {
                link.send(root, tag, acc)?;
            } else if link.rank == root {
                link.recv(holder, tag, acc)?;
            }
        }
        Ok(())
    }
}

/// Ring allreduce (commutative ops): reduce-scatter then allgather around the ring, n - 1
/// steps each, every rank sending 1/n of the data per step.
fn ring_allreduce(link: &Link, acc: &Buf, red: &Reduction, count: usize) -> MpiResult<()> {
    let n = link.size as usize;
    let r = link.rank as usize;
    let (base, extra) = (count / n, count % n);
    let off = |i: usize| (i * base + i.min(extra)) * red.extent;
    let blk = |b: &Buf, i: usize| b.slice(off(i), off(i + 1) - off(i));
    let right = ((r + 1) % n) as u32;
    let left = ((r + n - 1) % n) as u32;
    let mut tmp = Scratch::new(off(1));
    let tb = tmp.buf();
    for step in 0..n - 1 {
        let send_blk = (r + n - step) % n;
        let recv_blk = (r + n - step - 1) % n;
        let into = tb.slice(0, off(recv_blk + 1) - off(recv_blk));
        link.sendrecv(right, &blk(acc, send_blk), left, &into, tag::ALLREDUCE)?;
        combine(red, &into, &blk(acc, recv_blk));
    }
    // Rank r now holds the reduced block r + 1.
    for step in 0..n - 1 {
        let send_blk = (r + 1 + n - step) % n;
        let recv_blk = (r + n - step) % n;
        link.sendrecv(
            right,
            &blk(acc, send_blk),
            left,
            &blk(acc, recv_blk),
            tag::ALLREDUCE,
        )?;
    }
    Ok(())
}

/// `MPI_Reduce_scatter` / `_block`: `input` is the whole vector (sizes summed), `output` this
/// rank's block (`sizes[rank]` bytes). They may overlap (`MPI_IN_PLACE`: output is the start
/// of the input).
pub fn reduce_scatter(
    comm: &Comm,
    input: &Buf,
    output: &Buf,
    red: &Reduction,
    sizes: &[usize],
) -> MpiResult<()> {
    if comm.is_inter() {
        return block_on(
            comm,
            sched::ireduce_scatter(comm, input, output, red, sizes, 0),
        );
    }
    let mut hold = Vec::new();
    let input = &flat(input, &mut hold);
    if !output.is_contiguous() {
        let st = Staged::new(output, false);
        reduce_scatter(comm, input, &st.buf(), red, sizes)?;
        st.store();
        return Ok(());
    }
    let link = Link::reducing(comm, red);
    let n = link.size as usize;
    let r = link.rank as usize;
    let mut offs = Vec::with_capacity(n + 1);
    offs.push(0usize);
    for s in sizes {
        offs.push(offs.last().copied().unwrap_or(0) + s);
    }
    let total = offs[n];
    check_len("reduce_scatter", input.len(), total)?;
    check_len("reduce_scatter", output.len(), sizes[r])?;
    if n == 1 {
        input.copy_to(output, sizes[0]);
        return Ok(());
    }
    let choice = super::choice::reduce_scatter(comm);
    if matches!(choice, ReduceScatter::Auto | ReduceScatter::Shm) {
        if let Some(area) = super::shm::area(comm, true)? {
            let turned = shm_data::reduce_scatter(comm, area, input, output, offs[r], red)?;
            if turned == Turned::Done {
                ran(comm, Collective::ReduceScatter, ReduceScatter::Shm as usize);
                return Ok(());
            }
        }
    }
    if total == 0 {
        return Ok(());
    }
    // Pairwise for every op kind (the same messages whatever the op, so ranks that pass
    // different ops meet each other's op mark), unless reduce + scatterv is forced.
    let pairwise = choice != ReduceScatter::ReduceScatterv;
    let used = if pairwise {
        ReduceScatter::Pairwise
    } else {
        ReduceScatter::ReduceScatterv
    };
    ran(comm, Collective::ReduceScatter, used as usize);
    if pairwise {
        let len = sizes[r];
        let mut acc = Scratch::copy_of(&input.slice(offs[r], len));
        let mut right = Scratch::new(len);
        let mut tmp = Scratch::new(len);
        let (ab, rb, tb) = (acc.buf(), right.buf(), tmp.buf());
        let ordered = !red.commutative();
        // A failed step (another size or op) does not stop this rank's part: its later
        // partners would wait for it.
        let mut result = Ok(());
        for (dst, src, side) in pairwise_steps(r, n) {
            result = result.and(link.sendrecv(
                dst as u32,
                &input.slice(offs[dst], sizes[dst]),
                src as u32,
                &tb,
                tag::REDUCE_SCATTER,
            ));
            match side {
                Side::RightFirst if ordered => tb.copy_to(&rb, len),
                Side::Right if ordered => combine(red, &tb, &rb),
                _ => combine(red, &tb, &ab),
            }
        }
        if ordered && r + 1 < n {
            combine_lower_first(red, &ab, &rb);
        }
        ab.copy_to(output, len);
        return result;
    }
    // Reduce in rank order to rank 0, then scatter the blocks.
    let mut whole = Scratch::new(if r == 0 { total } else { 0 });
    let wb = whole.buf();
    // A failed reduce (another op or size on some rank) still scatters: the ranks that did
    // not see the failure wait for their block.
    let reduced = reduce(comm, Some(input), &wb, red, 0);
    let parts: Vec<Buf> = if r == 0 {
        (0..n).map(|i| wb.slice(offs[i], sizes[i])).collect()
    } else {
        Vec::new()
    };
    reduced.and(gather::scatterv(comm, &parts, Some(output), 0))
}

/// `MPI_Scan` (inclusive). `send` is `None` for `MPI_IN_PLACE`.
pub fn scan(comm: &Comm, send: Option<&Buf>, recv: &Buf, red: &Reduction) -> MpiResult<()> {
    prefix(comm, send, recv, red, true)
}

/// `MPI_Exscan`: rank 0's receive buffer is left untouched.
pub fn exscan(comm: &Comm, send: Option<&Buf>, recv: &Buf, red: &Reduction) -> MpiResult<()> {
    prefix(comm, send, recv, red, false)
}

fn prefix(
    comm: &Comm,
    send: Option<&Buf>,
    recv: &Buf,
    red: &Reduction,
    inclusive: bool,
) -> MpiResult<()> {
    let mut hold = Vec::new();
    let send = send.map(|s| flat(s, &mut hold));
    let send = send.as_ref();
    if !recv.is_contiguous() {
        let st = Staged::new(recv, true);
        prefix(comm, send, &st.buf(), red, inclusive)?;
        st.store();
        return Ok(());
    }
    let link = Link::reducing(comm, red);
    let mine = send.unwrap_or(recv);
    check_len("scan", mine.len(), recv.len())?;
    if inclusive {
        if let Some(s) = send {
            s.copy_to(recv, s.len());
        }
    }
    if link.size == 1 {
        return Ok(());
    }
    let choice = super::choice::scan(comm);
    if matches!(choice, Scan::Auto | Scan::Shm) {
        if let Some(area) = super::shm::area(comm, true)? {
            if shm_data::scan(comm, area, mine, recv, red, inclusive)? == Turned::Done {
                ran(comm, Collective::Scan, Scan::Shm as usize);
                return Ok(());
            }
        }
    }
    if recv.is_empty() {
        return Ok(());
    }
    ran(comm, Collective::Scan, Scan::RecursiveDoubling as usize);
    let (r, n) = (link.rank, link.size);
    let mut partial = Scratch::copy_of(mine);
    let mut tmp = Scratch::new(mine.len());
    let (pb, tb) = (partial.buf(), tmp.buf());
    let mut have = inclusive;
    // A failed step (another size or op) does not stop this rank's part: its later partners
    // would wait for it.
    let mut result = Ok(());
    let mut mask = 1;
    while mask < n {
        let dst = r ^ mask;
        if dst < n {
            let exchanged = link.after(&result).sendrecv(dst, &pb, dst, &tb, tag::SCAN);
            result = result.and(exchanged);
            if dst < r {
                if have {
                    combine(red, &tb, recv);
                } else {
                    tb.copy_to(recv, recv.len());
                    have = true;
                }
                combine(red, &tb, &pb);
            } else {
                combine_lower_first(red, &pb, &tb);
            }
        }
        mask <<= 1;
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The ranks whose binomial part is one send, with their parents, against the trees drawn
    /// by hand.
    #[test]
    fn binomial_leaves_and_parents() {
        let leaves = |n, root| -> Vec<(u32, u32)> {
            (0..n)
                .filter_map(|r| leaf_parent(r, n, root).map(|p| (r, p)))
                .collect()
        };
        assert_eq!(leaves(2, 0), [(1, 0)]);
        assert_eq!(leaves(2, 1), [(0, 1)]);
        // 0 <- 1, 0 <- 2 <- 3: rank 2 has a child.
        assert_eq!(leaves(4, 0), [(1, 0), (3, 2)]);
        // 0 <- 1, 0 <- 2 (no rank 3).
        assert_eq!(leaves(3, 0), [(1, 0), (2, 0)]);
        // Rooted at 2: relative 1 is rank 3, relative 2 (rank 0) has child rank 1.
        assert_eq!(leaves(4, 2), [(1, 0), (3, 2)]);
        // 0 <- 1, 0 <- 2 <- 3, 0 <- 4 <- 5, 4 <- 6 <- 7.
        assert_eq!(leaves(8, 0), [(1, 0), (3, 2), (5, 4), (7, 6)]);
    }
}
