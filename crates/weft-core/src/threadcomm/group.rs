//! The members of a thread communicator's group (`MPI_Comm_group`) and `MPI_Comm_create` on
//! one (docs/threadcomm.md). Several ranks of a thread communicator share a process, so the
//! members of its group are thread ranks, not processes: each is named by the thread
//! communicator that `MPIX_Threadcomm_init` made (its context id) and the thread's rank in
//! it, marked apart from process ids (the ABI makes a group of these ids). A duplicate names
//! its ranks as the original does and a split or created communicator names each rank as its
//! parent did, so the groups of a thread communicator and of those made from it inside the
//! region compare and translate as the standard says; translated to a group of processes
//! they are `MPI_UNDEFINED`. `MPI_Comm_create` with such a group is the split whose colour is
//! membership and whose key is the rank in the group.
#![forbid(unsafe_code)]

use std::sync::Arc;

use super::ThreadComm;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::instance::ProcId;

/// The mark of a thread-rank member (process ids stay far below it).
const THREAD_MEMBER: ProcId = 1 << 31;
/// Bits of the thread rank in a member (the context id sits above them).
const RANK_BITS: u32 = 16;

/// Whether `m` names a thread rank.
pub fn is_thread_member(m: ProcId) -> bool {
    m & THREAD_MEMBER != 0
}

/// The members of a thread communicator made by `MPIX_Threadcomm_init` with context id
/// `context` and `size` ranks; `None` when they do not fit a member's bits (then the
/// thread communicator has no group).
pub fn root(context: u32, size: u32) -> Option<Vec<ProcId>> {
    let fits = size <= 1 << RANK_BITS && context < THREAD_MEMBER >> RANK_BITS;
    fits.then(|| {
        (0..size)
            .map(|r| THREAD_MEMBER | context << RANK_BITS | r)
            .collect()
    })
}

/// `MPI_Comm_create` by `rank` of the thread communicator whose members are `mine`, with the
/// group whose members are `group`: the colour (`None`: not a member, `MPI_UNDEFINED`) and
/// key of the split that makes it. Every member must be a rank of the thread communicator
/// (`MPI_ERR_GROUP` otherwise; every rank passes the same group, so every rank refuses it
/// alike before any communication).
pub fn create_place(
    group: &[ProcId],
    mine: &[ProcId],
    rank: u32,
    func: &str,
) -> MpiResult<(Option<u32>, i32)> {
    if let Some((i, &m)) = group.iter().enumerate().find(|(_, m)| !mine.contains(m)) {
        let what = if is_thread_member(m) {
            "is not a rank of this thread communicator"
        } else {
            "is a process, not a rank of a thread communicator"
        };
        return Err(MpiError::new(
            ErrorClass::Group,
            format!("{func}(group): member {i} of the group {what}"),
        ));
    }
    let me = mine[rank as usize];
    Ok(match group.iter().position(|&m| m == me) {
        Some(k) => (Some(0), k as i32),
        None => (None, 0),
    })
}

impl ThreadComm {
    /// Name its ranks `members` (once, when it is made).
    pub fn set_members(&self, members: Vec<ProcId>) {
        let _ = self.members.set(members.into());
    }

    /// Its group's members in rank order (`None`: made past the members' limits, `root`).
    pub fn members(&self) -> Option<&Arc<[ProcId]>> {
        self.members.get()
    }

    /// The member that names `rank`, if it has a group.
    pub fn member(&self, rank: u32) -> Option<ProcId> {
        self.members()?.get(rank as usize).copied()
    }

    /// Name its ranks after `parent`'s ranks `olds` (in rank order), if `parent` has a group
    /// (a duplicate's `olds` are all of them, in order).
    pub fn inherit_members(&self, parent: &ThreadComm, olds: &[u32]) {
        if let Some(p) = parent.members() {
            self.set_members(olds.iter().map(|&r| p[r as usize]).collect());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_place_and_refusals() {
        let g = root(3, 5).unwrap();
        assert_eq!(g.len(), 5);
        assert!(g.iter().all(|&m| is_thread_member(m)));
        let sub = [g[4], g[1]];
        assert_eq!(create_place(&sub, &g, 4, "f").unwrap(), (Some(0), 0));
        assert_eq!(create_place(&sub, &g, 1, "f").unwrap(), (Some(0), 1));
        assert_eq!(create_place(&sub, &g, 0, "f").unwrap(), (None, 0));
        assert_eq!(create_place(&[], &g, 0, "f").unwrap(), (None, 0));
        // Another thread communicator's ranks, and processes, are refused.
        let other = root(4, 5).unwrap();
        let err = create_place(&other, &g, 0, "f").unwrap_err();
        assert_eq!(err.class(), ErrorClass::Group as i32);
        let err = create_place(&[0, 1], &g, 0, "f").unwrap_err();
        assert_eq!(err.class(), ErrorClass::Group as i32);
        assert!(!g.contains(&0));
        assert!(root(1 << 15, 2).is_none() && root(0, (1 << 16) + 1).is_none());
    }

    #[test]
    fn derived_members() {
        let parent = ThreadComm::new(4);
        parent.set_members(root(7, 4).unwrap());
        let child = ThreadComm::new(2);
        child.inherit_members(&parent, &[3, 1]);
        assert_eq!(child.member(0), parent.member(3));
        assert_eq!(child.member(1), parent.member(1));
        assert_eq!(child.member(2), None);
        let orphan = ThreadComm::new(2);
        orphan.inherit_members(&ThreadComm::new(2), &[0, 1]);
        assert!(orphan.members().is_none());
    }
}
