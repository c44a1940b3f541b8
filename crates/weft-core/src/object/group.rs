//! Groups: ordered sets of processes, named by their rank in the job (the PMI rank).
#![forbid(unsafe_code)]

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use super::session::Session;
use crate::error::{fail, ErrorClass, MpiResult};
use crate::instance::ProcId;

/// Groups up to this size look members up by scanning; larger ones build an index once.
const SCAN_MAX: usize = 32;

#[derive(Debug)]
struct Inner {
    members: Vec<ProcId>,
    index: OnceLock<HashMap<ProcId, u32>>,
    /// The session the group comes from (a process set, or a session communicator's group);
    /// groups made from it inherit it. `None`: from the world (or built without one).
    origin: Option<Arc<Session>>,
}

/// An ordered set of processes (cheap to clone: the members are shared).
#[derive(Clone, Debug)]
pub struct Group {
    inner: Arc<Inner>,
}

impl PartialEq for Group {
    fn eq(&self, other: &Group) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner) || self.members() == other.members()
    }
}

impl Eq for Group {}

/// `MPI_Group_compare`'s and `MPI_Comm_compare`'s results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    Ident,
    Congruent,
    Similar,
    Unequal,
}

impl Group {
    pub fn new(members: Vec<ProcId>) -> Group {
        Group::with_origin(members, None)
    }

    /// A group of `members` that belongs to `origin`.
    pub fn with_origin(members: Vec<ProcId>, origin: Option<Arc<Session>>) -> Group {
        Group {
            inner: Arc::new(Inner {
                members,
                index: OnceLock::new(),
                origin,
            }),
        }
    }

    /// A group made from this one: it keeps this one's session.
    fn derived(&self, members: Vec<ProcId>) -> Group {
        Group::with_origin(members, self.inner.origin.clone())
    }

    /// This group, marked as belonging to `session` (`MPI_Comm_group` of a session
    /// communicator).
    pub fn in_session(&self, session: Option<Arc<Session>>) -> Group {
        Group::with_origin(self.members().to_vec(), session)
    }

    /// This group, belonging to `session` unless it already belongs to one (the groups of
    /// communicators derived from others: `MPI_Comm_group` of any communicator of a session,
    /// the world's included, can make communicators from groups).
    pub fn owned_by(self, session: &Arc<Session>) -> Group {
        if self.inner.origin.is_some() {
            self
        } else {
            self.in_session(Some(session.clone()))
        }
    }

    /// The session this group belongs to, if any.
    pub fn origin(&self) -> Option<&Arc<Session>> {
        self.inner.origin.as_ref()
    }

    pub fn empty() -> Group {
        Group::new(Vec::new())
    }

    pub fn size(&self) -> u32 {
        self.inner.members.len() as u32
    }

    pub fn is_empty(&self) -> bool {
        self.inner.members.is_empty()
    }

    /// The rank of `proc` in this group, if it is a member.
    pub fn rank_of(&self, proc: ProcId) -> Option<u32> {
        let m = &self.inner.members;
        if m.len() <= SCAN_MAX {
            return m.iter().position(|&p| p == proc).map(|r| r as u32);
        }
        self.inner
            .index
            .get_or_init(|| m.iter().enumerate().map(|(r, &p)| (p, r as u32)).collect())
            .get(&proc)
            .copied()
    }

    pub fn contains(&self, proc: ProcId) -> bool {
        self.rank_of(proc).is_some()
    }

    /// The process at `rank`.
    pub fn proc_at(&self, rank: u32) -> Option<ProcId> {
        self.inner.members.get(rank as usize).copied()
    }

    pub fn members(&self) -> &[ProcId] {
        &self.inner.members
    }

    /// `MPI_Group_compare`: same members in the same order, the same members, or not.
    pub fn compare(&self, other: &Group) -> Compare {
        if self.members() == other.members() {
            return Compare::Ident;
        }
        if self.size() == other.size() && self.members().iter().all(|&p| other.contains(p)) {
            return Compare::Similar;
        }
        Compare::Unequal
    }

    /// `MPI_Group_translate_ranks`: the rank in `other` of each of `ranks` (`None`: not a
    /// member of `other`). Ranks are checked against this group.
    pub fn translate(
        &self,
        ranks: &[i32],
        other: &Group,
        proc_null: i32,
        func: &str,
    ) -> MpiResult<Vec<Option<i32>>> {
        ranks
            .iter()
            .enumerate()
            .map(|(i, &r)| {
                if r == proc_null {
                    return Ok(Some(proc_null));
                }
                let p = self.checked_rank(r, func, &format!("ranks1[{i}]"))?;
                Ok(other.rank_of(p).map(|x| x as i32))
            })
            .collect()
    }

    /// The process at rank `r`, or `MPI_ERR_RANK` naming `func` and `arg`.
    pub fn checked_rank(&self, r: i32, func: &str, arg: &str) -> MpiResult<ProcId> {
        if r < 0 || r as u32 >= self.size() {
            return fail(
                ErrorClass::Rank,
                format!(
                    "{func}({arg}={r}): not a rank of the group (size {})",
                    self.size()
                ),
            );
        }
        Ok(self.inner.members[r as usize])
    }

    /// `MPI_Group_union`: this group's members, then `other`'s that are not in this one.
    pub fn union(&self, other: &Group) -> Group {
        let mut m = self.members().to_vec();
        m.extend(other.members().iter().filter(|&&p| !self.contains(p)));
        self.derived(m)
    }

    /// `MPI_Group_intersection`: this group's members that are in `other`, in this order.
    pub fn intersection(&self, other: &Group) -> Group {
        self.derived(
            self.members()
                .iter()
                .copied()
                .filter(|&p| other.contains(p))
                .collect(),
        )
    }

    /// `MPI_Group_difference`: this group's members that are not in `other`.
    pub fn difference(&self, other: &Group) -> Group {
        self.derived(
            self.members()
                .iter()
                .copied()
                .filter(|&p| !other.contains(p))
                .collect(),
        )
    }

    /// `MPI_Group_incl`: the members at `ranks`, in that order (distinct, in range).
    pub fn incl(&self, ranks: &[i32], func: &str) -> MpiResult<Group> {
        let mut seen = vec![false; self.size() as usize];
        let mut m = Vec::with_capacity(ranks.len());
        for (i, &r) in ranks.iter().enumerate() {
            let p = self.checked_rank(r, func, &format!("ranks[{i}]"))?;
            if std::mem::replace(&mut seen[r as usize], true) {
                return fail(
                    ErrorClass::Rank,
                    format!("{func}(ranks[{i}]={r}): rank listed twice"),
                );
            }
            m.push(p);
        }
        Ok(self.derived(m))
    }

    /// `MPI_Group_excl`: the members not at `ranks`, in group order (distinct, in range).
    pub fn excl(&self, ranks: &[i32], func: &str) -> MpiResult<Group> {
        let mut drop = vec![false; self.size() as usize];
        for (i, &r) in ranks.iter().enumerate() {
            self.checked_rank(r, func, &format!("ranks[{i}]"))?;
            if std::mem::replace(&mut drop[r as usize], true) {
                return fail(
                    ErrorClass::Rank,
                    format!("{func}(ranks[{i}]={r}): rank listed twice"),
                );
            }
        }
        Ok(self.derived(
            self.members()
                .iter()
                .zip(&drop)
                .filter(|(_, &d)| !d)
                .map(|(&p, _)| p)
                .collect(),
        ))
    }

    /// The ranks that triplets (first, last, stride) name, in order, checked.
    pub fn expand_ranges(&self, ranges: &[[i32; 3]], func: &str) -> MpiResult<Vec<i32>> {
        let mut out = Vec::new();
        let mut seen = vec![false; self.size() as usize];
        for (i, &[first, last, stride]) in ranges.iter().enumerate() {
            if stride == 0 {
                return fail(ErrorClass::Arg, format!("{func}(ranges[{i}]): stride 0"));
            }
            for (what, v) in [("first", first), ("last", last)] {
                if v < 0 || v as u32 >= self.size() {
                    return fail(
                        ErrorClass::Rank,
                        format!(
                            "{func}(ranges[{i}] {what}={v}): not a rank of the group (size {})",
                            self.size()
                        ),
                    );
                }
            }
            if (stride > 0 && first > last) || (stride < 0 && first < last) {
                return fail(
                    ErrorClass::Arg,
                    format!(
                        "{func}(ranges[{i}]=({first}, {last}, {stride})): the stride points away from last"
                    ),
                );
            }
            let mut r = first as i64;
            while (stride > 0 && r <= last as i64) || (stride < 0 && r >= last as i64) {
                if std::mem::replace(&mut seen[r as usize], true) {
                    return fail(
                        ErrorClass::Rank,
                        format!("{func}(ranges[{i}]): rank {r} named twice"),
                    );
                }
                out.push(r as i32);
                r += stride as i64;
            }
        }
        Ok(out)
    }

    pub fn range_incl(&self, ranges: &[[i32; 3]], func: &str) -> MpiResult<Group> {
        let ranks = self.expand_ranges(ranges, func)?;
        self.incl(&ranks, func)
    }

    pub fn range_excl(&self, ranges: &[[i32; 3]], func: &str) -> MpiResult<Group> {
        let ranks = self.expand_ranges(ranges, func)?;
        self.excl(&ranks, func)
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
        let big = Group::new((0..100).rev().collect());
        assert_eq!(big.rank_of(0), Some(99));
        assert_eq!(big.rank_of(100), None);
    }

    #[test]
    fn set_operations_keep_the_standards_order() {
        let a = Group::new(vec![0, 1, 2, 3]);
        let b = Group::new(vec![5, 3, 1]);
        assert_eq!(a.union(&b).members(), &[0, 1, 2, 3, 5]);
        assert_eq!(b.union(&a).members(), &[5, 3, 1, 0, 2]);
        assert_eq!(a.intersection(&b).members(), &[1, 3]);
        assert_eq!(b.intersection(&a).members(), &[3, 1]);
        assert_eq!(a.difference(&b).members(), &[0, 2]);
        assert_eq!(a.compare(&a.clone()), Compare::Ident);
        assert_eq!(a.compare(&Group::new(vec![3, 2, 1, 0])), Compare::Similar);
        assert_eq!(a.compare(&b), Compare::Unequal);
    }

    #[test]
    fn incl_excl_ranges() {
        let g = Group::new(vec![10, 11, 12, 13, 14, 15]);
        assert_eq!(g.incl(&[4, 0], "f").unwrap().members(), &[14, 10]);
        assert_eq!(g.excl(&[4, 0], "f").unwrap().members(), &[11, 12, 13, 15]);
        assert_eq!(
            g.incl(&[0, 0], "f").unwrap_err().code,
            ErrorClass::Rank as i32
        );
        assert_eq!(g.incl(&[6], "f").unwrap_err().code, ErrorClass::Rank as i32);
        assert_eq!(
            g.range_incl(&[[5, 1, -2]], "f").unwrap().members(),
            &[15, 13, 11]
        );
        assert_eq!(
            g.range_excl(&[[0, 4, 2]], "f").unwrap().members(),
            &[11, 13, 15]
        );
        assert!(g.range_incl(&[[0, 2, 1], [2, 3, 1]], "f").is_err());
        let t = g
            .translate(&[0, 5, -1], &Group::new(vec![15, 10]), -1, "f")
            .unwrap();
        assert_eq!(t, vec![Some(1), Some(0), Some(-1)]);
    }
}
