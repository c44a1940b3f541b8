//! Datatypes and the pack/unpack interface the protocols use.
//!
//! A message's user memory is described by a `Buf`: where it is and how its bytes are laid
//! out. Protocols never touch user memory directly; they ask a `Buf` to pack a range of the
//! message's bytes into transport memory, or to unpack bytes into the user's buffer. Today a
//! `Buf` is contiguous (predefined types and contiguous counts); the datatype issue adds typed
//! layouts behind the same calls.

pub mod access;
pub mod buf;
pub mod predefined;

pub use buf::Buf;
pub use predefined::{Datatype, TypeClass};
