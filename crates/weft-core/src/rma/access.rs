//! Reaching a target's bytes: `count` instances of a datatype at an offset in a rank's
//! window memory, read or written as the packed byte stream the type describes. Memory in
//! the window's segment (and this process's own) is reached by address through the
//! datatype engine's pack/unpack; memory another process owns by cross-memory attach, one
//! system call per 1024 contiguous pieces of the target layout.

use std::sync::{Arc, OnceLock};

use super::dyn_maps::{Found, Keep};
use super::far::{Far, FarFound, FarKeys};
use super::WinRma;
use crate::datatype::{Buf, Type};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::object::win::Flavor;
use crate::transport::cma;

/// The target side of an operation: `count` instances of `ty` at displacement `disp` of
/// window rank `rank`.
#[derive(Clone, Copy)]
pub struct Target<'a> {
    pub rank: u32,
    pub disp: i64,
    pub count: usize,
    pub ty: &'a Arc<Type>,
}

/// Where a target rank's window memory is, from this process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reach {
    /// Mapped here: the address of the target's window byte 0.
    Mapped(usize),
    /// In process `pid`, at `base` there.
    Process { pid: i32, base: usize },
    /// Window rank `rank` on another node, at `base` in its process (through UCX: `far`).
    Far { rank: u32, base: usize },
}

/// `count` instances of `ty` at byte `offset` of a target's window memory. Constructing one
/// is the promise (`new`) that the whole typed extent lies inside that memory, checked
/// against the window's size by the caller (a dynamic window's memory is checked by the
/// kernel: cross-memory attach fails on unmapped addresses).
pub struct Region<'a> {
    reach: Reach,
    offset: usize,
    count: usize,
    ty: &'a Arc<Type>,
    /// For `Reach::Process`: the remote pieces and the packed bytes before each (built on
    /// first use).
    pieces: OnceLock<(Vec<(usize, usize)>, Vec<usize>)>,
    /// Keeps a peer's mapping (a dynamic window's region) alive while the region is used.
    _keep: Keep,
    /// Which path accumulate-type operations on these bytes take (`atomic`).
    pub(super) acc: AccPath,
    /// For `Reach::Far`: the window's UCX side.
    far: Option<Arc<Far>>,
    /// For `Reach::Far` on a dynamic window: the target's regions holding the bytes, with
    /// their keys (else the window memory's key).
    far_keys: Option<FarKeys>,
}

/// Where accumulate-type operations on a region run, the same in every process for the same
/// bytes (see `atomic` and `dyn_maps`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccPath {
    /// CPU atomics on elements of 1, 2, 4 or 8 bytes at aligned addresses (others: the mutex).
    Atomics,
    /// The target's accumulate mutex.
    Mutex,
    /// Neither here: other processes take CPU atomics on these bytes, which this process does
    /// not reach by address (a shareable block it could not map, an access spanning regions
    /// of a dynamic window); atomic-size elements are refused, larger ones take the mutex.
    Refused,
}

fn range_error(func: &str, e: std::io::Error) -> MpiError {
    MpiError::new(
        ErrorClass::RmaRange,
        format!("{func}: the target memory is not accessible: {e}"),
    )
}

impl<'a> Region<'a> {
    /// # Safety
    /// With `Reach::Mapped`, every byte the `count` instances of `ty` at `addr + offset`
    /// touch is valid memory of this process (the window's mapped memory, or this process's
    /// own window memory), used under the window's synchronisation rules.
    pub unsafe fn new(reach: Reach, offset: usize, count: usize, ty: &'a Arc<Type>) -> Region<'a> {
        Region {
            reach,
            offset,
            count,
            ty,
            pieces: OnceLock::new(),
            _keep: None,
            acc: AccPath::Mutex,
            far: None,
            far_keys: None,
        }
    }

    /// Bytes in the packed stream.
    pub fn len(&self) -> usize {
        self.count * self.ty.size
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The mapped memory as a buffer of the target type.
    fn mapped(&self, addr: usize) -> Buf {
        // SAFETY: the constructor's contract: the instances lie in valid mapped memory.
        unsafe { Buf::typed(addr.wrapping_add(self.offset), self.count, self.ty) }
    }

    /// The remote pieces (address, length) of the layout, in packed order.
    fn pieces(&self, base: usize) -> Vec<(usize, usize)> {
        let start = base.wrapping_add(self.offset);
        let c = self.ty.compiled_layout();
        if let Some((disp, run)) = c.contiguous_run() {
            if self.count == 1 || (run == self.ty.size && self.ty.extent == run as isize) {
                return vec![(start.wrapping_add_signed(disp), self.len())];
            }
        }
        let segs = c.segments();
        let mut out = Vec::with_capacity((segs as usize).saturating_mul(self.count).min(1 << 16));
        for i in 0..self.count {
            let at = start.wrapping_add_signed(self.ty.extent * i as isize);
            for k in 0..segs {
                let (s, _) = c.segment(k);
                out.push((at.wrapping_add_signed(s.start), s.len));
            }
        }
        out
    }

    /// The pieces of the layout in packed order as addresses of the target process (also on
    /// another node), or of this one for mapped memory (their alignment is the same: mappings keep page offsets).
    pub fn any_pieces(&self) -> Vec<(usize, usize)> {
        match self.reach {
            Reach::Mapped(addr) => self.pieces(addr),
            Reach::Process { base, .. } | Reach::Far { base, .. } => self.pieces(base),
        }
    }

    /// For mapped memory: the pieces (address here, length) of the layout in packed order.
    pub fn mapped_pieces(&self) -> Option<Vec<(usize, usize)>> {
        match self.reach {
            Reach::Mapped(addr) => Some(self.pieces(addr)),
            Reach::Process { .. } | Reach::Far { .. } => None,
        }
    }

    /// The remote pieces holding packed bytes `at..at + len`.
    fn pieces_in(&self, base: usize, at: usize, len: usize) -> Vec<(usize, usize)> {
        let (pieces, before) = self.pieces.get_or_init(|| {
            let p = self.pieces(base);
            let mut sum = 0;
            let b = p
                .iter()
                .map(|&(_, l)| {
                    let s = sum;
                    sum += l;
                    s
                })
                .collect();
            (p, b)
        });
        if at == 0 && len == self.len() {
            return pieces.clone();
        }
        // The last piece starting at or before `at`, then on until `len` bytes are covered.
        let mut i = before.partition_point(|&b| b <= at).saturating_sub(1);
        let (mut at, mut left, mut out) = (at, len, Vec::new());
        while left > 0 {
            let (addr, plen) = pieces[i];
            let skip = at - before[i];
            let n = (plen - skip).min(left);
            if n > 0 {
                out.push((addr + skip, n));
            }
            left -= n;
            at += n;
            i += 1;
        }
        out
    }

    /// The window's UCX side (a `Reach::Far` region has it).
    fn far_side(&self) -> &Far {
        self.far
            .as_deref()
            .expect("a far region carries the window's UCX side")
    }

    /// Read packed bytes `at..at + out.len()` into `out`.
    pub fn read_at(&self, at: usize, out: &mut [u8], func: &str) -> MpiResult<()> {
        debug_assert!(at + out.len() <= self.len());
        if out.is_empty() {
            return Ok(());
        }
        match self.reach {
            Reach::Mapped(addr) => {
                self.mapped(addr).pack(at, out);
                Ok(())
            }
            Reach::Process { pid, base } => {
                cma::read_pieces(pid, &self.pieces_in(base, at, out.len()), out)
                    .map_err(|e| range_error(func, e))
            }
            Reach::Far { rank, base } => {
                let pieces = self.pieces_in(base, at, out.len());
                match &self.far_keys {
                    Some(keys) => self.far_side().read_in(rank, keys, &pieces, out, func),
                    None => self.far_side().read(rank, &pieces, out, func),
                }
            }
        }
    }

    /// Write `data` as packed bytes `at..at + data.len()`.
    pub fn write_at(&self, at: usize, data: &[u8], func: &str) -> MpiResult<()> {
        debug_assert!(at + data.len() <= self.len());
        if data.is_empty() {
            return Ok(());
        }
        match self.reach {
            Reach::Mapped(addr) => {
                self.mapped(addr).unpack(at, data);
                Ok(())
            }
            Reach::Process { pid, base } => {
                cma::write_pieces(pid, &self.pieces_in(base, at, data.len()), data)
                    .map_err(|e| range_error(func, e))
            }
            Reach::Far { rank, base } => {
                let pieces = self.pieces_in(base, at, data.len());
                match &self.far_keys {
                    Some(keys) => self.far_side().write_in(rank, keys, &pieces, data, func),
                    None => self.far_side().write(rank, &pieces, data, func),
                }
            }
        }
    }

    /// Read the whole packed stream into `out` (`len()` bytes).
    pub fn read(&self, out: &mut [u8], func: &str) -> MpiResult<()> {
        debug_assert_eq!(out.len(), self.len());
        self.read_at(0, out, func)
    }

    /// Write `data` (`len()` bytes) as the whole packed stream.
    pub fn write(&self, data: &[u8], func: &str) -> MpiResult<()> {
        debug_assert_eq!(data.len(), self.len());
        self.write_at(0, data, func)
    }
}

/// The packed bytes of an origin buffer: its own memory when contiguous, else a copy.
pub fn packed(buf: &Buf) -> std::borrow::Cow<'_, [u8]> {
    if buf.is_contiguous() {
        buf.with_bytes(|b| {
            // Valid for the operation (the Buf's contract), which encloses every use of the slice.
            // SAFETY: the same bytes `with_bytes` lends.
            std::borrow::Cow::Borrowed(unsafe { std::slice::from_raw_parts(b.as_ptr(), b.len()) })
        })
    } else {
        let mut v = vec![0u8; buf.len()];
        buf.pack(0, &mut v);
        std::borrow::Cow::Owned(v)
    }
}

/// Why bytes `lo..hi` (relative to the window's byte 0) are not all in a window of `size`
/// bytes, saying how far they overlap it.
fn outside_window(lo: i128, hi: i128, size: u64) -> String {
    let size_i = size as i128;
    if lo < size_i && hi > 0 {
        let outside = (0 - lo).max(0) + (hi - size_i).max(0);
        format!(
            "bytes {lo}..{hi} only partly lie in the target's {size} bytes of window memory ({outside} bytes {} it)",
            if lo < 0 { "before" } else { "past the end of" }
        )
    } else {
        format!("bytes {lo}..{hi} lie outside the target's {size} bytes of window memory")
    }
}

impl WinRma {
    /// The target's bytes an operation touches; `MPI_ERR_RMA_RANGE` when they leave the
    /// target's window memory.
    /// `acc`: for an accumulate-type operation (`find_attached`).
    pub(super) fn region<'a>(
        &self,
        t: &Target<'a>,
        acc: bool,
        func: &str,
    ) -> MpiResult<Region<'a>> {
        self.serve_far();
        let peer = &self.peers[t.rank as usize];
        let range = |why: String| {
            Err(MpiError::new(
                ErrorClass::RmaRange,
                format!(
                    "{func}(target_rank={}, target_disp={}): {why}",
                    t.rank, t.disp
                ),
            ))
        };
        let offset = t.disp as i128 * peer.disp_unit as i128;
        let ty = t.ty;
        let touches = t.count > 0 && ty.size > 0;
        // The bytes touched, relative to the displacement.
        let (first, last) = (0i128, (t.count as i128 - 1) * ty.extent as i128);
        let lo = offset + ty.true_lb as i128 + first.min(last);
        let hi = offset + ty.true_lb as i128 + first.max(last) + ty.true_extent as i128;
        if self.flavor == Flavor::Dynamic {
            // Absolute addresses, found in the regions the target published (else the
            // kernel refuses what the target has not mapped).
            if t.disp < 0 {
                return range("a dynamic window's displacements are addresses".into());
            }
            if let Some(far) = self.far.as_ref().filter(|f| f.is_far(t.rank)) {
                return self.far_region(far, t, (lo, hi), touches, offset as usize, func);
            }
            let (mut reach, mut keep) = (self.reach_process(t.rank), None);
            let mut path = AccPath::Mutex;
            if touches {
                if lo < 0 || hi > usize::MAX as i128 {
                    return range(format!("bytes {lo}..{hi} are not addresses"));
                }
                match self.find_attached(t.rank, lo as usize, (hi - lo) as usize, acc) {
                    Found::Mapped {
                        delta,
                        keep: k,
                        atomic,
                    } => {
                        reach = Reach::Mapped(delta);
                        keep = k;
                        if atomic {
                            path = AccPath::Atomics;
                        }
                    }
                    Found::Process { shared } => {
                        if shared {
                            path = AccPath::Refused;
                        }
                    }
                    Found::Outside { near: None } => {
                        return range(format!(
                            "bytes {lo:#x}..{hi:#x} lie outside every region rank {} attached to the window",
                            t.rank
                        ))
                    }
                    Found::Outside {
                        near: Some((base, size)),
                    } => {
                        let end = base as u128 + size as u128;
                        return range(format!(
                            "bytes {lo:#x}..{hi:#x} only partly lie in the region {base:#x}..{end:#x} rank {} attached to the window ({} of them outside it; the attached regions do not cover them all)",
                            t.rank,
                            (hi as u128 - lo as u128) - (end.min(hi as u128) - (base as u128).max(lo as u128))
                        ));
                    }
                }
            }
            // `Mapped` only when `find_attached` found the touched bytes `lo..hi` inside a
            // region mapped here at address + delta (this process's own attached memory, or a
            // peer's block mapped by `dyn_maps`), kept mapped by `keep` for the region's life.
            // SAFETY: the touched bytes lie in memory mapped while `keep` lives (above).
            let mut r = unsafe { Region::new(reach, offset as usize, t.count, t.ty) };
            r._keep = keep;
            r.acc = path;
            return Ok(r);
        }
        if touches && (lo < 0 || hi > peer.size as i128) {
            return range(outside_window(lo, hi, peer.size));
        }
        // For mapped memory the typed extent lies inside the target's window memory (checked
        // just above), which stays mapped while the window lives.
        let reach = self.reach(t.rank);
        // SAFETY: the typed extent lies in mapped window memory (checked above).
        let mut r = unsafe { Region::new(reach, offset as usize, t.count, t.ty) };
        r.acc = self.acc_path();
        if matches!(reach, Reach::Far { .. }) {
            r.far = self.far.clone();
        }
        Ok(r)
    }

    /// `region` for a dynamic window's rank on another node: the bytes `lo..hi` (addresses
    /// there) found in the regions it attached, reached with their UCX keys.
    fn far_region<'a>(
        &self,
        far: &Arc<Far>,
        t: &Target<'a>,
        (lo, hi): (i128, i128),
        touches: bool,
        offset: usize,
        func: &str,
    ) -> MpiResult<Region<'a>> {
        let range = |why: String| {
            MpiError::new(
                ErrorClass::RmaRange,
                format!(
                    "{func}(target_rank={}, target_disp={}): {why}",
                    t.rank, t.disp
                ),
            )
        };
        let mut keys = None;
        if touches {
            if lo < 0 || hi > usize::MAX as i128 {
                return Err(range(format!("bytes {lo}..{hi} are not addresses")));
            }
            match far.find_attached(&self.area, t.rank, lo as usize, (hi - lo) as usize, func)? {
                FarFound::In(k) => keys = Some(k),
                FarFound::Outside { near } => {
                    let near = near.map_or(String::new(), |(base, size)| {
                        format!(" (they overlap its region {base:#x}..{:#x})", base + size)
                    });
                    return Err(range(format!(
                        "bytes {lo:#x}..{hi:#x} lie outside the regions rank {} attached to the window{near}",
                        t.rank
                    )));
                }
            }
        }
        let reach = Reach::Far {
            rank: t.rank,
            base: 0,
        };
        // A far region is reached through UCX only, never by address.
        // SAFETY: not `Reach::Mapped`, so the constructor's contract does not apply.
        let mut r = unsafe { Region::new(reach, offset, t.count, t.ty) };
        r.far = Some(far.clone());
        r.far_keys = keys;
        r.acc = AccPath::Mutex;
        Ok(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::predefined::{Datatype, TypeClass};

    static INT: Datatype = Datatype::predefined("MPI_INT", 4, TypeClass::SignedInt);

    #[test]
    fn range_messages_say_how_far_bytes_overlap_the_window() {
        assert_eq!(
            outside_window(8, 24, 16),
            "bytes 8..24 only partly lie in the target's 16 bytes of window memory (8 bytes past the end of it)"
        );
        assert_eq!(
            outside_window(-4, 4, 16),
            "bytes -4..4 only partly lie in the target's 16 bytes of window memory (4 bytes before it)"
        );
        assert_eq!(
            outside_window(16, 20, 16),
            "bytes 16..20 lie outside the target's 16 bytes of window memory"
        );
    }

    /// A vector of 4 blocks of 2 ints, stride 3, in this process reached through
    /// cross-memory attach: sub-ranges of the packed stream split pieces correctly.
    #[test]
    fn process_pieces_in_sub_ranges() {
        let int = Type::basic(&INT);
        let v = Type::vector(4, 2, 3, false, &int, false).unwrap();
        v.commit();
        let mut target = vec![0i32; 16];
        let reach = Reach::Process {
            pid: std::process::id() as i32,
            base: target.as_mut_ptr() as usize,
        };
        // SAFETY: Process reach: the kernel checks every access.
        let r = unsafe { Region::new(reach, 4, 1, &v) };
        assert_eq!(r.len(), 32);
        let data: Vec<u8> = (1..=8i32).flat_map(|x| x.to_ne_bytes()).collect();
        // Three uneven pieces: bytes 0..6, 6..22, 22..32.
        for (a, b) in [(0, 6), (6, 22), (22, 32)] {
            r.write_at(a, &data[a..b], "t").unwrap();
        }
        let t = std::hint::black_box(&target);
        assert_eq!(&t[..], &[0, 1, 2, 0, 3, 4, 0, 5, 6, 0, 7, 8, 0, 0, 0, 0]);
        let mut back = vec![0u8; 32];
        r.read_at(10, &mut back[10..30], "t").unwrap();
        r.read_at(0, &mut back[..10], "t").unwrap();
        r.read_at(30, &mut back[30..], "t").unwrap();
        assert_eq!(back, data);
    }
}
