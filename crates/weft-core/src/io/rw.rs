//! Independent data movement between user memory and the file through a view: the bytes of
//! the access (the user's buffer packed, converted to the file representation if needed) are
//! the view's stream from a position on; the view's pieces say where they go in the file.
//!
//! - Contiguous memory in the native representation moves straight between the user's
//!   buffer and the file (one `pwrite`/`pread` per file piece, no copy).
//! - Other memory is packed (or unpacked) in slices of `SLICE` bytes through a scratch buffer.
//! - Reads of many small pieces close together read the whole span once and copy the pieces
//!   out ("data sieving"); writes never touch bytes outside their pieces (no read-modify-write:
//!   nothing is written past what the call said).
#![forbid(unsafe_code)]

use std::os::unix::fs::FileExt;
use std::sync::Arc;

use crate::datatype::access::Scratch;
use crate::datatype::external32::TypedMem;
use crate::datatype::{Buf, Type};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::io::datarep::{MemData, Rep, UserRep};
use crate::io::errors::file_error;
use crate::io::file::File;
use crate::io::sys::RangeLock;
use crate::io::view::View;

/// Bytes packed or unpacked at a time for non-contiguous memory.
pub const SLICE: usize = 8 << 20;
/// Largest span one sieving read covers.
const SIEVE_SPAN: u64 = 4 << 20;

/// How the user's bytes become file bytes.
pub enum Conv {
    /// The file holds the memory bytes.
    None,
    External32(TypedMem),
    User(Arc<dyn UserRep>, MemData),
}

/// The memory side of an access: `count` instances of a type in user memory.
pub struct Mem {
    /// The instances (packed stream: `buf.len()` bytes).
    pub buf: Buf,
    pub ty: Arc<Type>,
    pub count: u64,
    pub conv: Conv,
    /// Bytes of one instance in the file representation.
    file_size: u64,
}

impl Mem {
    /// `conv` must match the file's representation (the ABI builds it from `rep`).
    pub fn new(buf: Buf, ty: Arc<Type>, count: u64, conv: Conv, rep: &Rep) -> MpiResult<Mem> {
        let file_size = match conv {
            Conv::None => ty.size as u64,
            _ => rep.size_of(&ty)?,
        };
        Ok(Mem {
            buf,
            ty,
            count,
            conv,
            file_size,
        })
    }

    /// Bytes the access occupies in the view's stream.
    pub fn file_len(&self) -> u64 {
        self.file_size * self.count
    }

    /// Memory bytes that correspond to `file_bytes` of the stream (whole elements).
    pub fn mem_bytes(&self, file_bytes: u64) -> u64 {
        match self.conv {
            Conv::None => file_bytes,
            _ if self.file_size == 0 => 0,
            _ => {
                let whole = file_bytes / self.file_size;
                whole * self.ty.size as u64
            }
        }
    }

    /// The file-representation bytes of the whole buffer when a conversion applies.
    pub fn converted(&self) -> MpiResult<Option<Vec<u8>>> {
        match &self.conv {
            Conv::None => Ok(None),
            Conv::External32(t) => Ok(Some(t.to_external32())),
            Conv::User(rep, data) => {
                let mut out = vec![0u8; self.file_len() as usize];
                rep.to_file(data, 0, self.count, &mut out)?;
                Ok(Some(out))
            }
        }
    }

    /// Store file-representation bytes read into the user's buffer.
    pub fn store_converted(&self, data: &[u8]) -> MpiResult<()> {
        match &self.conv {
            Conv::None => Ok(()),
            Conv::External32(t) => {
                t.from_external32(data);
                Ok(())
            }
            Conv::User(rep, mem) => {
                let whole = if self.file_size == 0 {
                    0
                } else {
                    data.len() as u64 / self.file_size
                };
                rep.from_file(mem, 0, whole, &data[..(whole * self.file_size) as usize])
            }
        }
    }
}

fn io_err(file: &File, func: &str, what: &str, e: &std::io::Error) -> MpiError {
    file_error(func, &file.name, what, e)
}

/// Write all of `data` at `off`.
pub fn pwrite(file: &File, data: &[u8], off: u64, func: &str) -> MpiResult<()> {
    file.fd
        .write_all_at(data, off)
        .map_err(|e| io_err(file, func, "write failed", &e))
}

/// Read up to `data.len()` bytes at `off`; fewer only at the end of the file.
pub fn pread(file: &File, data: &mut [u8], off: u64, func: &str) -> MpiResult<usize> {
    let mut got = 0;
    while got < data.len() {
        match file.fd.read_at(&mut data[got..], off + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(io_err(file, func, "read failed", &e)),
        }
    }
    Ok(got)
}

/// The byte range an access touches (for atomic mode's lock).
fn span(view: &View, pos: u64, len: u64) -> (u64, u64) {
    let start = view.file_offset(pos);
    let mut end = start;
    view.pieces(pos + len - 1, 1, |o, l| {
        end = o + l;
        false
    });
    (start, end.max(start + 1))
}

/// Write the stream bytes `data` at stream position `pos` of `view`.
pub fn write_stream(file: &File, view: &View, pos: u64, data: &[u8], func: &str) -> MpiResult<()> {
    let mut at = 0usize;
    let mut result = Ok(());
    view.pieces(pos, data.len() as u64, |off, len| {
        let l = len as usize;
        result = pwrite(file, &data[at..at + l], off, func);
        at += l;
        result.is_ok()
    });
    result
}

/// Read stream bytes `pos..pos+out.len()` of `view` into `out`; returns how many were read
/// before the end of the file.
pub fn read_stream(
    file: &File,
    view: &View,
    pos: u64,
    out: &mut [u8],
    func: &str,
) -> MpiResult<usize> {
    let pieces = view.piece_list(pos, out.len() as u64);
    let mut at = 0usize;
    let mut i = 0;
    while i < pieces.len() {
        // Sieve: pieces close together within one span, read at once.
        // (Pieces of a read-only view may overlap or go back: the span is their extremes.)
        let (start, _) = pieces[i];
        let mut j = i;
        let mut data = 0u64;
        let mut end = start;
        while j < pieces.len()
            && pieces[j].0 >= start
            && pieces[j].0 + pieces[j].1 - start <= SIEVE_SPAN
        {
            data += pieces[j].1;
            end = end.max(pieces[j].0 + pieces[j].1);
            j += 1;
        }
        if j > i + 1 && data * 2 >= end - start {
            let mut sieve = vec![0u8; (end - start) as usize];
            let got = pread(file, &mut sieve, start, func)? as u64;
            for &(o, l) in &pieces[i..j] {
                let have = (start + got).saturating_sub(o).min(l);
                let s = (o - start) as usize;
                out[at..at + have as usize].copy_from_slice(&sieve[s..s + have as usize]);
                at += have as usize;
                if have < l {
                    return Ok(at);
                }
            }
            i = j;
        } else {
            let (o, l) = pieces[i];
            let got = pread(file, &mut out[at..at + l as usize], o, func)?;
            at += got;
            if got < l as usize {
                return Ok(at);
            }
            i += 1;
        }
    }
    Ok(at)
}

/// Write the memory `mem` at stream position `pos` of the file's current view (an
/// independent access). Returns the memory bytes written.
pub fn write(file: &File, view: &View, pos: u64, mem: &Mem, func: &str) -> MpiResult<u64> {
    check_writable(file, func)?;
    let len = mem.file_len();
    if len == 0 {
        return Ok(0);
    }
    let atomic = file.state().atomic;
    let _lock = if atomic {
        let (s, e) = span(view, pos, len);
        Some(RangeLock::new(&file.fd, s, e - s, true).map_err(|e| io_err(file, func, "lock", &e))?)
    } else {
        None
    };
    if let Some(data) = mem.converted()? {
        write_stream(file, view, pos, &data, func)?;
        return Ok(mem.buf.len() as u64);
    }
    if mem.buf.is_contiguous() {
        mem.buf
            .with_bytes(|b| write_stream(file, view, pos, b, func))?;
    } else {
        let mut scratch = Scratch::new(SLICE.min(len as usize));
        let mut done = 0u64;
        while done < len {
            let n = (len - done).min(SLICE as u64) as usize;
            let chunk = &mut scratch.bytes_mut()[..n];
            mem.buf.pack(done as usize, chunk);
            write_stream(file, view, pos + done, chunk, func)?;
            done += n as u64;
        }
    }
    Ok(len)
}

/// Read into the memory `mem` from stream position `pos` (an independent access). Returns
/// the stream bytes read (fewer than asked at the end of the file) and the memory bytes.
pub fn read(file: &File, view: &View, pos: u64, mem: &Mem, func: &str) -> MpiResult<(u64, u64)> {
    check_readable(file, func)?;
    let len = mem.file_len();
    if len == 0 {
        return Ok((0, 0));
    }
    let atomic = file.state().atomic;
    let _lock = if atomic {
        let (s, e) = span(view, pos, len);
        Some(
            RangeLock::new(&file.fd, s, e - s, false)
                .map_err(|e| io_err(file, func, "lock", &e))?,
        )
    } else {
        None
    };
    if !matches!(mem.conv, Conv::None) {
        let mut data = vec![0u8; len as usize];
        let got = read_stream(file, view, pos, &mut data, func)?;
        mem.store_converted(&data[..got])?;
        return Ok((got as u64, mem.mem_bytes(got as u64)));
    }
    if mem.buf.is_contiguous() {
        let got = mem
            .buf
            .with_bytes_mut(|b| read_stream(file, view, pos, b, func))?;
        return Ok((got as u64, got as u64));
    }
    let mut scratch = Scratch::new(SLICE.min(len as usize));
    let mut done = 0u64;
    while done < len {
        let n = (len - done).min(SLICE as u64) as usize;
        let chunk = &mut scratch.bytes_mut()[..n];
        let got = read_stream(file, view, pos + done, chunk, func)?;
        mem.buf.unpack(done as usize, &chunk[..got]);
        done += got as u64;
        if got < n {
            break;
        }
    }
    Ok((done, done))
}

pub fn check_readable(file: &File, func: &str) -> MpiResult<()> {
    if !file.amode.readable() {
        return Err(MpiError::new(
            ErrorClass::Access,
            format!("{func}(\"{}\"): the file was opened write-only", file.name),
        ));
    }
    Ok(())
}

pub fn check_writable(file: &File, func: &str) -> MpiResult<()> {
    if !file.amode.writable() {
        return Err(MpiError::new(
            ErrorClass::ReadOnly,
            format!("{func}(\"{}\"): the file was opened read-only", file.name),
        ));
    }
    Ok(())
}
