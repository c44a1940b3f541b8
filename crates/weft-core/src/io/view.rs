//! File views (`MPI_File_set_view`): a displacement, an elementary type and a filetype tiled
//! from the displacement on. A view turns positions in its *data stream* (the bytes the view
//! exposes, in file representation, counted from the view's start) into file offsets.
//!
//! The filetype's compiled layout answers "where is merged segment k and how many data bytes
//! precede it" in O(depth) (`datatype::layout`), so locating a stream position is a binary
//! search over one instance's segments, never a walk; the pieces of an access are then
//! visited in order, adjacent ones merged (also across instances).
#![forbid(unsafe_code)]

use std::sync::Arc;

use crate::datatype::Type;
use crate::io::datarep::Rep;

/// A view, with its sizes in the file representation.
#[derive(Clone)]
pub struct View {
    /// Absolute byte displacement of the view's start.
    pub disp: u64,
    pub etype: Arc<Type>,
    pub filetype: Arc<Type>,
    pub rep: Rep,
    /// The filetype as laid out in the file (differs from `filetype` when the
    /// representation changes element sizes).
    file_layout: Arc<Type>,
    /// Bytes of one etype in the file.
    pub esize: u64,
    /// Data bytes of one filetype instance in the file, and its extent there.
    fsize: u64,
    fextent: i64,
    /// The filetype's instance is one run starting at `first` covering its whole extent.
    linear: Option<i64>,
}

impl std::fmt::Debug for View {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("View")
            .field("disp", &self.disp)
            .field("esize", &self.esize)
            .field("fsize", &self.fsize)
            .field("fextent", &self.fextent)
            .finish()
    }
}

impl View {
    /// The view every file starts with: displacement 0, etype and filetype `byte`, native.
    pub fn default_view(byte: &Arc<Type>) -> View {
        View::new(0, byte.clone(), byte.clone(), Rep::Native, byte.clone(), 1)
    }

    /// A view; `file_layout` is the filetype in file representation, `esize` the etype's
    /// size there (the caller checked that the filetype is made of whole etypes).
    pub fn new(
        disp: u64,
        etype: Arc<Type>,
        filetype: Arc<Type>,
        rep: Rep,
        file_layout: Arc<Type>,
        esize: u64,
    ) -> View {
        file_layout.commit();
        let c = file_layout.compiled_layout();
        let fsize = file_layout.size as u64;
        let fextent = file_layout.extent as i64;
        let linear = match c.contiguous_run() {
            Some((d, len)) if len as i64 == fextent && fsize > 0 => Some(d as i64),
            _ => None,
        };
        View {
            disp,
            etype,
            filetype,
            rep,
            file_layout,
            esize: esize.max(1),
            fsize,
            fextent,
            linear,
        }
    }

    /// Whether the view's stream is the file's bytes from `disp` on, in order.
    pub fn is_linear(&self) -> bool {
        self.linear == Some(0)
    }

    /// Visit the file pieces holding stream bytes `pos..pos+len`, in stream order, adjacent
    /// pieces merged: `f(file_offset, length)`. Stops early when `f` returns false.
    pub fn pieces(&self, pos: u64, len: u64, mut f: impl FnMut(u64, u64) -> bool) {
        if len == 0 || self.fsize == 0 {
            return;
        }
        if let Some(first) = self.linear {
            // One run per instance, instances touching: the stream is the file itself.
            let start = self.disp as i64 + first + pos as i64;
            f(start.max(0) as u64, len);
            return;
        }
        let c = self.file_layout.compiled_layout();
        let nseg = c.segments();
        let mut inst = pos / self.fsize;
        let mut within = pos % self.fsize;
        let mut k = c.segment_at(within);
        let mut left = len;
        let mut run: Option<(u64, u64)> = None;
        while left > 0 {
            let (seg, before) = c.segment(k);
            let skip = within - before as u64;
            let take = (seg.len as u64 - skip).min(left);
            let base = self.disp as i64 + inst as i64 * self.fextent;
            let off = (base + seg.start as i64 + skip as i64).max(0) as u64;
            if take > 0 {
                run = match run {
                    Some((o, l)) if o + l == off => Some((o, l + take)),
                    Some((o, l)) => {
                        if !f(o, l) {
                            return;
                        }
                        Some((off, take))
                    }
                    None => Some((off, take)),
                };
            }
            left -= take;
            within += take;
            k += 1;
            if k == nseg {
                k = 0;
                inst += 1;
                within = 0;
            }
        }
        if let Some((o, l)) = run {
            f(o, l);
        }
    }

    /// All pieces of stream bytes `pos..pos+len`.
    pub fn piece_list(&self, pos: u64, len: u64) -> Vec<(u64, u64)> {
        let mut out = Vec::new();
        self.pieces(pos, len, |o, l| {
            out.push((o, l));
            true
        });
        out
    }

    /// The file offset of stream byte `pos` (`MPI_File_get_byte_offset`).
    pub fn file_offset(&self, pos: u64) -> u64 {
        let mut at = self.disp;
        if self.fsize == 0 {
            return at;
        }
        self.pieces(pos, 1, |o, _| {
            at = o;
            false
        });
        at
    }

    /// How many stream bytes lie before file offset `end` (the end of file, for
    /// `MPI_SEEK_END`).
    pub fn stream_bytes_before(&self, end: u64) -> u64 {
        if end <= self.disp || self.fsize == 0 {
            return 0;
        }
        let rel = (end - self.disp) as i64;
        if let Some(first) = self.linear {
            return (rel - first).max(0) as u64;
        }
        let ext = self.fextent.max(1);
        let inst = rel.div_euclid(ext);
        let rem = rel.rem_euclid(ext);
        let c = self.file_layout.compiled_layout();
        let mut bytes = 0u64;
        // Segments of one instance are in increasing order (monotone filetype).
        let nseg = c.segments();
        let (mut lo, mut hi) = (0u64, nseg);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if (c.segment(mid).0.start as i64) < rem {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo > 0 {
            let (seg, before) = c.segment(lo - 1);
            let inside = (rem - seg.start as i64).clamp(0, seg.len as i64) as u64;
            bytes = before as u64 + inside;
        }
        inst.max(0) as u64 * self.fsize + bytes
    }

    /// Bytes of `count` etypes in the stream.
    pub fn etype_bytes(&self, count: u64) -> u64 {
        count.saturating_mul(self.esize)
    }
}

/// Whether `t` can be an etype or filetype: its typemap's displacements are non-negative
/// and non-decreasing, and (for a file open for writing, `overlap` false) its pieces do not
/// overlap (MPI 5.0 §14.3). Checked on the merged segments, which follow typemap order.
pub fn is_monotone(t: &Type, overlap: bool) -> bool {
    let c = t.compiled_layout();
    let (mut start, mut end) = (0isize, 0isize);
    for k in 0..c.segments() {
        let (seg, _) = c.segment(k);
        if seg.start < start || (!overlap && seg.start < end) {
            return false;
        }
        start = seg.start;
        end = seg.start + seg.len as isize;
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::{Datatype, TypeClass};

    static BYTE: Datatype = Datatype::predefined("MPI_BYTE", 1, TypeClass::Byte);
    static INT: Datatype = Datatype::predefined("MPI_INT", 4, TypeClass::SignedInt);

    fn view_of(disp: u64, ft: Arc<Type>, esize: u64) -> View {
        let e = Type::basic(&INT);
        View::new(disp, e, ft.clone(), Rep::Native, ft, esize)
    }

    #[test]
    fn contiguous_view_is_the_file() {
        let b = Type::basic(&BYTE);
        let v = View::default_view(&b);
        assert!(v.is_linear());
        assert_eq!(v.piece_list(10, 5), vec![(10, 5)]);
        assert_eq!(v.stream_bytes_before(100), 100);
    }

    #[test]
    fn strided_view_pieces_and_inverse() {
        // 2 ints every 4 ints, resized to 16 ints: blocks at 0..8 and 16..24 of each 64 bytes.
        let int = Type::basic(&INT);
        let vec = Type::vector(2, 2, 4, false, &int, false).unwrap();
        let ft = Type::resized(&vec, 0, 64, false).unwrap();
        let v = view_of(100, ft, 4);
        assert_eq!(v.piece_list(4, 20), vec![(104, 4), (116, 8), (164, 8)]);
        assert_eq!(v.file_offset(8), 116);
        assert_eq!(v.file_offset(16), 164);
        assert_eq!(v.stream_bytes_before(100), 0);
        assert_eq!(v.stream_bytes_before(106), 6);
        assert_eq!(v.stream_bytes_before(112), 8);
        assert_eq!(v.stream_bytes_before(164), 16);
        assert_eq!(v.stream_bytes_before(170), 22);
    }

    #[test]
    fn touching_instances_merge() {
        // A vector whose block is at the end of its extent and the next instance's at the
        // start: pieces across instances merge.
        let int = Type::basic(&INT);
        let blocks = Type::indexed(&[1, 1], &[0, 3], false, false, &int, false).unwrap();
        let ft = Type::resized(&blocks, 0, 16, false).unwrap();
        let v = view_of(0, ft, 4);
        assert_eq!(v.piece_list(0, 16), vec![(0, 4), (12, 8), (28, 4)]);
    }
}
