//! Datatypes and the pack/unpack interface the protocols use.
//!
//! A message's user memory is described by a `Buf`: where it is and how its bytes are laid
//! out. Protocols never touch user memory directly; they ask a `Buf` to pack a range of the
//! message's bytes into transport memory, or to unpack bytes into the user's buffer. A `Buf`
//! is contiguous bytes or `count` instances of a committed derived `Type`, whose compiled
//! layout (`layout.rs`, built by `compile.rs`) packs and unpacks any byte range of the message.
//!
//! `Datatype` (predefined.rs) is the plain description of a predefined element (what
//! reductions work on); `Type` (types.rs) is the full datatype object behind every handle.

pub mod access;
pub mod buf;
pub mod compile;
pub mod external32;
pub mod layout;
pub mod predefined;
mod remap;
#[cfg(test)]
mod tests;
pub mod types;

pub use buf::Buf;
pub use layout::Seg;
pub use predefined::{Datatype, TypeClass};
pub use types::{Combiner, Contents, Distrib, Order, Type};
