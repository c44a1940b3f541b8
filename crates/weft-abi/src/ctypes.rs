//! The C types of the MPI 5.0 standard ABI, as Rust sees them. Handles are pointer-sized
//! integers (the ABI passes them as pointers; the calling convention is the same).
#![allow(non_camel_case_types, non_snake_case)]

use std::ffi::{c_int, c_void};

pub type MPI_Aint = isize;
pub type MPI_Offset = i64;
pub type MPI_Count = i64;

#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MPI_Status {
    pub MPI_SOURCE: c_int,
    pub MPI_TAG: c_int,
    pub MPI_ERROR: c_int,
    pub MPI_internal: [c_int; 5],
}

pub type MPI_Comm = usize;
pub type MPI_Datatype = usize;
pub type MPI_Errhandler = usize;
pub type MPI_File = usize;
pub type MPI_Group = usize;
pub type MPI_Info = usize;
pub type MPI_Message = usize;
pub type MPI_Op = usize;
pub type MPI_Request = usize;
pub type MPI_Session = usize;
pub type MPI_Win = usize;
pub type MPIX_Stream = usize;
pub type MPIX_Grequest_class = usize;

pub type MPI_T_enum = usize;
pub type MPI_T_cvar_handle = usize;
pub type MPI_T_pvar_handle = usize;
pub type MPI_T_pvar_session = usize;
pub type MPI_T_event_registration = usize;
pub type MPI_T_event_instance = usize;
pub type MPI_T_cb_safety = c_int;
pub type MPI_T_source_order = c_int;

#[repr(C)]
#[derive(Clone, Copy, Debug)]
pub struct MPIX_Iov {
    pub iov_base: *mut c_void,
    pub iov_len: MPI_Aint,
}

pub type MPI_User_function =
    unsafe extern "C" fn(*mut c_void, *mut c_void, *mut c_int, *mut MPI_Datatype);
pub type MPI_User_function_c =
    unsafe extern "C" fn(*mut c_void, *mut c_void, *mut MPI_Count, *mut MPI_Datatype);
pub type MPI_Grequest_query_function = unsafe extern "C" fn(*mut c_void, *mut MPI_Status) -> c_int;
pub type MPI_Grequest_free_function = unsafe extern "C" fn(*mut c_void) -> c_int;
pub type MPI_Grequest_cancel_function = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;
/// `MPIX_Stream_enqueue_host_fn`'s function.
pub type MPIX_Host_function = unsafe extern "C" fn(*mut c_void);
pub type MPIX_Grequest_poll_function = unsafe extern "C" fn(*mut c_void, *mut MPI_Status) -> c_int;
pub type MPIX_Grequest_wait_function =
    unsafe extern "C" fn(c_int, *mut *mut c_void, f64, *mut MPI_Status) -> c_int;

type CopyAttr<H> =
    unsafe extern "C" fn(H, c_int, *mut c_void, *mut c_void, *mut c_void, *mut c_int) -> c_int;
type DeleteAttr<H> = unsafe extern "C" fn(H, c_int, *mut c_void, *mut c_void) -> c_int;
pub type MPI_Copy_function = CopyAttr<MPI_Comm>;
pub type MPI_Delete_function = DeleteAttr<MPI_Comm>;
pub type MPI_Comm_copy_attr_function = CopyAttr<MPI_Comm>;
pub type MPI_Comm_delete_attr_function = DeleteAttr<MPI_Comm>;
pub type MPI_Type_copy_attr_function = CopyAttr<MPI_Datatype>;
pub type MPI_Type_delete_attr_function = DeleteAttr<MPI_Datatype>;
pub type MPI_Win_copy_attr_function = CopyAttr<MPI_Win>;
pub type MPI_Win_delete_attr_function = DeleteAttr<MPI_Win>;

pub type MPI_Datarep_extent_function =
    unsafe extern "C" fn(MPI_Datatype, *mut MPI_Aint, *mut c_void) -> c_int;
pub type MPI_Datarep_conversion_function = unsafe extern "C" fn(
    *mut c_void,
    MPI_Datatype,
    c_int,
    *mut c_void,
    MPI_Offset,
    *mut c_void,
) -> c_int;
pub type MPI_Datarep_conversion_function_c = unsafe extern "C" fn(
    *mut c_void,
    MPI_Datatype,
    MPI_Count,
    *mut c_void,
    MPI_Offset,
    *mut c_void,
) -> c_int;

pub type MPI_Comm_errhandler_function = unsafe extern "C" fn(*mut MPI_Comm, *mut c_int, ...);
pub type MPI_File_errhandler_function = unsafe extern "C" fn(*mut MPI_File, *mut c_int, ...);
pub type MPI_Win_errhandler_function = unsafe extern "C" fn(*mut MPI_Win, *mut c_int, ...);
pub type MPI_Session_errhandler_function = unsafe extern "C" fn(*mut MPI_Session, *mut c_int, ...);

pub type MPIX_User_function_x =
    unsafe extern "C" fn(*mut c_void, *mut c_void, MPI_Count, MPI_Datatype, *mut c_void);
pub type MPIX_Comm_errhandler_function_x = unsafe extern "C" fn(MPI_Comm, c_int, *mut c_void);
pub type MPIX_File_errhandler_function_x = unsafe extern "C" fn(MPI_File, c_int, *mut c_void);
pub type MPIX_Win_errhandler_function_x = unsafe extern "C" fn(MPI_Win, c_int, *mut c_void);
pub type MPIX_Session_errhandler_function_x = unsafe extern "C" fn(MPI_Session, c_int, *mut c_void);
pub type MPIX_Destructor_function = unsafe extern "C" fn(*mut c_void);
pub type MPIX_Attr_value_function = unsafe extern "C" fn(*mut c_void);

pub type MPI_T_event_cb_function = unsafe extern "C" fn(
    MPI_T_event_instance,
    MPI_T_event_registration,
    MPI_T_cb_safety,
    *mut c_void,
);
pub type MPI_T_event_free_cb_function =
    unsafe extern "C" fn(MPI_T_event_registration, MPI_T_cb_safety, *mut c_void);
pub type MPI_T_event_dropped_cb_function =
    unsafe extern "C" fn(MPI_Count, MPI_T_event_registration, c_int, MPI_T_cb_safety, *mut c_void);
