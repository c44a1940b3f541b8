//! The standard's predefined datatypes: their sizes and what reductions may apply to them.
#![forbid(unsafe_code)]

/// What kind of values a predefined type holds (for reductions and `MPI_Type_match_size`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeClass {
    SignedInt,
    UnsignedInt,
    Float,
    Complex,
    Logical,
    Byte,
    Char,
    /// Value-index pairs (`MPI_DOUBLE_INT`, ...), only for `MINLOC`/`MAXLOC`.
    Pair,
    Packed,
}

/// A datatype as the protocols see it: its size in bytes and its extent. Predefined types
/// are contiguous; derived types arrive with the datatype issue.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Datatype {
    pub name: &'static str,
    /// Bytes of data in one element.
    pub size: usize,
    /// Distance between consecutive elements.
    pub extent: usize,
    pub class: TypeClass,
}

impl Datatype {
    pub const fn predefined(name: &'static str, size: usize, class: TypeClass) -> Datatype {
        Datatype {
            name,
            size,
            extent: size,
            class,
        }
    }

    /// Whether `count` elements occupy `count * size` consecutive bytes.
    pub fn is_contiguous(&self) -> bool {
        self.size == self.extent
    }

    /// Bytes in `count` elements, or `None` on overflow.
    pub fn bytes_for(&self, count: usize) -> Option<usize> {
        count.checked_mul(self.size)
    }
}
