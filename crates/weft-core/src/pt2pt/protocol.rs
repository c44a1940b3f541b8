//! The message kinds the point-to-point protocols exchange, and their small payloads.
#![forbid(unsafe_code)]

/// A whole message in one cell.
pub const EAGER: u16 = 1;
/// Request to send a large message: payload `RtsInfo`; the data stays with the sender.
pub const RTS: u16 = 2;
/// A synchronous eager send was matched (token: the sender's request).
pub const ACK: u16 = 3;
/// The receiver finished reading a rendezvous message (token: the sender's request).
pub const FIN: u16 = 4;
/// Clear to send, for the pipelined path (token: the sender's request; payload: receiver's).
pub const CTS: u16 = 5;
/// A chunk of a pipelined message (token: the receiver's request; payload: offset + bytes).
pub const DATA: u16 = 6;

/// Flag: the sender waits for `ACK` when the message is matched (`MPI_Ssend`).
pub const FLAG_SYNC: u16 = 1;

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
}
