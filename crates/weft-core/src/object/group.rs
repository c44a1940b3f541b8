//! Groups: ordered sets of processes, named by their rank in the job (the PMI rank).
#![forbid(unsafe_code)]

use std::sync::Arc;

/// A process's rank in the job (its PMI rank): the identity groups are made of.
pub type ProcId = u32;

/// An ordered set of processes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Group {
    members: Arc<[ProcId]>,
}

impl Group {
    pub fn new(members: Vec<ProcId>) -> Group {
        Group {
            members: members.into(),
        }
    }

    pub fn empty() -> Group {
        Group::new(Vec::new())
    }

    pub fn size(&self) -> u32 {
        self.members.len() as u32
    }

    /// The rank of `proc` in this group, if it is a member.
    pub fn rank_of(&self, proc: ProcId) -> Option<u32> {
        self.members
            .iter()
            .position(|&p| p == proc)
            .map(|r| r as u32)
    }

    /// The process at `rank`.
    pub fn proc_at(&self, rank: u32) -> Option<ProcId> {
        self.members.get(rank as usize).copied()
    }

    pub fn members(&self) -> &[ProcId] {
        &self.members
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranks_and_members() {
        let g = Group::new(vec![4, 2, 7]);
        assert_eq!(g.size(), 3);
        assert_eq!(g.rank_of(7), Some(2));
        assert_eq!(g.rank_of(3), None);
        assert_eq!(g.proc_at(1), Some(2));
        assert_eq!(g.proc_at(3), None);
        assert_eq!(Group::empty().size(), 0);
    }
}
