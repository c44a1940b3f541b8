//! The wire protocol of point-to-point messages: the header every message carries, the
//! message kinds, and their small payloads. Transports carry the header as the protocol
//! encoded by this file (`WireHeader`); only this file knows its fields' meaning.
#![forbid(unsafe_code)]

use crate::message::Target;
use crate::transport::shm::WIRE_HEADER_BYTES;
use crate::transport::WireHeader;

/// The header of every message.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Header {
    /// One of the kinds below (`EAGER`, `RTS`, ...).
    pub kind: u8,
    /// `FLAG_*` bits.
    pub flags: u8,
    /// The sender's VCI: where replies (ack, clear-to-send, fin) go.
    pub origin_vci: u8,
    /// The sender's stream on a multiplex stream communicator, plus one (0: none).
    pub stream: u8,
    /// The sender's rank in the communicator.
    pub src: u32,
    pub context: u32,
    pub tag: i32,
    /// The sender's rank in the job (where replies go).
    pub origin: u32,
    /// An id the receiver echoes back (the sender's request) or looks up (its own).
    pub token: u64,
}

impl WireHeader for Header {
    #[inline]
    fn encode(&self) -> [u8; WIRE_HEADER_BYTES] {
        let mut b = [0u8; WIRE_HEADER_BYTES];
        b[0] = self.kind;
        b[1] = self.flags;
        b[2] = self.origin_vci;
        b[3] = self.stream;
        b[4..8].copy_from_slice(&self.src.to_le_bytes());
        b[8..12].copy_from_slice(&self.context.to_le_bytes());
        b[12..16].copy_from_slice(&self.tag.to_le_bytes());
        b[16..20].copy_from_slice(&self.origin.to_le_bytes());
        b[20..28].copy_from_slice(&self.token.to_le_bytes());
        b
    }

    #[inline]
    fn decode(b: &[u8; WIRE_HEADER_BYTES]) -> Header {
        let u32_at = |i: usize| u32::from_le_bytes([b[i], b[i + 1], b[i + 2], b[i + 3]]);
        let mut token = [0u8; 8];
        token.copy_from_slice(&b[20..28]);
        Header {
            kind: b[0],
            flags: b[1],
            origin_vci: b[2],
            stream: b[3],
            src: u32_at(4),
            context: u32_at(8),
            tag: u32_at(12) as i32,
            origin: u32_at(16),
            token: u64::from_le_bytes(token),
        }
    }
}

impl Header {
    /// The header of a message to `target` from job rank `origin`, VCI `origin_vci`: an eager
    /// message (`sync`: the sender waits for `ACK`); the rendezvous start changes the kind.
    #[inline]
    pub fn eager(target: &Target, origin: u32, origin_vci: usize, sync: bool) -> Header {
        Header {
            kind: EAGER,
            flags: if sync { FLAG_SYNC } else { 0 },
            origin_vci: origin_vci as u8,
            stream: target.stream,
            src: target.my_rank,
            context: target.context,
            tag: target.tag,
            origin,
            token: 0,
        }
    }

    /// A protocol message of `kind` (ack, fin, clear-to-send, data) about `token`, from job
    /// rank `origin`, VCI `origin_vci`.
    pub fn control(kind: u8, origin: u32, origin_vci: usize, token: u64) -> Header {
        Header {
            kind,
            origin,
            origin_vci: origin_vci as u8,
            token,
            ..Header::default()
        }
    }
}

/// A whole message in one cell.
pub const EAGER: u8 = 1;
/// Request to send a large message: payload `RtsInfo`; the data stays with the sender.
pub const RTS: u8 = 2;
/// A synchronous eager send was matched (token: the sender's request).
pub const ACK: u8 = 3;
/// The receiver finished reading a rendezvous message (token: the sender's request).
pub const FIN: u8 = 4;
/// Clear to send, for the pipelined path (token: the sender's request; payload: receiver's).
pub const CTS: u8 = 5;
/// A chunk of a pipelined message (token: the receiver's request; payload: offset + bytes).
pub const DATA: u8 = 6;

/// The sender cancels a message it sent (`MPI_Cancel`; token: the message's, as in its
/// header; payload: the token of the request that asks): the receiver withdraws it if no
/// receive took it yet, and answers `CANCEL_REPLY`. It follows the message on the same
/// queue, so it never arrives first.
pub const CANCEL: u8 = 7;
/// The answer to `CANCEL` (token: the request that asked; payload: the message's token):
/// `FLAG_CANCELLED` if the message was withdrawn (no receive will ever see it), none if a
/// receive matched it already.
pub const CANCEL_REPLY: u8 = 8;

/// Flag: the sender waits for `ACK` when the message is matched (`MPI_Ssend`).
pub const FLAG_SYNC: u8 = 1;
/// Flag of `CANCEL_REPLY`: the message was withdrawn.
pub const FLAG_CANCELLED: u8 = 2;
/// Flag of an `RTS`: the receiver reads the data with one copy wherever the kernel lets it
/// (`SendMode::Pulled`).
pub const FLAG_PULL: u8 = 4;

/// Where a rendezvous message's data is: `total` bytes at `addr` in process `pid`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RtsInfo {
    pub total: u64,
    pub addr: u64,
    pub pid: i32,
}

impl RtsInfo {
    pub const BYTES: usize = 20;

    pub fn encode(&self, out: &mut [u8]) {
        out[0..8].copy_from_slice(&self.total.to_le_bytes());
        out[8..16].copy_from_slice(&self.addr.to_le_bytes());
        out[16..20].copy_from_slice(&self.pid.to_le_bytes());
    }

    pub fn decode(bytes: &[u8]) -> Option<RtsInfo> {
        if bytes.len() < Self::BYTES {
            return None;
        }
        Some(RtsInfo {
            total: u64::from_le_bytes(bytes[0..8].try_into().ok()?),
            addr: u64::from_le_bytes(bytes[8..16].try_into().ok()?),
            pid: i32::from_le_bytes(bytes[16..20].try_into().ok()?),
        })
    }
}

/// Bytes of the offset that starts a `DATA` payload.
pub const DATA_HEADER: usize = 8;

pub fn decode_u64(bytes: &[u8]) -> Option<u64> {
    Some(u64::from_le_bytes(bytes.get(0..8)?.try_into().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rts_round_trip() {
        let info = RtsInfo {
            total: 1 << 40,
            addr: 0xdead_beef,
            pid: 4242,
        };
        let mut buf = [0u8; RtsInfo::BYTES];
        info.encode(&mut buf);
        assert_eq!(RtsInfo::decode(&buf), Some(info));
        assert_eq!(RtsInfo::decode(&buf[..19]), None);
        assert_eq!(decode_u64(&7u64.to_le_bytes()), Some(7));
    }

    #[test]
    fn header_round_trip() {
        let h = Header {
            kind: RTS,
            flags: FLAG_SYNC,
            origin_vci: 3,
            stream: 2,
            src: 7,
            context: 0xdead_beef,
            tag: -42,
            origin: 123_456,
            token: u64::MAX - 5,
        };
        assert_eq!(Header::decode(&h.encode()), h);
        assert_eq!(Header::decode(&[0; WIRE_HEADER_BYTES]), Header::default());
    }
}
