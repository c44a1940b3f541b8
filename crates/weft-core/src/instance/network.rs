//! Bring-up of the UCX transport: once per process, when the job spans several (logical)
//! nodes. Each worker's address is published in the launcher's key-value space as hex in
//! chunks (`weft-ucx.<worker>.<chunk>`, the count under `weft-ucx.<worker>.n`: PMI values
//! are at most 1024 characters), a fence makes every rank's visible, and the addresses of
//! the ranks on other nodes are read back. The fence is collective over the job, so the
//! first instance of every process must start (as `MPI_Init` or a first session does).
#![forbid(unsafe_code)]

use std::sync::OnceLock;

use weft_pmi::{hex_decode, hex_encode};

use super::layout::{kvs_publish, kvs_read, JobLayout};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::transport::ucx::UcxTransport;

/// Hex characters per published value.
const CHUNK: usize = 960;

static UCX: OnceLock<UcxTransport> = OnceLock::new();

/// The process's UCX transport, made (and the addresses exchanged) by its first call, when
/// some rank of the job is on another node. `None` when every rank shares this node, or when
/// this build has no UCX (then messages to other nodes fail when sent). `message_max` is the
/// largest message the transport must receive (`transport::message_max`).
pub(super) fn ucx_transport(
    job: &JobLayout,
    workers: usize,
    message_max: usize,
) -> MpiResult<Option<&'static UcxTransport>> {
    let mine = job.node_of[job.rank as usize];
    if job.node_of.iter().all(|&n| n == mine) {
        return Ok(None);
    }
    if let Some(ucx) = UCX.get() {
        return Ok(Some(ucx));
    }
    if crate::transport::ucx::library_version().is_none() {
        return Ok(None);
    }
    let failed = |e: std::io::Error| MpiError::new(ErrorClass::Other, format!("{e}"));
    let mut ucx = UcxTransport::open(workers, job.rank, job.size, message_max).map_err(failed)?;
    let own = ucx.addresses().map_err(failed)?;
    let mut pairs = Vec::new();
    for (w, address) in own.iter().enumerate() {
        let text = hex_encode(address);
        let chunks: Vec<&str> = text
            .as_bytes()
            .chunks(CHUNK)
            .map(|c| std::str::from_utf8(c).expect("hex is ASCII"))
            .collect();
        pairs.push((format!("weft-ucx.{w}.n"), chunks.len().to_string()));
        for (i, chunk) in chunks.iter().enumerate() {
            pairs.push((format!("weft-ucx.{w}.{i}"), (*chunk).to_owned()));
        }
    }
    kvs_publish(&pairs)?;
    for rank in 0..job.size {
        if rank == job.rank {
            // Its own addresses serve loopback (messages between its VCIs without shm).
            ucx.set_peer(rank, own.clone());
        } else if job.node_of[rank as usize] != mine {
            ucx.set_peer(rank, read_addresses(rank, workers)?);
        }
    }
    Ok(Some(UCX.get_or_init(|| ucx)))
}

/// The worker addresses job rank `rank` published.
fn read_addresses(rank: u32, workers: usize) -> MpiResult<Vec<Vec<u8>>> {
    let missing = |key: &str| {
        MpiError::new(
            ErrorClass::Other,
            format!("UCX bring-up: rank {rank} published no {key} (was it built without UCX, or with another WEFT_NUM_VCIS?)"),
        )
    };
    (0..workers)
        .map(|w| {
            let key = format!("weft-ucx.{w}.n");
            let n: usize = kvs_read(rank, &key)?
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| missing(&key))?;
            let mut text = String::new();
            for i in 0..n {
                let key = format!("weft-ucx.{w}.{i}");
                text.push_str(&kvs_read(rank, &key)?.ok_or_else(|| missing(&key))?);
            }
            hex_decode(&text).map_err(|e| {
                MpiError::new(
                    ErrorClass::Other,
                    format!("UCX bring-up: rank {rank}'s address: {e}"),
                )
            })
        })
        .collect()
}
