//! `MPI_Comm_split` of a thread communicator (docs/threadcomm.md): from every rank's colour,
//! key and process, which new thread communicators there are and each rank's place in its
//! own. A thread communicator numbers its ranks by process (each process's threads are one
//! block, the processes in order), so a colour whose key order would interleave or reorder
//! the processes is refused; inside one process any key order is kept.

use crate::error::{ErrorClass, MpiError, MpiResult};

/// One rank's part in the split.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Entry {
    /// `None`: `MPI_UNDEFINED` (the rank gets no new communicator).
    pub color: Option<u32>,
    pub key: i32,
    /// The rank's process (its rank among the thread communicator's processes).
    pub process: u32,
}

impl Entry {
    /// Bytes of one entry on the wire (`encode`/`decode`).
    pub const BYTES: usize = 12;

    pub fn encode(&self) -> [u8; Self::BYTES] {
        let color = self.color.map_or(-1i32, |c| c as i32);
        let mut b = [0u8; Self::BYTES];
        b[0..4].copy_from_slice(&color.to_le_bytes());
        b[4..8].copy_from_slice(&self.key.to_le_bytes());
        b[8..12].copy_from_slice(&self.process.to_le_bytes());
        b
    }

    /// The entries of a table of `encode`d entries, in rank order.
    pub fn decode_all(table: &[u8]) -> Vec<Entry> {
        let word = |c: &[u8], i: usize| -> [u8; 4] { c[i..i + 4].try_into().expect("4 bytes") };
        table
            .chunks_exact(Self::BYTES)
            .map(|c| {
                let color = i32::from_le_bytes(word(c, 0));
                Entry {
                    color: (color >= 0).then_some(color as u32),
                    key: i32::from_le_bytes(word(c, 4)),
                    process: u32::from_le_bytes(word(c, 8)),
                }
            })
            .collect()
    }
}

/// One colour's new thread communicator.
#[derive(Debug, PartialEq, Eq)]
pub struct Colour {
    pub color: u32,
    /// Old ranks in new rank order (key, then old rank).
    members: Vec<u32>,
    /// The process of each member, in the same order (never decreasing).
    processes: Vec<u32>,
}

impl Colour {
    /// How many of its ranks are threads of `process`.
    pub fn threads_of(&self, process: u32) -> u32 {
        self.processes.iter().filter(|&&p| p == process).count() as u32
    }

    /// Its ranks' old ranks, in new rank order.
    pub fn members(&self) -> &[u32] {
        &self.members
    }

    /// Whether its ranks are threads of more than one process.
    pub fn spans(&self) -> bool {
        self.processes.first() != self.processes.last()
    }
}

/// Every colour's new thread communicator, in ascending colour order (the order in which the
/// processes make them, so their collectives line up).
#[derive(Debug)]
pub struct Plan {
    colours: Vec<Colour>,
}

impl Plan {
    /// The plan of a split whose rank `r` passed `table[r]`.
    pub fn new(table: &[Entry], func: &str) -> MpiResult<Plan> {
        let mut order: Vec<u32> = (0..table.len() as u32)
            .filter(|&r| table[r as usize].color.is_some())
            .collect();
        order.sort_by_key(|&r| (table[r as usize].color, table[r as usize].key, r));
        let mut colours: Vec<Colour> = Vec::new();
        for r in order {
            let e = table[r as usize];
            let color = e.color.expect("filtered");
            match colours.last_mut() {
                Some(c) if c.color == color => {
                    if c.processes.last().is_some_and(|&p| p > e.process) {
                        return Err(interleaved(func, color));
                    }
                    c.members.push(r);
                    c.processes.push(e.process);
                }
                _ => colours.push(Colour {
                    color,
                    members: vec![r],
                    processes: vec![e.process],
                }),
            }
        }
        Ok(Plan { colours })
    }

    pub fn colours(&self) -> &[Colour] {
        &self.colours
    }

    /// The colour and new rank of old rank `old` (`None` for `MPI_UNDEFINED`).
    pub fn place(&self, old: u32) -> Option<(u32, u32)> {
        self.colours.iter().find_map(|c| {
            c.members
                .iter()
                .position(|&m| m == old)
                .map(|i| (c.color, i as u32))
        })
    }
}

#[cold]
fn interleaved(func: &str, color: u32) -> MpiError {
    MpiError::new(
        ErrorClass::UnsupportedOperation,
        format!(
            "{func}(key): the keys of colour {color} order the thread ranks of different \
             processes other than by process; Weft's thread communicators number ranks by \
             process (docs/threadcomm.md)"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(color: i32, key: i32, process: u32) -> Entry {
        Entry {
            color: (color >= 0).then_some(color as u32),
            key,
            process,
        }
    }

    #[test]
    fn colours_keys_and_undefined() {
        // Ranks 0..6, two processes of three threads.
        let t = [
            e(1, 5, 0),
            e(0, 0, 0),
            e(1, 2, 0),
            e(-1, 0, 1),
            e(0, 0, 1),
            e(1, 9, 1),
        ];
        let p = Plan::new(&t, "f").unwrap();
        assert_eq!(p.colours().len(), 2);
        assert_eq!(p.colours()[0].color, 0);
        assert_eq!(p.colours()[0].members, vec![1, 4]);
        assert!(p.colours()[0].spans());
        assert_eq!(p.colours()[1].members, vec![2, 0, 5]);
        assert_eq!(p.colours()[1].threads_of(0), 2);
        assert_eq!(p.colours()[1].threads_of(1), 1);
        assert_eq!(p.place(0), Some((1, 1)));
        assert_eq!(p.place(3), None);
        assert_eq!(p.place(5), Some((1, 2)));
    }

    #[test]
    fn one_process_any_key_order() {
        let t = [e(7, 3, 0), e(7, 2, 0), e(7, 1, 0), e(7, 0, 0)];
        let p = Plan::new(&t, "f").unwrap();
        assert!(!p.colours()[0].spans());
        assert_eq!(p.place(0), Some((7, 3)));
        assert_eq!(p.place(3), Some((7, 0)));
    }

    #[test]
    fn processes_out_of_order_refused() {
        let t = [e(0, 1, 0), e(0, 0, 1)];
        let err = Plan::new(&t, "MPI_Comm_split").unwrap_err();
        assert_eq!(err.class(), ErrorClass::UnsupportedOperation as i32);
    }

    #[test]
    fn encode_round_trip() {
        let t = [e(-1, -4, 2), e(i32::MAX, 7, 0)];
        let bytes: Vec<u8> = t.iter().flat_map(|x| x.encode()).collect();
        assert_eq!(Entry::decode_all(&bytes), t);
    }
}
