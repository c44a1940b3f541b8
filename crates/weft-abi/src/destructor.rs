//! The destructor of an object created by one of MPICH's `_x` extensions (`api/with_state.rs`):
//! the program's function and extra state, called once when the object goes. Its own module
//! so that the objects holding one (ops, keyvals, errhandlers) need not import the `_x` entry
//! points.

use std::ffi::c_void;

use crate::ctypes::*;

/// A destructor and its extra state: runs when dropped (with the object that holds it).
pub struct Destructor {
    f: MPIX_Destructor_function,
    extra_state: usize,
}

impl Destructor {
    /// `None` when no destructor was given.
    pub fn new(
        f: Option<MPIX_Destructor_function>,
        extra_state: *mut c_void,
    ) -> Option<Destructor> {
        f.map(|f| Destructor {
            f,
            extra_state: extra_state as usize,
        })
    }
}

impl std::fmt::Debug for Destructor {
    fn fmt(&self, out: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(out, "Destructor({:#x})", self.extra_state)
    }
}

impl Drop for Destructor {
    fn drop(&mut self) {
        // A destructor function the program registered with its extra state.
        // SAFETY: it is called once, when the last reference to its object goes.
        unsafe { (self.f)(self.extra_state as *mut c_void) }
    }
}
