//! The shared-memory transport between processes of one node: one segment per node holding
//! an MPSC ring of cells for every (local rank, VCI); `pair` holds the single-producer rings
//! between two processes' stream VCIs, each in a segment of its own; `foreign` the rings to
//! processes of other jobs this process connected to; `coll_area` is the
//! separate, smaller segment of one communicator's node-level collectives.

pub mod coll_area;
pub mod counter;
pub mod foreign;
pub mod pair;
pub mod ring;
pub mod segment;
pub mod shareable;
pub mod win_area;

use std::io;
use std::sync::Mutex;

use ring::RingPlace;
pub use ring::{Consumer, Ring, WIRE_HEADER_BYTES};
use segment::{Rejoin, Segment, ATTACH_TIMEOUT, HEADER_BYTES};

/// How this process maps the node's segment again after an instance that had it mapped
/// went away (its last session ended): the name was unlinked once every local rank had
/// attached, so a descriptor is kept from the first attach. Peers keep using the same rings,
/// so a process that starts a new session meets them where they are.
static NODE_SEGMENT: Mutex<Option<Rejoin>> = Mutex::new(None);

/// Ring geometry, from the configuration.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Geometry {
    pub cells: usize,
    pub cell_size: usize,
}

/// The node's rings, mapped into this process.
pub struct ShmTransport {
    segment: Segment,
    rings: Vec<RingPlace>,
    nvcis: usize,
}

impl ShmTransport {
    /// Map the node segment `name` for `local_size` ranks and `nvcis` VCIs each: local rank
    /// 0 (`my_local`) creates it, the others attach it once it appears.
    pub fn attach(
        name: &str,
        my_local: u32,
        local_size: u32,
        nvcis: usize,
        geometry: Geometry,
    ) -> io::Result<ShmTransport> {
        let per_ring = ring::ring_bytes(geometry.cells, geometry.cell_size);
        let nrings = local_size as usize * nvcis;
        let len = HEADER_BYTES + nrings * per_ring;
        // A fresh segment is zero-filled, which is an empty ring (see `ring`): the creator
        // writes nothing, so no page is touched before it carries a message.
        let mut node = NODE_SEGMENT.lock().unwrap_or_else(|p| p.into_inner());
        let segment = match &*node {
            Some(rejoin) => Segment::rejoin(rejoin, name, len, local_size)?,
            None => {
                let (segment, rejoin) = if my_local == 0 {
                    Segment::create_node(name, len, local_size)?
                } else {
                    Segment::attach_node(name, len, local_size, ATTACH_TIMEOUT)?
                };
                *node = Some(rejoin);
                segment
            }
        };
        let rings = (0..nrings)
            .map(|i| {
                // HEADER_BYTES and ring sizes are multiples of 128; every rank uses the ring with
                // the same geometry (the segment size check catches disagreement).
                // SAFETY: the ring's bytes lie inside the segment, 128-byte aligned.
                unsafe {
                    RingPlace::new(
                        segment.base().add(HEADER_BYTES + i * per_ring),
                        geometry.cells,
                        geometry.cell_size,
                    )
                }
            })
            .collect();
        Ok(ShmTransport {
            segment,
            rings,
            nvcis,
        })
    }

    /// The ring that local rank `local` receives on for `vci`.
    #[inline]
    pub fn ring(&self, local: u32, vci: usize) -> Ring<'_> {
        let place = &self.rings[local as usize * self.nvcis + vci];
        // SAFETY: the segment stays mapped while `self` lives, which the view borrows.
        unsafe { place.view() }
    }

    /// See `Segment::unlink_if_pending`.
    pub fn release_name(&self) {
        self.segment.unlink_if_pending();
    }

    pub fn segment_bytes(&self) -> usize {
        self.segment.len()
    }
}
