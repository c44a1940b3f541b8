//! One handle per user errhandler. `MPI_Comm_get_errhandler` (and the window, file and
//! session forms) returns the handle the errhandler was created with, as long as that handle
//! lives, and counts a reference that `MPI_Errhandler_free` gives back: programs compare the
//! handles (MPICH's commerrf sets an errhandler and checks that the one it gets back is the
//! same). The handle is removed from the table when its last reference is freed. Not a hot
//! path: one mutex.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use weft_core::object::Errhandler;

use crate::ctypes::MPI_Errhandler;
use crate::handles::{BadHandle, Kind, Table};

/// The table of user errhandler handles (`objects` re-exports it for lookups).
pub static ERRHANDLERS: Table<Errhandler> = Table::new(Kind::Errhandler);

/// Errhandler object (by address) -> (its handle, references the program holds).
static HANDLES: Mutex<Option<HashMap<usize, (MPI_Errhandler, usize)>>> = Mutex::new(None);

fn key(errhandler: &Arc<Errhandler>) -> usize {
    Arc::as_ptr(errhandler) as usize
}

/// A new errhandler's handle (one reference).
pub fn create(errhandler: Arc<Errhandler>) -> MPI_Errhandler {
    let mut map = HANDLES.lock().unwrap_or_else(|p| p.into_inner());
    let k = key(&errhandler);
    let handle = ERRHANDLERS.insert(errhandler);
    map.get_or_insert_with(HashMap::new).insert(k, (handle, 1));
    handle
}

/// The handle of a user errhandler an object uses, one more reference to it (a new handle
/// when the program freed all of its own).
pub fn get(errhandler: &Arc<Errhandler>) -> MPI_Errhandler {
    let mut map = HANDLES.lock().unwrap_or_else(|p| p.into_inner());
    let map = map.get_or_insert_with(HashMap::new);
    let entry = map
        .entry(key(errhandler))
        .or_insert_with(|| (ERRHANDLERS.insert(errhandler.clone()), 0));
    entry.1 += 1;
    entry.0
}

/// `MPI_Errhandler_free` of a user handle: one reference fewer; the handle goes with the
/// last one (objects using the errhandler keep the object).
pub fn free(handle: MPI_Errhandler) -> Result<(), BadHandle> {
    let mut map = HANDLES.lock().unwrap_or_else(|p| p.into_inner());
    let object = ERRHANDLERS.get(handle)?;
    let map = map.get_or_insert_with(HashMap::new);
    let k = key(&object);
    match map.get_mut(&k) {
        Some((h, refs)) if *h == handle && *refs > 1 => {
            *refs -= 1;
            Ok(())
        }
        _ => {
            map.remove(&k);
            ERRHANDLERS.remove(handle).map(drop)
        }
    }
}
