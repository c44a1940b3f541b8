//! The small collectives file operations need (agreeing on results, sizes, offsets), over the
//! file's private communicator with the ordinary blocking collectives.
#![forbid(unsafe_code)]

use crate::coll;
use crate::datatype::access::Scratch;
use crate::error::MpiResult;
use crate::object::Comm;

fn words_to_bytes(w: &[u64]) -> Vec<u8> {
    w.iter().flat_map(|v| v.to_le_bytes()).collect()
}

fn bytes_to_words(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}

/// Every rank's `mine` (all the same length), rank after rank.
pub fn allgather(comm: &Comm, mine: &[u64]) -> MpiResult<Vec<u64>> {
    if comm.size() == 1 {
        return Ok(mine.to_vec());
    }
    let mut send = Scratch::new(mine.len() * 8);
    send.bytes_mut().copy_from_slice(&words_to_bytes(mine));
    let mut recv = Scratch::new(mine.len() * 8 * comm.size() as usize);
    coll::allgather(comm, Some(&send.buf()), &recv.buf())?;
    Ok(bytes_to_words(recv.bytes()))
}

/// Rank `root`'s `words` everywhere.
pub fn bcast(comm: &Comm, root: u32, words: &mut [u64]) -> MpiResult<()> {
    if comm.size() == 1 {
        return Ok(());
    }
    let mut s = Scratch::new(words.len() * 8);
    s.bytes_mut().copy_from_slice(&words_to_bytes(words));
    coll::bcast(comm, &s.buf(), root)?;
    words.copy_from_slice(&bytes_to_words(s.bytes()));
    Ok(())
}

/// Rank `root`'s bytes everywhere.
pub fn bcast_bytes(comm: &Comm, root: u32, bytes: &mut [u8]) -> MpiResult<()> {
    if comm.size() == 1 || bytes.is_empty() {
        return Ok(());
    }
    let mut s = Scratch::new(bytes.len());
    s.bytes_mut().copy_from_slice(bytes);
    coll::bcast(comm, &s.buf(), root)?;
    bytes.copy_from_slice(s.bytes());
    Ok(())
}

pub fn barrier(comm: &Comm) -> MpiResult<()> {
    if comm.size() == 1 {
        return Ok(());
    }
    coll::barrier(comm)
}

/// The first error class any rank reports (0: none), agreed by all.
pub fn agree(comm: &Comm, class: u64) -> MpiResult<u64> {
    Ok(allgather(comm, &[class])?
        .into_iter()
        .find(|&c| c != 0)
        .unwrap_or(0))
}
