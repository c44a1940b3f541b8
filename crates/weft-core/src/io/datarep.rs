//! Data representations of files: `native` and `internal` (the bytes as they are in memory;
//! Weft's internal representation is its native one), `external32` (big-endian, the
//! standard's fixed sizes: `datatype::external32`), and representations registered by the
//! program (`MPI_Register_datarep`), whose conversion functions the ABI layer calls.
#![forbid(unsafe_code)]

use std::sync::{Arc, Mutex};

use crate::datatype::{Datatype, Type};
use crate::error::{ErrorClass, MpiError, MpiResult};

/// A representation registered with `MPI_Register_datarep` (the ABI implements it over the
/// C callbacks). Conversions work on user memory described by the ABI's datatype handle.
pub trait UserRep: Send + Sync {
    fn name(&self) -> &str;
    /// Bytes of one element of the predefined type `d` in the file.
    fn file_extent(&self, d: &'static Datatype) -> MpiResult<u64>;
    /// Whether the program gave conversion functions (without them the bytes are native).
    fn converts(&self) -> bool;
    /// Convert `count` items (starting at item `position`) of the user buffer `mem` into
    /// `file` (write conversion).
    fn to_file(&self, mem: &MemData, position: u64, count: u64, file: &mut [u8]) -> MpiResult<()>;
    /// Convert `file` into `count` items of the user buffer starting at item `position`.
    fn from_file(&self, mem: &MemData, position: u64, count: u64, file: &[u8]) -> MpiResult<()>;
}

/// A user buffer as a conversion function sees it: address, count, the datatype and the
/// ABI's handle of it.
#[derive(Clone, Copy, Debug)]
pub struct MemData {
    pub addr: usize,
    pub count: u64,
    pub handle: usize,
}

/// A file's data representation.
#[derive(Clone)]
pub enum Rep {
    Native,
    Internal,
    External32,
    User(Arc<dyn UserRep>),
}

impl Rep {
    pub fn name(&self) -> String {
        match self {
            Rep::Native => "native".into(),
            Rep::Internal => "internal".into(),
            Rep::External32 => "external32".into(),
            Rep::User(u) => u.name().to_owned(),
        }
    }

    /// Whether file bytes are memory bytes.
    pub fn is_native(&self) -> bool {
        match self {
            Rep::Native | Rep::Internal => true,
            Rep::External32 => false,
            Rep::User(u) => !u.converts(),
        }
    }

    /// Bytes of one element of predefined `d` in the file.
    pub fn element_size(&self, d: &'static Datatype) -> MpiResult<u64> {
        match self {
            Rep::Native | Rep::Internal => Ok(d.size as u64),
            Rep::External32 => Ok(crate::datatype::external32::element_size(d) as u64),
            Rep::User(u) => u.file_extent(d),
        }
    }

    /// Bytes of one instance of `t` in the file (`MPI_File_get_type_extent` uses the extent;
    /// this is the data size).
    pub fn size_of(&self, t: &Type) -> MpiResult<u64> {
        if self.is_native() && !matches!(self, Rep::User(_)) {
            return Ok(t.size as u64);
        }
        let mut total = 0u64;
        let mut err = None;
        t.visit_basic(&mut |d| match self.element_size(d) {
            Ok(n) => total += n,
            Err(e) => err = Some(e),
        });
        err.map_or(Ok(total), Err)
    }

    /// `t` laid out as in the file: every predefined element replaced by one of its file
    /// size (displacements the program gave in bytes stay as given, as the standard says
    /// they are computed with `MPI_File_get_type_extent`). `t` itself when sizes agree.
    pub fn file_layout(&self, t: &Arc<Type>) -> MpiResult<Arc<Type>> {
        let mut same = true;
        let mut err = None;
        t.visit_basic(&mut |d| match self.element_size(d) {
            Ok(n) if n == d.size as u64 => {}
            Ok(_) => same = false,
            Err(e) => err = Some(e),
        });
        if let Some(e) = err {
            return Err(e);
        }
        if same {
            return Ok(t.clone());
        }
        t.map_basic(&mut |d| self.element_size(d).map(|n| n as usize))
    }

    /// The extent of `t` in the file (`MPI_File_get_type_extent`).
    pub fn extent_of(&self, t: &Arc<Type>) -> MpiResult<i64> {
        Ok(self.file_layout(t)?.extent as i64)
    }
}

/// Representations registered so far (never removed: the standard has no unregister).
static REGISTERED: Mutex<Vec<Arc<dyn UserRep>>> = Mutex::new(Vec::new());

fn registered() -> std::sync::MutexGuard<'static, Vec<Arc<dyn UserRep>>> {
    REGISTERED.lock().unwrap_or_else(|e| e.into_inner())
}

/// `MPI_Register_datarep`.
pub fn register(rep: Arc<dyn UserRep>, func: &str) -> MpiResult<()> {
    let name = rep.name().to_owned();
    let mut list = registered();
    if ["native", "internal", "external32"].contains(&name.as_str())
        || list.iter().any(|r| r.name() == name)
    {
        return Err(MpiError::new(
            ErrorClass::DupDatarep,
            format!("{func}(datarep=\"{name}\"): a representation of that name exists"),
        ));
    }
    list.push(rep);
    Ok(())
}

/// The representation named `name`.
pub fn lookup(name: &str, func: &str) -> MpiResult<Rep> {
    match name {
        "native" => Ok(Rep::Native),
        "internal" => Ok(Rep::Internal),
        "external32" => Ok(Rep::External32),
        _ => registered()
            .iter()
            .find(|r| r.name() == name)
            .map(|r| Rep::User(r.clone()))
            .ok_or_else(|| {
                MpiError::new(
                    ErrorClass::UnsupportedDatarep,
                    format!("{func}(datarep=\"{name}\"): no such data representation"),
                )
            }),
    }
}
