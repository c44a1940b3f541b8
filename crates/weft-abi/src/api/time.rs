//! Clocks and address arithmetic.

use std::sync::LazyLock;
use std::time::Instant;

use crate::ctypes::MPI_Aint;

/// Wtime's origin: fixed at first use, so values are comparable within the process.
static ORIGIN: LazyLock<Instant> = LazyLock::new(Instant::now);

pub(crate) fn mpi_wtime() -> f64 {
    ORIGIN.elapsed().as_secs_f64()
}

pub(crate) fn mpi_wtick() -> f64 {
    // Instant reads CLOCK_MONOTONIC, whose resolution on Linux is one nanosecond.
    1e-9
}

pub(crate) fn mpi_aint_add(base: MPI_Aint, disp: MPI_Aint) -> MPI_Aint {
    base.wrapping_add(disp)
}

pub(crate) fn mpi_aint_diff(addr1: MPI_Aint, addr2: MPI_Aint) -> MPI_Aint {
    addr1.wrapping_sub(addr2)
}
