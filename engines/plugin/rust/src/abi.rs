//! engines/plugin/include/lsmbench/engine_plugin.h (ABI version 1), mirrored by hand.
//! `tests::struct_sizes_match_the_header` compiles the header with the C compiler and
//! compares every struct's size and the table's field offsets.
#![allow(non_camel_case_types)]

use std::ffi::{c_char, c_void};

pub const LSMBENCH_ENGINE_ABI_VERSION: u32 = 1;

pub type lsmbench_code = i32; // a C enum: int
pub const LSMBENCH_OK: lsmbench_code = 0;
pub const LSMBENCH_NOT_FOUND: lsmbench_code = 1;
pub const LSMBENCH_NOT_SUPPORTED: lsmbench_code = 2;
pub const LSMBENCH_INVALID_ARGUMENT: lsmbench_code = 3;
pub const LSMBENCH_IO_ERROR: lsmbench_code = 4;
pub const LSMBENCH_CORRUPTION: lsmbench_code = 5;
pub const LSMBENCH_FAILED: lsmbench_code = 6;

pub const LSMBENCH_MESSAGE_BYTES: usize = 1024;

#[repr(C)]
pub struct lsmbench_message {
    pub text: [c_char; LSMBENCH_MESSAGE_BYTES],
}

/// The opaque handle: the plugin's own type (crate::Engine) behind it.
#[repr(C)]
pub struct lsmbench_engine {
    _private: [u8; 0],
}

pub const LSMBENCH_OPTION_BOOL: u32 = 0;
pub const LSMBENCH_OPTION_INT: u32 = 1;
pub const LSMBENCH_OPTION_SIZE: u32 = 2;
pub const LSMBENCH_OPTION_REAL: u32 = 3;
pub const LSMBENCH_OPTION_CHOICE: u32 = 4;

#[repr(C)]
pub struct lsmbench_option {
    pub name: *const c_char,
    pub kind: u32,
    pub min: f64,
    pub max: f64,
    pub choices: *const c_char,
    pub unit: *const c_char,
    pub doc: *const c_char,
    pub default_value: *const c_char,
}
// Static tables of pointers to static strings.
unsafe impl Sync for lsmbench_option {}

pub const LSMBENCH_EVENT_FLUSH: u32 = 1;
pub const LSMBENCH_EVENT_MERGE: u32 = 2;
pub const LSMBENCH_EVENT_MOVED: u32 = 1;

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct lsmbench_event {
    pub kind: u32,
    pub flags: u32,
    pub start_ns: i64,
    pub end_ns: i64,
    pub sealed_ns: i64,
    pub output_level: i32,
    pub deepest_input_level: i32,
    pub inputs: u64,
    pub input_bytes: u64,
    pub output_bytes: u64,
    pub entries: u64,
}

#[repr(C)]
#[derive(Clone, Copy, Default)]
pub struct lsmbench_work {
    pub flushes_pending: u64,
    pub flushes_running: u64,
    pub merges_pending: u64,
    pub merges_running: u64,
    pub completed: u64,
}

pub const LSMBENCH_WRITE_PUT: u32 = 1;
pub const LSMBENCH_WRITE_DELETE: u32 = 2;

#[repr(C)]
pub struct lsmbench_write {
    pub kind: u32,
    pub key: *const c_char,
    pub key_size: usize,
    pub value: *const c_char,
    pub value_size: usize,
}

pub type lsmbench_value_sink =
    Option<unsafe extern "C" fn(context: *mut c_void, value: *const c_char, size: usize)>;
pub type lsmbench_metric_sink =
    Option<unsafe extern "C" fn(context: *mut c_void, name: *const c_char, value: f64)>;

type Msg = *mut lsmbench_message;
type Eng = *mut lsmbench_engine;

#[repr(C)]
pub struct lsmbench_engine_api {
    pub abi_version: u32,
    pub api_size: u32,
    pub option_size: u32,
    pub event_size: u32,
    pub work_size: u32,
    pub write_size: u32,
    pub name: *const c_char,
    pub version: *const c_char,
    pub options: *const lsmbench_option,
    pub option_count: usize,
    pub options_open: u32,
    pub check_options: Option<
        unsafe extern "C" fn(*const *const c_char, *const *const c_char, usize, Msg) -> lsmbench_code,
    >,
    pub open: Option<
        unsafe extern "C" fn(
            *const c_char,
            *const *const c_char,
            *const *const c_char,
            usize,
            u32,
            *mut Eng,
            Msg,
        ) -> lsmbench_code,
    >,
    pub close: Option<unsafe extern "C" fn(Eng, Msg) -> lsmbench_code>,
    pub put: Option<
        unsafe extern "C" fn(Eng, *const c_char, usize, *const c_char, usize, Msg) -> lsmbench_code,
    >,
    pub del: Option<unsafe extern "C" fn(Eng, *const c_char, usize, Msg) -> lsmbench_code>,
    pub get: Option<
        unsafe extern "C" fn(
            Eng,
            *const c_char,
            usize,
            lsmbench_value_sink,
            *mut c_void,
            Msg,
        ) -> lsmbench_code,
    >,
    pub scan: Option<
        unsafe extern "C" fn(Eng, *const c_char, usize, usize, *mut usize, Msg) -> lsmbench_code,
    >,
    pub write_batch:
        Option<unsafe extern "C" fn(Eng, *const lsmbench_write, usize, Msg) -> lsmbench_code>,
    pub metrics:
        Option<unsafe extern "C" fn(Eng, lsmbench_metric_sink, *mut c_void, Msg) -> lsmbench_code>,
    pub take_events: Option<unsafe extern "C" fn(Eng, *mut lsmbench_event, usize) -> usize>,
    pub background_work:
        Option<unsafe extern "C" fn(Eng, *mut lsmbench_work, Msg) -> lsmbench_code>,
    pub put_record: Option<
        unsafe extern "C" fn(
            Eng,
            *const c_char,
            usize,
            *const u64,
            usize,
            *const c_char,
            usize,
            Msg,
        ) -> lsmbench_code,
    >,
    pub query_secondary:
        Option<unsafe extern "C" fn(Eng, u32, u64, u64, *mut usize, Msg) -> lsmbench_code>,
}
unsafe impl Sync for lsmbench_engine_api {}
