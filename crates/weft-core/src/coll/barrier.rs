//! Barrier: flags in shared memory (ranks of one node), dissemination (ceil(log2 n) rounds of
//! zero-byte messages), or a binomial gather to rank 0 followed by a binomial release.
#![forbid(unsafe_code)]

use super::choice::{ran, Collective};
use super::config::Barrier;
use super::link::Link;
use super::tag;
use crate::datatype::Buf;
use crate::error::MpiResult;
use crate::object::Comm;

pub fn barrier(comm: &Comm) -> MpiResult<()> {
    if comm.is_inter() {
        return super::sched::block_on(comm, super::sched::ibarrier(comm, 0));
    }
    let link = Link::new(comm);
    if link.size == 1 {
        return Ok(());
    }
    let choice = super::choice::barrier(comm);
    if matches!(choice, Barrier::Auto | Barrier::Shm) {
        if let Some(area) = super::shm::area(comm, false)? {
            ran(comm, Collective::Barrier, Barrier::Shm as usize);
            super::shm::barrier(comm, area);
            return Ok(());
        }
    }
    match choice {
        Barrier::Tree => {
            ran(comm, Collective::Barrier, Barrier::Tree as usize);
            tree(&link)
        }
        Barrier::Auto | Barrier::Shm | Barrier::Dissemination => {
            ran(comm, Collective::Barrier, Barrier::Dissemination as usize);
            dissemination(&link)
        }
    }
}

fn dissemination(link: &Link) -> MpiResult<()> {
    let (r, n) = (link.rank, link.size);
    let mut k = 1;
    while k < n {
        let to = (r + k) % n;
        let from = (r + n - k) % n;
        link.sendrecv(to, &Buf::EMPTY, from, &Buf::EMPTY, tag::BARRIER)?;
        k <<= 1;
    }
    Ok(())
}

fn tree(link: &Link) -> MpiResult<()> {
    let (r, n) = (link.rank, link.size);
    // Fan in: wait for every child, then tell the parent.
    let mut mask = 1;
    while mask < n {
        if r & mask != 0 {
            link.send(r - mask, tag::BARRIER, &Buf::EMPTY)?;
            break;
        }
        if r + mask < n {
            link.recv(r + mask, tag::BARRIER, &Buf::EMPTY)?;
        }
        mask <<= 1;
    }
    // Fan out: the parent releases us, we release our children.
    if r != 0 {
        link.recv(r - (r & r.wrapping_neg()), tag::BARRIER, &Buf::EMPTY)?;
    }
    let mut mask = if r == 0 {
        super::pof2_floor(n.saturating_sub(1).max(1)) << 1
    } else {
        r & r.wrapping_neg()
    };
    mask >>= 1;
    while mask > 0 {
        if r + mask < n {
            link.send(r + mask, tag::BARRIER, &Buf::EMPTY)?;
        }
        mask >>= 1;
    }
    Ok(())
}
