//! Reduction operations: the predefined ops on the element types the standard allows them on,
//! and user ops (a callback the ABI layer wraps). A `Reduction` is what the collectives apply:
//! `inout[i] = in[i] op inout[i]` over whole buffers of elements.
#![forbid(unsafe_code)]

mod float16;
pub mod kernels;
pub mod softfloat;

use std::sync::Arc;

use crate::datatype::{Datatype, TypeClass};
use crate::error::{ErrorClass, MpiError, MpiResult};

/// The standard's predefined operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpKind {
    Max,
    Min,
    Sum,
    Prod,
    Land,
    Band,
    Lor,
    Bor,
    Lxor,
    Bxor,
    Minloc,
    Maxloc,
    Replace,
    NoOp,
}

impl OpKind {
    pub fn name(self) -> &'static str {
        use OpKind::*;
        match self {
            Max => "MPI_MAX",
            Min => "MPI_MIN",
            Sum => "MPI_SUM",
            Prod => "MPI_PROD",
            Land => "MPI_LAND",
            Band => "MPI_BAND",
            Lor => "MPI_LOR",
            Bor => "MPI_BOR",
            Lxor => "MPI_LXOR",
            Bxor => "MPI_BXOR",
            Minloc => "MPI_MINLOC",
            Maxloc => "MPI_MAXLOC",
            Replace => "MPI_REPLACE",
            NoOp => "MPI_NO_OP",
        }
    }
}

/// A scalar kind that predefined ops compute on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scalar {
    I8,
    I16,
    I32,
    I64,
    I128,
    U8,
    U16,
    U32,
    U64,
    U128,
    F16,
    /// bfloat16 (`MPIX_BFLOAT16`): the upper half of an IEEE binary32.
    BF16,
    F32,
    F64,
    /// x87 80-bit extended precision in 16 bytes (C `long double` on x86-64).
    F80,
    /// IEEE binary128 (Fortran `REAL*16`).
    F128,
}

impl Scalar {
    pub fn size(self) -> usize {
        use Scalar::*;
        match self {
            I8 | U8 => 1,
            I16 | U16 | F16 | BF16 => 2,
            I32 | U32 | F32 => 4,
            I64 | U64 | F64 => 8,
            I128 | U128 | F80 | F128 => 16,
        }
    }
}

/// How the elements of a predefined type are laid out, for the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Elem {
    Int(Scalar),
    Float(Scalar),
    Complex(Scalar),
    /// Logical values of this many bytes (C bool, Fortran LOGICAL*n): nonzero is true.
    Logical(usize),
    Byte,
    /// A value-index pair (`MPI_DOUBLE_INT`, ...): the value at 0, the index at `index_at`,
    /// `extent` bytes per element.
    Pair {
        value: Scalar,
        index: Scalar,
        index_at: usize,
        extent: usize,
    },
}

impl Elem {
    /// The element layout of a predefined datatype (`None` for `MPI_PACKED`).
    pub fn of(dt: &Datatype) -> Option<Elem> {
        use Scalar::*;
        let int = |size| match size {
            1 => Some(I8),
            2 => Some(I16),
            4 => Some(I32),
            8 => Some(I64),
            16 => Some(I128),
            _ => None,
        };
        let uint = |size| match size {
            1 => Some(U8),
            2 => Some(U16),
            4 => Some(U32),
            8 => Some(U64),
            16 => Some(U128),
            _ => None,
        };
        let float = |size, name: &str| match size {
            2 if name.contains("BFLOAT16") => Some(BF16),
            2 => Some(F16),
            4 => Some(F32),
            8 => Some(F64),
            16 if name.contains("LONG_DOUBLE") => Some(F80),
            16 => Some(F128),
            _ => None,
        };
        Some(match dt.class {
            TypeClass::SignedInt | TypeClass::Char => Elem::Int(int(dt.size)?),
            TypeClass::UnsignedInt => Elem::Int(uint(dt.size)?),
            TypeClass::Float => Elem::Float(float(dt.size, dt.name)?),
            TypeClass::Complex => Elem::Complex(float(dt.size / 2, dt.name)?),
            TypeClass::Logical => Elem::Logical(dt.size),
            TypeClass::Byte => Elem::Byte,
            TypeClass::Packed => return None,
            TypeClass::Pair => {
                let (value, index, index_at) = match dt.name {
                    "MPI_FLOAT_INT" => (F32, I32, 4),
                    "MPI_DOUBLE_INT" => (F64, I32, 8),
                    "MPI_LONG_INT" => (I64, I32, 8),
                    "MPI_2INT" | "MPI_2INTEGER" => (I32, I32, 4),
                    "MPI_SHORT_INT" => (I16, I32, 4),
                    "MPI_LONG_DOUBLE_INT" => (F80, I32, 16),
                    "MPI_2REAL" => (F32, F32, 4),
                    "MPI_2DOUBLE_PRECISION" => (F64, F64, 8),
                    _ => return None,
                };
                // Packed, as collectives hand them over: the index right after the value.
                let _ = index_at;
                Elem::Pair {
                    value,
                    index,
                    index_at: value.size(),
                    extent: value.size() + index.size(),
                }
            }
        })
    }

    /// Whether predefined op `op` is defined on this element kind.
    pub fn allows(self, op: OpKind) -> bool {
        use OpKind::*;
        match op {
            Replace | NoOp => true,
            Max | Min => matches!(self, Elem::Int(_) | Elem::Float(_)),
            Sum | Prod => matches!(self, Elem::Int(_) | Elem::Float(_) | Elem::Complex(_)),
            Land | Lor | Lxor => matches!(self, Elem::Int(_) | Elem::Logical(_)),
            Band | Bor | Bxor => matches!(self, Elem::Int(_) | Elem::Byte),
            Minloc | Maxloc => matches!(self, Elem::Pair { .. }),
        }
    }
}

/// A user function: `inout[i] = in[i] op inout[i]` for `count` elements (the ABI layer wraps
/// the C callback and the datatype handle it must receive).
pub type UserFn = Arc<dyn Fn(&[u8], &mut [u8], usize) + Send + Sync>;

/// An operation as the collectives apply it.
#[derive(Clone)]
pub enum Op {
    Predefined(OpKind),
    User { func: UserFn, commutative: bool },
}

impl std::fmt::Debug for Op {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Op::Predefined(k) => write!(f, "{}", k.name()),
            Op::User { commutative, .. } => write!(f, "user op (commutative: {commutative})"),
        }
    }
}

/// The op mark (`Reduction::mark`) of a non-commutative user-defined op.
pub const USER_MARK: u8 = 0;
/// The op mark of a commutative user-defined op (above every predefined op's).
pub const USER_COMMUTATIVE_MARK: u8 = 15;

/// An operation bound to the element type it reduces.
#[derive(Clone, Debug)]
pub struct Reduction {
    pub op: Op,
    /// The layout the predefined kernel uses (`None` for user ops).
    elem: Option<Elem>,
    /// Bytes per packed element (a predefined element, or a user op's whole datatype
    /// instance): buffers are split only at multiples of it.
    pub extent: usize,
}

impl Reduction {
    /// What the ranks of a collective reduction compare besides the size: a predefined op's
    /// number (1..=14), or for a user-defined op its commutativity (`USER_MARK` or
    /// `USER_COMMUTATIVE_MARK`): a user op's handle and function address may differ between
    /// processes, so two user ops of the same commutativity are not told apart (each
    /// combining rank applies its own).
    pub fn mark(&self) -> u8 {
        match self.op {
            Op::Predefined(kind) => kind as u8 + 1,
            Op::User {
                commutative: false, ..
            } => USER_MARK,
            Op::User {
                commutative: true, ..
            } => USER_COMMUTATIVE_MARK,
        }
    }

    /// Bind a predefined op to a predefined datatype; `MPI_ERR_OP` when the standard does
    /// not define the op on the type.
    pub fn predefined(kind: OpKind, dt: &Datatype) -> MpiResult<Reduction> {
        let elem = Elem::of(dt).filter(|e| e.allows(kind)).ok_or_else(|| {
            MpiError::new(
                ErrorClass::Op,
                format!("{} is not defined on datatype {}", kind.name(), dt.name),
            )
        })?;
        if !kernels::supported(kind, elem) {
            return Err(MpiError::new(
                ErrorClass::UnsupportedOperation,
                format!(
                    "{} on datatype {} is not supported by Weft yet",
                    kind.name(),
                    dt.name
                ),
            ));
        }
        Ok(Reduction {
            op: Op::Predefined(kind),
            elem: Some(elem),
            extent: dt.size.max(1),
        })
    }

    /// A user op on packed instances of `extent` bytes.
    /// `predefined` for an element layout already known (`Elem::of` of the type) and `size`
    /// bytes per element; `None` where `predefined` would fail (the caller then takes the
    /// path that reports why).
    #[inline(always)]
    pub fn of_elem(kind: OpKind, elem: Elem, size: usize) -> Option<Reduction> {
        (elem.allows(kind) && kernels::supported(kind, elem)).then_some(Reduction {
            op: Op::Predefined(kind),
            elem: Some(elem),
            extent: size.max(1),
        })
    }

    pub fn user(func: UserFn, commutative: bool, extent: usize) -> Reduction {
        Reduction {
            op: Op::User { func, commutative },
            elem: None,
            extent: extent.max(1),
        }
    }

    pub fn commutative(&self) -> bool {
        match &self.op {
            Op::Predefined(_) => true,
            Op::User { commutative, .. } => *commutative,
        }
    }

    /// Whether applying the op may run user code (it must not run under an internal lock).
    pub fn is_user(&self) -> bool {
        matches!(self.op, Op::User { .. })
    }

    /// `inout = input op inout`, element-wise; both hold the same whole number of elements.
    /// The op when one native atomic read-modify-write of the element's width computes it
    /// (`MPI_SUM` on integers, the bitwise ops on integers and bytes), for RMA's atomics.
    pub fn native(&self) -> Option<OpKind> {
        match (&self.op, self.elem) {
            (Op::Predefined(OpKind::Sum), Some(Elem::Int(_))) => Some(OpKind::Sum),
            (
                Op::Predefined(k @ (OpKind::Band | OpKind::Bor | OpKind::Bxor)),
                Some(Elem::Int(_) | Elem::Byte),
            ) => Some(*k),
            _ => None,
        }
    }

    pub fn apply(&self, input: &[u8], inout: &mut [u8]) {
        debug_assert_eq!(input.len(), inout.len());
        let n = input.len().min(inout.len());
        let (input, inout) = (&input[..n], &mut inout[..n]);
        match (&self.op, self.elem) {
            (Op::Predefined(kind), Some(elem)) => kernels::apply(*kind, elem, input, inout),
            (Op::User { func, .. }, _) => {
                let count = n / self.extent;
                if count > 0 {
                    func(input, inout, count)
                }
            }
            (Op::Predefined(_), None) => unreachable!("predefined reductions carry their layout"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dt(name: &'static str, size: usize, extent: usize, class: TypeClass) -> Datatype {
        Datatype {
            name,
            size,
            extent,
            class,
        }
    }

    #[test]
    fn allowed_combinations() {
        let int = dt("MPI_INT", 4, 4, TypeClass::SignedInt);
        let byte = dt("MPI_BYTE", 1, 1, TypeClass::Byte);
        let cplx = dt("MPI_C_DOUBLE_COMPLEX", 16, 16, TypeClass::Complex);
        let pair = dt("MPI_DOUBLE_INT", 12, 16, TypeClass::Pair);
        assert!(Reduction::predefined(OpKind::Sum, &int).is_ok());
        assert!(Reduction::predefined(OpKind::Band, &byte).is_ok());
        let e = Reduction::predefined(OpKind::Sum, &byte).unwrap_err();
        assert_eq!(e.code, ErrorClass::Op as i32);
        assert!(Reduction::predefined(OpKind::Max, &cplx).is_err());
        assert!(Reduction::predefined(OpKind::Prod, &cplx).is_ok());
        assert!(Reduction::predefined(OpKind::Minloc, &pair).is_ok());
        assert!(Reduction::predefined(OpKind::Minloc, &int).is_err());
    }

    #[test]
    fn of_elem_agrees_with_predefined() {
        let types = [
            dt("MPI_INT", 4, 4, TypeClass::SignedInt),
            dt("MPI_BYTE", 1, 1, TypeClass::Byte),
            dt("MPI_DOUBLE", 8, 8, TypeClass::Float),
            dt("MPI_C_DOUBLE_COMPLEX", 16, 16, TypeClass::Complex),
            dt("MPI_C_BOOL", 1, 1, TypeClass::Logical),
            dt("MPI_LONG_DOUBLE", 16, 16, TypeClass::Float),
        ];
        use OpKind::*;
        let ops = [
            Max, Min, Sum, Prod, Land, Band, Lor, Bor, Lxor, Bxor, Minloc, Replace,
        ];
        for t in &types {
            let elem = Elem::of(t).expect("a predefined layout");
            for op in ops {
                let fast = Reduction::of_elem(op, elem, t.size);
                let full = Reduction::predefined(op, t);
                assert_eq!(fast.is_some(), full.is_ok(), "{} on {}", op.name(), t.name);
                if let (Some(f), Ok(g)) = (fast, full) {
                    assert_eq!((f.elem, f.extent), (g.elem, g.extent));
                    // The same result on the same bytes.
                    let input: Vec<u8> =
                        (0..t.size as u8 * 2).map(|b| b.wrapping_mul(37)).collect();
                    let (mut a, mut b) = (vec![3u8; input.len()], vec![3u8; input.len()]);
                    f.apply(&input, &mut a);
                    g.apply(&input, &mut b);
                    assert_eq!(a, b, "{} on {}", op.name(), t.name);
                }
            }
        }
    }

    #[test]
    fn user_op_sees_counts() {
        let f: UserFn = Arc::new(|a: &[u8], b: &mut [u8], n: usize| {
            assert_eq!(n * 2, a.len());
            for (x, y) in a.iter().zip(b.iter_mut()) {
                *y = y.wrapping_sub(*x);
            }
        });
        let r = Reduction::user(f, false, 2);
        let mut b = [10u8, 10, 10, 10];
        r.apply(&[1, 2, 3, 4], &mut b);
        assert_eq!(b, [9, 8, 7, 6]);
        assert!(!r.commutative());
    }

    /// Issue #25: ranks that disagree on a user op's commutativity must meet different op
    /// marks (the tag's mark bits, `coll::tag`), and no user op a predefined op's.
    #[test]
    fn marks_tell_commutativity_and_predefined_ops_apart() {
        let f: UserFn = Arc::new(|_, _, _| {});
        let user = Reduction::user(f.clone(), false, 4).mark();
        let user_commutative = Reduction::user(f, true, 4).mark();
        assert_ne!(user, user_commutative);
        use OpKind::*;
        let kinds = [
            Max, Min, Sum, Prod, Land, Band, Lor, Bor, Lxor, Bxor, Minloc, Maxloc, Replace, NoOp,
        ];
        let predefined: Vec<u8> = kinds
            .iter()
            .map(|&k| {
                Reduction {
                    op: Op::Predefined(k),
                    elem: None,
                    extent: 4,
                }
                .mark()
            })
            .collect();
        for m in [user, user_commutative] {
            assert!(!predefined.contains(&m), "user mark {m}");
            assert!(m < 32, "the tag holds 5 mark bits");
        }
    }
}
