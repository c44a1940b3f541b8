//! Windows: the object behind an `MPI_Win`. A window records the memory this process exposes
//! (base address, size, displacement unit: the local values), how it was created (flavor), the
//! memory model, and a private duplicate of the communicator it was created on: that
//! duplicate's group is the window's group and its context ids are the window's own, for the
//! RMA traffic to come. Attributes, hints, name and errhandler are cached as on communicators.
//! RMA operations and synchronisation are not here yet (their entry points say so).
#![forbid(unsafe_code)]

use std::sync::{Arc, Mutex, MutexGuard};

use super::attr::AttrList;
use super::comm::{self, Comm};
use super::errhandler::Errhandler;
use super::group::Group;
use crate::error::{fail, ErrorClass, MpiResult};

/// How a window was created (`MPI_WIN_CREATE_FLAVOR`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Flavor {
    /// `MPI_Win_create`: memory the program owns.
    Create,
    /// `MPI_Win_allocate`: memory the library allocated for the window.
    Allocate,
    /// `MPI_Win_create_dynamic`: no memory at creation; regions are attached later.
    Dynamic,
    /// `MPI_Win_allocate_shared` (not created yet).
    Shared,
}

/// The memory model (`MPI_WIN_MODEL`). One node with coherent caches: public and private
/// copies are the same memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Model {
    Separate,
    Unified,
}

/// The memory one process exposes in a window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Memory {
    /// Address of the first byte (0 for dynamic windows: `MPI_BOTTOM`).
    pub base: usize,
    /// Size in bytes.
    pub size: u64,
    /// Displacement unit in bytes (positive).
    pub disp_unit: u32,
}

/// The window hints Weft understands that have a default in the standard (MPI 4.1 §12.2.1):
/// `MPI_Win_get_info` reports each of them, with the value set or the default.
const DEFAULT_HINTS: &[(&str, &str)] = &[
    ("no_locks", "false"),
    ("accumulate_ordering", "rar,raw,war,waw"),
    ("accumulate_ops", "same_op_no_op"),
    ("same_size", "false"),
    ("same_disp_unit", "false"),
    // Seed 004's keys (see docs/rma-extensions.md).
    ("mpi_win_scope", "process"),
    ("mpi_win_order", "false"),
    ("mpi_assert_accumulate_intrinsic", "false"),
];

/// Whether Weft understands hint `key` with `value` on a window of `flavor`; others are
/// ignored (not kept, not reported), as the standard allows.
fn understood(key: &str, value: &str, flavor: Flavor) -> bool {
    match key {
        "no_locks"
        | "same_size"
        | "same_disp_unit"
        | "mpi_win_order"
        | "mpi_assert_accumulate_intrinsic" => value == "true" || value == "false",
        "mpi_win_scope" => value == "process" || value == "thread",
        "accumulate_ordering" => {
            value == "none"
                || (!value.is_empty()
                    && value
                        .split(',')
                        .all(|p| matches!(p.trim(), "rar" | "raw" | "war" | "waw")))
        }
        "accumulate_ops" => value == "same_op" || value == "same_op_no_op",
        "mpi_accumulate_granularity" => value.trim().parse::<u64>().is_ok(),
        // Used when the library allocates the memory (see `alignment_hint`).
        "mpi_minimum_memory_alignment" => {
            flavor == Flavor::Allocate && alignment_hint(&[(key.into(), value.into())]).is_some()
        }
        _ => false,
    }
}

/// The alignment asked for by the `mpi_minimum_memory_alignment` hint (MPI 4.1, for
/// `MPI_Alloc_mem` and `MPI_Win_allocate`): a power of two, else ignored.
pub fn alignment_hint(hints: &[(String, String)]) -> Option<usize> {
    let (_, v) = hints
        .iter()
        .find(|(k, _)| k == "mpi_minimum_memory_alignment")?;
    let a: usize = v.trim().parse().ok()?;
    (a.is_power_of_two() && a <= 1 << 30).then_some(a)
}

/// Check a window size argument (`MPI_ERR_SIZE` when negative).
pub fn check_size(size: i64, func: &str, arg: &str) -> MpiResult<u64> {
    if size < 0 {
        return fail(
            ErrorClass::Size,
            format!("{func}({arg}={size}): a window size must not be negative"),
        );
    }
    Ok(size as u64)
}

/// Check a displacement unit (`MPI_ERR_DISP` unless positive; it must fit the int that
/// `MPI_WIN_DISP_UNIT` reports).
pub fn check_disp_unit(disp_unit: i64, func: &str) -> MpiResult<u32> {
    if disp_unit <= 0 {
        return fail(
            ErrorClass::Disp,
            format!("{func}(disp_unit={disp_unit}): the displacement unit must be positive"),
        );
    }
    if disp_unit > i32::MAX as i64 {
        return fail(
            ErrorClass::Disp,
            format!("{func}(disp_unit={disp_unit}): larger than the int MPI_WIN_DISP_UNIT reports"),
        );
    }
    Ok(disp_unit as u32)
}

/// A window.
#[derive(Debug)]
pub struct Win {
    /// A duplicate of the communicator the window was created on, private to the window.
    pub comm: Arc<Comm>,
    /// This process's memory in the window.
    pub memory: Memory,
    pub flavor: Flavor,
    pub model: Model,
    /// Cached attributes (the ABI layer runs their callbacks).
    pub attrs: AttrList,
    errhandler: Mutex<Arc<Errhandler>>,
    /// Whether the program chose this window's errhandler (`MPI_Win_set_errhandler`, here or
    /// on the window it duplicates); until then errors go where errors without an object go
    /// (`follows_default`).
    errhandler_set: std::sync::atomic::AtomicBool,
    name: Mutex<String>,
    /// Hints set at creation or by `MPI_Win_set_info` that Weft understands, in order.
    hints: Mutex<Vec<(String, String)>>,
    /// Regions attached to a dynamic window: (base, size); shared with its duplicates.
    regions: Arc<Mutex<Vec<(usize, u64)>>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Create a window over `parent` (collective over its group): the private communicator is
/// agreed like `MPI_Comm_dup`. Its errhandler is `MPI_ERRORS_ARE_FATAL` (MPI 4.1 §12.6.1).
pub fn create(
    parent: &Comm,
    memory: Memory,
    flavor: Flavor,
    hints: &[(String, String)],
    func: &str,
) -> MpiResult<Win> {
    if parent.is_inter() {
        return fail(
            ErrorClass::Comm,
            format!("{func}(comm): windows are created on intracommunicators"),
        );
    }
    let comm = comm::dup_named(parent, func)?;
    let win = Win {
        comm,
        memory,
        flavor,
        model: Model::Unified,
        attrs: AttrList::new(),
        errhandler: Mutex::new(Arc::new(Errhandler::FATAL)),
        errhandler_set: Default::default(),
        name: Mutex::new(String::new()),
        hints: Mutex::new(Vec::new()),
        regions: Arc::new(Mutex::new(Vec::new())),
    };
    win.set_hints(hints);
    Ok(win)
}

impl Win {
    /// `MPIX_Win_dup_with_info`: a window over the same memory and communicator, with the
    /// parent's hints overridden by `hints`, its own attributes and name, and the parent's
    /// errhandler. Local: nothing is agreed with other processes.
    pub fn dup_with(&self, hints: &[(String, String)]) -> Win {
        let win = Win {
            comm: self.comm.clone(),
            memory: self.memory,
            flavor: self.flavor,
            model: self.model,
            attrs: AttrList::new(),
            errhandler: Mutex::new(self.errhandler()),
            errhandler_set: self.errhandler_was_set().into(),
            name: Mutex::new(String::new()),
            hints: Mutex::new(lock(&self.hints).clone()),
            regions: self.regions.clone(),
        };
        win.set_hints(hints);
        win
    }

    /// The value of a hint this window reports (set, or the standard's default).
    pub fn hint(&self, key: &str) -> Option<String> {
        self.hints()
            .into_iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// The group of the processes that share the window.
    pub fn group(&self) -> &Group {
        &self.comm.group
    }

    /// This process's rank in the window's group.
    pub fn rank(&self) -> u32 {
        self.comm.rank
    }

    pub fn errhandler(&self) -> Arc<Errhandler> {
        lock(&self.errhandler).clone()
    }

    pub fn set_errhandler(&self, errhandler: Arc<Errhandler>) {
        *lock(&self.errhandler) = errhandler;
        self.errhandler_set
            .store(true, std::sync::atomic::Ordering::Release);
    }

    fn errhandler_was_set(&self) -> bool {
        self.errhandler_set
            .load(std::sync::atomic::Ordering::Acquire)
    }

    /// Whether no errhandler was ever chosen for this window. `MPI_Win_get_errhandler` then
    /// says `MPI_ERRORS_ARE_FATAL` (MPI 4.1 §12.6.1), and its errors go where errors without
    /// an object go: fatal unless the program set an errhandler on `MPI_COMM_SELF` or
    /// `MPI_COMM_WORLD` (MPICH's rule, `MPIR_Err_return_win`; MPICH's
    /// `errors/attr/keyvalmis` sets only `MPI_COMM_WORLD`'s and expects window errors back).
    pub fn follows_default(&self) -> bool {
        !self.errhandler_was_set()
    }

    pub fn name(&self) -> String {
        lock(&self.name).clone()
    }

    pub fn set_name(&self, name: &str) {
        *lock(&self.name) = name.to_owned();
    }

    /// Set (or replace) the hints Weft understands among `pairs`; others are ignored, and
    /// hints not named keep their values.
    pub fn set_hints(&self, pairs: &[(String, String)]) {
        let mut h = lock(&self.hints);
        for (k, v) in pairs {
            if !understood(k, v, self.flavor) {
                continue;
            }
            match h.iter_mut().find(|(hk, _)| hk == k) {
                Some(e) => e.1 = v.clone(),
                None => h.push((k.clone(), v.clone())),
            }
        }
    }

    /// The hints in use: every hint with a default (its value set, or the default), then the
    /// other hints set, in the order set.
    pub fn hints(&self) -> Vec<(String, String)> {
        let set = lock(&self.hints);
        let mut out: Vec<(String, String)> = DEFAULT_HINTS
            .iter()
            .map(|(k, d)| {
                let v = set.iter().find(|(sk, _)| sk == k).map_or(*d, |(_, v)| v);
                (k.to_string(), v.to_string())
            })
            .collect();
        for (k, v) in set.iter() {
            if !DEFAULT_HINTS.iter().any(|(d, _)| d == k) {
                out.push((k.clone(), v.clone()));
            }
        }
        out
    }

    fn require_dynamic(&self, func: &str) -> MpiResult<()> {
        if self.flavor != Flavor::Dynamic {
            return fail(
                ErrorClass::RmaFlavor,
                format!(
                    "{func}(win): only a window from MPI_Win_create_dynamic has memory attached"
                ),
            );
        }
        Ok(())
    }

    /// `MPI_Win_attach`: expose `size` bytes at `base` in a dynamic window. Regions must
    /// not overlap (MPI 4.1 §12.2.4).
    pub fn attach(&self, base: usize, size: u64, func: &str) -> MpiResult<()> {
        self.require_dynamic(func)?;
        let end = base as u128 + size as u128;
        let mut regions = lock(&self.regions);
        if let Some((b, s)) = regions
            .iter()
            .find(|(b, s)| (base as u128) < *b as u128 + *s as u128 && (*b as u128) < end)
        {
            return fail(
                ErrorClass::RmaAttach,
                format!(
                    "{func}(base={base:#x}, size={size}): overlaps the region of {s} bytes at {b:#x} already attached"
                ),
            );
        }
        regions.push((base, size));
        Ok(())
    }

    /// `MPI_Win_detach`: the region attached at `base` is no longer exposed.
    pub fn detach(&self, base: usize, func: &str) -> MpiResult<()> {
        self.require_dynamic(func)?;
        let mut regions = lock(&self.regions);
        match regions.iter().position(|(b, _)| *b == base) {
            Some(i) => {
                regions.remove(i);
                Ok(())
            }
            None => fail(
                ErrorClass::RmaAttach,
                format!("{func}(base={base:#x}): no memory is attached to the window there"),
            ),
        }
    }

    /// The regions attached to a dynamic window, in the order attached.
    pub fn regions(&self) -> Vec<(usize, u64)> {
        lock(&self.regions).clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_and_disp_unit_are_checked() {
        assert_eq!(check_size(0, "f", "size").unwrap(), 0);
        let e = check_size(-1, "MPI_Win_create", "size").unwrap_err();
        assert_eq!(e.class(), ErrorClass::Size as i32);
        assert!(e.message.contains("MPI_Win_create(size=-1)"));
        assert_eq!(check_disp_unit(4, "f").unwrap(), 4);
        for bad in [0, -3, i32::MAX as i64 + 1] {
            let e = check_disp_unit(bad, "MPI_Win_allocate_c").unwrap_err();
            assert_eq!(e.class(), ErrorClass::Disp as i32);
            assert!(e.message.contains("disp_unit"));
        }
    }

    #[test]
    fn hints_are_filtered_by_meaning() {
        assert!(understood("no_locks", "true", Flavor::Create));
        assert!(!understood("no_locks", "yes", Flavor::Create));
        assert!(understood(
            "accumulate_ordering",
            "raw, war",
            Flavor::Create
        ));
        assert!(understood("accumulate_ordering", "none", Flavor::Create));
        assert!(!understood("accumulate_ordering", "", Flavor::Create));
        assert!(!understood(
            "accumulate_ordering",
            "rar,xyz",
            Flavor::Create
        ));
        assert!(!understood("accumulate_ops", "any", Flavor::Create));
        assert!(understood(
            "mpi_accumulate_granularity",
            "64",
            Flavor::Create
        ));
        assert!(understood(
            "mpi_minimum_memory_alignment",
            "4096",
            Flavor::Allocate
        ));
        assert!(!understood(
            "mpi_minimum_memory_alignment",
            "4096",
            Flavor::Create
        ));
        assert!(!understood(
            "mpi_minimum_memory_alignment",
            "100",
            Flavor::Allocate
        ));
        assert!(!understood("unknown_key", "true", Flavor::Create));
    }

    #[test]
    fn alignment_hint_is_a_power_of_two() {
        let h = |v: &str| vec![("mpi_minimum_memory_alignment".to_owned(), v.to_owned())];
        assert_eq!(alignment_hint(&h("256")), Some(256));
        assert_eq!(alignment_hint(&h("48")), None);
        assert_eq!(alignment_hint(&h("x")), None);
        assert_eq!(alignment_hint(&[]), None);
    }
}
