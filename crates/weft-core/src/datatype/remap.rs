//! A type rebuilt with other element sizes: what a filetype looks like in a file whose data
//! representation stores some predefined elements in more or fewer bytes (`external32`'s
//! 4-byte `MPI_LONG`, a user representation's extents). Counts and element strides keep
//! their meaning; byte displacements the program gave stay as given.
#![forbid(unsafe_code)]

use std::sync::Arc;

use super::predefined::{Datatype, TypeClass};
use super::types::{Combiner, Type};
use crate::error::{ErrorClass, MpiError, MpiResult};

static BYTE: Datatype = Datatype::predefined("MPI_BYTE", 1, TypeClass::Byte);

impl Type {
    /// Call `f` on every predefined element of one instance, in typemap order.
    pub fn visit_basic(&self, f: &mut dyn FnMut(&'static Datatype)) {
        self.for_each_basic(0, &mut |_, d| f(d));
    }

    /// This type with each predefined element `d` replaced by `size(d)` bytes.
    pub fn map_basic(
        self: &Arc<Type>,
        size: &mut dyn FnMut(&'static Datatype) -> MpiResult<usize>,
    ) -> MpiResult<Arc<Type>> {
        if let Some(d) = self.predefined {
            let n = size(d)?;
            if n == d.size {
                return Ok(self.clone());
            }
            let t = Type::contiguous(n, &Type::basic(&BYTE), false)?;
            t.commit();
            return Ok(t);
        }
        let mut contents = self.contents().clone();
        for t in contents.types.iter_mut() {
            *t = t.map_basic(size)?;
        }
        let t = match self.combiner() {
            Combiner::Darray | Combiner::ValueIndex | Combiner::Named => {
                return Err(MpiError::new(
                    ErrorClass::UnsupportedDatarep,
                    format!(
                        "a {:?} type whose elements change size in the file representation is not supported",
                        self.combiner()
                    ),
                ))
            }
            c => Type::from_contents(c, &contents, self.is_large())?,
        };
        t.commit();
        Ok(t)
    }
}
