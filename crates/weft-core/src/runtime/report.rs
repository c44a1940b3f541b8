//! `WEFT_STATS`: at `MPI_Finalize` every rank's counters go to rank 0, which prints one table
//! (to stderr or the file the variable names).
#![forbid(unsafe_code)]

use std::fmt::Write as _;

use crate::config::StatsOutput;
use crate::datatype::access::Scratch;
use crate::error::MpiResult;
use crate::object::Comm;
use crate::stats::{self, Counter};

/// What each rank reports, in this order.
const FIELDS: usize = 9;

fn mine() -> [u64; FIELDS] {
    let (mpi_ns, wait_ns) = stats::times();
    [
        stats::total(Counter::SentSelf) + stats::total(Counter::SentShm),
        stats::total(Counter::BytesSentSelf) + stats::total(Counter::BytesSentShm),
        stats::total(Counter::RecvSelf) + stats::total(Counter::RecvShm),
        stats::total(Counter::BytesRecvSelf) + stats::total(Counter::BytesRecvShm),
        stats::total(Counter::RendezvousSends),
        stats::total(Counter::UnexpectedArrivals),
        stats::total(Counter::UnexpectedHigh),
        mpi_ns,
        wait_ns,
    ]
}

/// Gather every rank's counters on `world` and have rank 0 write the table to `out`.
pub fn report(world: &Comm, out: &StatsOutput) -> MpiResult<()> {
    let size = world.size() as usize;
    let mut send = Scratch::new(FIELDS * 8);
    let bytes: Vec<u8> = mine().iter().flat_map(|v| v.to_le_bytes()).collect();
    send.buf().unpack(0, &bytes);
    let mut recv = Scratch::new(if world.rank == 0 {
        FIELDS * 8 * size
    } else {
        0
    });
    crate::coll::gather(world, Some(&send.buf()), &recv.buf(), 0)?;
    if world.rank != 0 {
        return Ok(());
    }
    let mut all = vec![0u8; FIELDS * 8 * size];
    recv.buf().pack(0, &mut all);
    let rows: Vec<[u64; FIELDS]> = all
        .chunks(FIELDS * 8)
        .map(|c| {
            std::array::from_fn(|k| u64::from_le_bytes(c[8 * k..8 * k + 8].try_into().unwrap()))
        })
        .collect();
    let text = table(&rows);
    match out {
        StatsOutput::Stderr => eprint!("{text}"),
        StatsOutput::File(path) => {
            if let Err(e) = std::fs::write(path, &text) {
                eprintln!("Weft: WEFT_STATS={path}: cannot write the table ({e}); here it is:");
                eprint!("{text}");
            }
        }
    }
    Ok(())
}

fn secs(ns: u64) -> String {
    format!("{:.6}", ns as f64 / 1e9)
}

/// The table: a header, one line per rank, a total line.
fn table(rows: &[[u64; FIELDS]]) -> String {
    let mut t = String::new();
    let _ = writeln!(t, "Weft statistics ({} ranks)", rows.len());
    let _ = writeln!(
        t,
        "{:>5} {:>10} {:>14} {:>10} {:>14} {:>6} {:>10} {:>8} {:>12} {:>12}",
        "rank",
        "msgs_sent",
        "bytes_sent",
        "msgs_recv",
        "bytes_recv",
        "rndv",
        "unexpected",
        "unexp_max",
        "mpi_time_s",
        "wait_time_s"
    );
    let line = |t: &mut String, label: &str, r: &[u64; FIELDS]| {
        let _ = writeln!(
            t,
            "{label:>5} {:>10} {:>14} {:>10} {:>14} {:>6} {:>10} {:>8} {:>12} {:>12}",
            r[0],
            r[1],
            r[2],
            r[3],
            r[4],
            r[5],
            r[6],
            secs(r[7]),
            secs(r[8])
        );
    };
    for (rank, r) in rows.iter().enumerate() {
        line(&mut t, &rank.to_string(), r);
    }
    let mut total = [0u64; FIELDS];
    for r in rows {
        for k in 0..FIELDS {
            total[k] = if k == 6 {
                total[k].max(r[k])
            } else {
                total[k] + r[k]
            };
        }
    }
    line(&mut t, "all", &total);
    t
}

#[cfg(test)]
mod tests {
    #[test]
    fn table_has_a_line_per_rank_and_totals() {
        let t = super::table(&[
            [1, 2, 3, 4, 0, 1, 1, 1_500_000_000, 0],
            [5, 6, 7, 8, 1, 0, 3, 0, 0],
        ]);
        let lines: Vec<&str> = t.lines().collect();
        assert_eq!(lines.len(), 5);
        assert!(lines[2].trim_start().starts_with("0 "));
        assert!(lines[2].contains("1.500000"));
        let total: Vec<&str> = lines[4].split_whitespace().collect();
        assert_eq!(&total[..8], &["all", "6", "8", "10", "12", "1", "1", "3"]);
    }
}
