//! MPICH's GPU-support queries: `MPIX_GPU_query_support` and `MPIX_Query_cuda_support` (true
//! when the CUDA runtime was found at run time, `crate::cuda`); Weft supports no Level Zero
//! or HIP device, so `_ze`/`_hip` answer 0.

use std::ffi::c_int;

use weft_core::error::MpiResult;
use weft_core::mpi_err;

use crate::args::non_null;
use crate::constants::*;

/// # Safety
/// `is_supported` is null or a writable int.
pub(crate) unsafe fn mpix_gpu_query_support(
    gpu_type: c_int,
    is_supported: *mut c_int,
) -> MpiResult<()> {
    let func = "MPIX_GPU_query_support";
    non_null(is_supported, func, "is_supported")?;
    let yes = match gpu_type {
        MPIX_GPU_SUPPORT_CUDA => mpix_query_cuda_support(),
        MPIX_GPU_SUPPORT_ZE => mpix_query_ze_support(),
        MPIX_GPU_SUPPORT_HIP => mpix_query_hip_support(),
        other => {
            return Err(mpi_err!(
                Arg,
                "{func}(gpu_type={other}): not MPIX_GPU_SUPPORT_CUDA, _ZE or _HIP"
            ))
        }
    };
    // SAFETY: checked non-null.
    unsafe { is_supported.write(yes) };
    Ok(())
}

pub(crate) fn mpix_query_cuda_support() -> c_int {
    crate::cuda::runtime().is_some() as c_int
}

pub(crate) fn mpix_query_ze_support() -> c_int {
    0
}

pub(crate) fn mpix_query_hip_support() -> c_int {
    0
}
