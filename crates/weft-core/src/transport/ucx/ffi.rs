//! The few UCP (UCX 1.13 API) declarations the transport uses. Parameter structs declare
//! their leading fields and pad the rest with zeros: UCP reads only the fields their
//! `field_mask` names.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_int, c_uint, c_void};

pub type ucs_status_t = i8;
pub const UCS_OK: ucs_status_t = 0;
pub const UCS_INPROGRESS: ucs_status_t = 1;
/// `UCS_ERR_LAST`: status pointers at or above `(uintptr_t)UCS_ERR_LAST` are errors.
const UCS_ERR_LAST: isize = -100;

pub type Context = *mut c_void;
pub type Worker = *mut c_void;
pub type Ep = *mut c_void;
pub type Message = *mut c_void;
pub type StatusPtr = *mut c_void;
pub type MemH = *mut c_void;
pub type Rkey = *mut c_void;

pub const UCP_API_MAJOR: c_uint = 1;
pub const UCP_API_MINOR: c_uint = 13;
pub const UCP_PARAM_FIELD_FEATURES: u64 = 1 << 0;
pub const UCP_FEATURE_TAG: u64 = 1 << 0;
/// One-sided put and get (`ucp_put_nbx`, `ucp_get_nbx`: RMA windows across nodes).
pub const UCP_FEATURE_RMA: u64 = 1 << 1;
/// 64-bit remote atomics (`ucp_atomic_op_nbx`).
pub const UCP_FEATURE_AMO64: u64 = 1 << 3;
pub const UCP_MEM_MAP_PARAM_FIELD_ADDRESS: u64 = 1 << 0;
pub const UCP_MEM_MAP_PARAM_FIELD_LENGTH: u64 = 1 << 1;
pub const UCP_OP_ATTR_FIELD_DATATYPE: u32 = 1 << 3;
/// `UCP_OP_ATTR_FLAG_NO_IMM_CMPL`: the call returns a request even when it completes at
/// once (the receives posted ahead are always polled through their request).
pub const UCP_OP_ATTR_FLAG_NO_IMM_CMPL: u32 = 1 << 16;
pub const UCP_OP_ATTR_FIELD_REPLY_BUFFER: u32 = 1 << 5;
/// `ucp_atomic_op_t`.
pub const UCP_ATOMIC_OP_ADD: c_int = 0;
pub const UCP_ATOMIC_OP_SWAP: c_int = 1;
pub const UCP_ATOMIC_OP_CSWAP: c_int = 2;
/// `ucp_dt_make_contig(size)`: contiguous elements of `size` bytes.
pub const fn dt_contig(size: usize) -> u64 {
    (size as u64) << 3
}
pub const UCP_WORKER_PARAM_FIELD_THREAD_MODE: u64 = 1 << 0;
/// `UCS_THREAD_MODE_SERIALIZED`: one thread at a time (each worker is behind a mutex).
pub const UCS_THREAD_MODE_SERIALIZED: c_int = 1;
pub const UCP_EP_PARAM_FIELD_REMOTE_ADDRESS: u64 = 1 << 0;
pub const UCP_EP_PARAM_FIELD_ERR_HANDLING_MODE: u64 = 1 << 1;
pub const UCP_EP_PARAM_FIELD_ERR_HANDLER: u64 = 1 << 2;
/// `UCP_ERR_HANDLING_MODE_PEER`: a lost peer fails the endpoint's requests and calls its
/// error handler (instead of undefined behaviour).
pub const UCP_ERR_HANDLING_MODE_PEER: c_int = 1;
/// `UCS_ERR_IO_ERROR`.
pub const UCS_ERR_IO_ERROR: ucs_status_t = -3;
/// `UCS_ERR_UNREACHABLE`: no transport reaches the peer.
pub const UCS_ERR_UNREACHABLE: ucs_status_t = -6;
/// `UCS_ERR_MESSAGE_TRUNCATED`.
pub const UCS_ERR_MESSAGE_TRUNCATED: ucs_status_t = -9;

#[repr(C)]
pub struct ucp_params_t {
    pub field_mask: u64,
    pub features: u64,
    pub rest: [u64; 32],
}

#[repr(C)]
pub struct ucp_worker_params_t {
    pub field_mask: u64,
    pub thread_mode: c_int,
    pub rest: [u64; 64],
}

/// `ucp_err_handler_cb_t`: called from `ucp_worker_progress` when an endpoint fails.
pub type ErrHandlerCb = extern "C" fn(arg: *mut c_void, ep: Ep, status: ucs_status_t);

#[repr(C)]
pub struct ucp_err_handler_t {
    pub cb: Option<ErrHandlerCb>,
    pub arg: *mut c_void,
}

#[repr(C)]
pub struct ucp_ep_params_t {
    pub field_mask: u64,
    pub address: *const c_void,
    pub err_mode: c_int,
    pub err_handler: ucp_err_handler_t,
    pub rest: [u64; 64],
}

/// `ucp_request_param_t` with `op_attr_mask` 0: no callback, the request is polled.
#[repr(C)]
pub struct ucp_request_param_t {
    pub op_attr_mask: u32,
    pub rest: [u32; 63],
}

/// `ucp_request_param_t` as the one-sided calls fill it (datatype, reply buffer), polled.
#[repr(C)]
pub struct ucp_rma_param_t {
    pub op_attr_mask: u32,
    pub flags: u32,
    pub request: *mut c_void,
    pub cb: *mut c_void,
    pub datatype: u64,
    pub user_data: *mut c_void,
    pub reply_buffer: *mut c_void,
    pub rest: [u64; 26],
}

/// `ucp_mem_map_params_t`: the address and length of memory to register.
#[repr(C)]
pub struct ucp_mem_map_params_t {
    pub field_mask: u64,
    pub address: *mut c_void,
    pub length: usize,
    pub rest: [u64; 16],
}

#[repr(C)]
pub struct ucp_tag_recv_info_t {
    pub sender_tag: u64,
    pub length: usize,
}

/// Loads `libucp.so.0` at run time (on the first use of the transport), so that a program
/// that never leaves its node neither loads UCX nor pays for its start-up (UCX's libraries
/// and its memory hooks added ~200 us to every `MPI_Init` when they were linked).
/// Each declaration below becomes a field of [`Ucp`] and a same-named `unsafe fn` calling it.
macro_rules! ucp_api {
    ($(fn $name:ident($($arg:ident: $ty:ty),* $(,)?) $(-> $ret:ty)?;)*) => {
        weft_pmi::symbol_table! {
            /// The UCP functions, resolved from the loaded library.
            pub struct Ucp {
                $($name = stringify!($name) => unsafe extern "C" fn($($ty),*) $(-> $ret)?,)*
            }
        }

        $(
            /// Calls the loaded UCP function of this name (`load` succeeded before).
            ///
            /// # Safety
            /// The arguments satisfy the UCP function's own contract.
            pub unsafe fn $name($($arg: $ty),*) $(-> $ret)? {
                // SAFETY: forwarded caller contract.
                unsafe { (api().$name)($($arg),*) }
            }
        )*
    };
}

ucp_api! {
    fn ucp_init_version(api_major: c_uint, api_minor: c_uint, params: *const ucp_params_t, config: *const c_void, context: *mut Context) -> ucs_status_t;
    fn ucp_worker_create(context: Context, params: *const ucp_worker_params_t, worker: *mut Worker) -> ucs_status_t;
    fn ucp_worker_get_address(worker: Worker, address: *mut *mut c_void, length: *mut usize) -> ucs_status_t;
    fn ucp_worker_release_address(worker: Worker, address: *mut c_void);
    fn ucp_worker_progress(worker: Worker) -> c_uint;
    fn ucp_ep_create(worker: Worker, params: *const ucp_ep_params_t, ep: *mut Ep) -> ucs_status_t;
    fn ucp_tag_send_nbx(ep: Ep, buffer: *const c_void, count: usize, tag: u64, param: *const ucp_request_param_t) -> StatusPtr;
    fn ucp_tag_probe_nb(worker: Worker, tag: u64, tag_mask: u64, remove: c_int, info: *mut ucp_tag_recv_info_t) -> Message;
    fn ucp_tag_recv_nbx(worker: Worker, buffer: *mut c_void, count: usize, tag: u64, tag_mask: u64, param: *const ucp_request_param_t) -> StatusPtr;
    fn ucp_worker_flush_nbx(worker: Worker, param: *const ucp_request_param_t) -> StatusPtr;
    fn ucp_request_check_status(request: *mut c_void) -> ucs_status_t;
    fn ucp_tag_recv_request_test(request: *mut c_void, info: *mut ucp_tag_recv_info_t) -> ucs_status_t;
    fn ucp_request_free(request: *mut c_void);
    fn ucp_mem_map(context: Context, params: *const ucp_mem_map_params_t, memh: *mut MemH) -> ucs_status_t;
    fn ucp_mem_unmap(context: Context, memh: MemH) -> ucs_status_t;
    fn ucp_rkey_pack(context: Context, memh: MemH, buffer: *mut *mut c_void, size: *mut usize) -> ucs_status_t;
    fn ucp_rkey_buffer_release(buffer: *mut c_void);
    fn ucp_ep_rkey_unpack(ep: Ep, buffer: *const c_void, rkey: *mut Rkey) -> ucs_status_t;
    fn ucp_rkey_destroy(rkey: Rkey);
    fn ucp_put_nbx(ep: Ep, buffer: *const c_void, count: usize, remote_addr: u64, rkey: Rkey, param: *const ucp_rma_param_t) -> StatusPtr;
    fn ucp_get_nbx(ep: Ep, buffer: *mut c_void, count: usize, remote_addr: u64, rkey: Rkey, param: *const ucp_rma_param_t) -> StatusPtr;
    fn ucp_atomic_op_nbx(ep: Ep, opcode: c_int, buffer: *const c_void, count: usize, remote_addr: u64, rkey: Rkey, param: *const ucp_rma_param_t) -> StatusPtr;
    fn ucp_ep_flush_nbx(ep: Ep, param: *const ucp_rma_param_t) -> StatusPtr;
    fn ucp_get_version_string() -> *const c_char;
    fn ucp_context_print_info(context: Context, stream: *mut libc::FILE);
    fn ucp_cleanup(context: Context);
    fn ucs_status_string(status: ucs_status_t) -> *const c_char;
}

/// The library loaded at run time.
const LIBRARY: &str = "libucp.so.0";

static LOADED: std::sync::OnceLock<Result<Ucp, String>> = std::sync::OnceLock::new();

/// Load UCP (once; it stays loaded for the life of the process); the error says why it is not
/// usable.
pub fn load() -> Result<&'static Ucp, String> {
    LOADED
        .get_or_init(|| {
            // SAFETY: the declarations above repeat the UCX 1.13 API's prototypes.
            let bind = |lib| unsafe { Ucp::resolve(lib) };
            weft_pmi::dynlib::load_first([LIBRARY], weft_pmi::dynlib::Scope::Local, bind)
                .map_err(|why| format!("{why} (install libucx0 / libucx-dev)"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

fn api() -> &'static Ucp {
    load().expect("UCP used before ffi::load succeeded")
}

/// Whether a status pointer returned by a `_nbx` call is an error.
pub fn is_err(p: StatusPtr) -> bool {
    p as usize >= UCS_ERR_LAST as usize
}

/// A status pointer's error status (`is_err(p)` holds).
pub fn err_status(p: StatusPtr) -> ucs_status_t {
    p as isize as ucs_status_t
}
