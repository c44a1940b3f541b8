//! Stand-in for the `ucx` transport in builds without UCX (`pkg-config ucx` found nothing):
//! the same interface, with no value of its type, so every route to another node is
//! `Unreachable`.
// `deny`, not `forbid`: `register` is declared `unsafe` to match the UCX build (it runs no
// unsafe operation).
#![deny(unsafe_code)]

use super::shm::WIRE_HEADER_BYTES;
use super::Amo;
use crate::datatype::Buf;

/// No UCX in this build: never constructed.
pub enum UcxTransport {}

/// UCX is absent from this build.
pub fn library_version() -> Option<String> {
    None
}

/// No UCX in this build.
pub const BUILD_VERSION: &str = "";

/// No UCX in this build.
pub fn transports_seen() -> std::io::Result<Vec<String>> {
    Err(std::io::Error::other("this build has no UCX"))
}

impl UcxTransport {
    pub fn open(
        _nworkers: usize,
        _rank: u32,
        _job_size: u32,
        _message_max: usize,
    ) -> std::io::Result<UcxTransport> {
        Err(std::io::Error::other(
            "this build has no UCX (libucx-dev was absent when it was built)",
        ))
    }
    pub fn addresses(&self) -> std::io::Result<Vec<Vec<u8>>> {
        match *self {}
    }
    pub fn set_peer(&mut self, _rank: u32, _addresses: Vec<Vec<u8>>) {
        match *self {}
    }
    pub fn workers(&self) -> usize {
        match *self {}
    }
    pub fn goodbye(&'static self) {
        match *self {}
    }
    pub fn closing(&self) {
        match *self {}
    }
    pub fn failures(&self) -> u64 {
        match *self {}
    }
    pub fn lost(&self, _rank: u32) -> Option<String> {
        match *self {}
    }
    pub fn try_send(
        &'static self,
        _rank: u32,
        _vci: usize,
        _header: &[u8; WIRE_HEADER_BYTES],
        _len: usize,
        _fill: impl FnOnce(&mut [u8]),
    ) -> bool {
        match *self {}
    }
    pub fn try_recv(
        &self,
        _vci: usize,
        _consume: impl FnOnce(&[u8; WIRE_HEADER_BYTES], &[u8]),
    ) -> bool {
        match *self {}
    }
}

/// No UCX in this build: never constructed.
pub enum BulkOp {}

pub enum BulkStart {
    Done,
    Running(BulkOp),
    Failed,
}

impl UcxTransport {
    pub fn recv_bulk(
        &self,
        _vci: usize,
        _from: u32,
        _total: usize,
        _dest: Buf,
    ) -> (u32, BulkStart) {
        match *self {}
    }
    pub fn send_bulk(&'static self, _rank: u32, _vci: usize, _id: u32, _src: Buf) -> BulkStart {
        match *self {}
    }
    pub fn reap_bulk<T>(&self, _ops: &mut Vec<(BulkOp, T)>, _done: impl FnMut(T, bool)) {
        match *self {}
    }
}

#[derive(Debug)]
pub enum Registration {}

/// No UCX in this build: never constructed.
#[derive(Debug)]
pub enum RemoteKey {}

impl Registration {
    pub fn packed(&self) -> &[u8] {
        match *self {}
    }
}

impl UcxTransport {
    /// # Safety
    /// As in the UCX build: the bytes stay mapped while registered.
    #[allow(unsafe_code)]
    pub unsafe fn register(
        &'static self,
        _addr: usize,
        _len: usize,
    ) -> std::io::Result<Registration> {
        match *self {}
    }
    pub fn remote_key(&'static self, _rank: u32, _packed: &[u8]) -> std::io::Result<RemoteKey> {
        match *self {}
    }
    pub fn put(
        &'static self,
        _key: &RemoteKey,
        _pieces: &[(usize, usize)],
        _data: &[u8],
    ) -> std::io::Result<()> {
        match *self {}
    }
    pub fn get(
        &'static self,
        _key: &RemoteKey,
        _pieces: &[(usize, usize)],
        _out: &mut [u8],
    ) -> std::io::Result<()> {
        match *self {}
    }
    pub fn atomic(
        &'static self,
        _key: &RemoteKey,
        _remote: u64,
        _op: Amo,
        _value: u64,
    ) -> std::io::Result<u64> {
        match *self {}
    }
}
