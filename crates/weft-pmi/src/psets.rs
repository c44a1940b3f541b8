//! Process sets handed from the launcher to the library through the KVS.
//!
//! `mpiexec --pset NAME=RANKLIST` stores the job attribute [`PSETS_KEY`] whose value is
//! the hex encoding of UTF-8 lines `NAME=RANKLIST` joined by `'\n'`. A rank list is a
//! comma-separated list of ranks and inclusive ranges, e.g. `0,2-3`; its order is the
//! order of the process set's group.
#![forbid(unsafe_code)]

use crate::{hex_decode, hex_encode, PmiError};

/// The job attribute (and PMI-1 key) holding the encoded process sets.
pub const PSETS_KEY: &str = "weft_psets";

/// A named set of ranks of the job.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Pset {
    /// The name, e.g. `app://evens`.
    pub name: String,
    /// The member ranks, in group order, without duplicates.
    pub ranks: Vec<u32>,
}

impl Pset {
    /// Parses `NAME=RANKLIST` (the last `=` separates the two), checking every rank is
    /// below `size`.
    pub fn parse(spec: &str, size: u32) -> Result<Pset, PmiError> {
        let (name, list) = spec.rsplit_once('=').ok_or_else(|| {
            PmiError::malformed("process set", format!("{spec:?} is not NAME=RANKLIST"))
        })?;
        if name.is_empty() || name.contains('\n') {
            return Err(PmiError::malformed(
                "process set",
                format!("{spec:?} has no usable name"),
            ));
        }
        let ranks = parse_ranklist(list)?;
        if let Some(&bad) = ranks.iter().find(|&&r| r >= size) {
            return Err(PmiError::malformed(
                "process set",
                format!("{name}: rank {bad} is out of range (the job has {size} ranks)"),
            ));
        }
        Ok(Pset {
            name: name.to_string(),
            ranks,
        })
    }
}

/// Parses a rank list such as `0,2-3` into ranks, refusing duplicates and empty lists.
pub fn parse_ranklist(list: &str) -> Result<Vec<u32>, PmiError> {
    let bad = |why: String| PmiError::malformed("rank list", format!("{list:?}: {why}"));
    let number = |s: &str| {
        s.trim()
            .parse::<u32>()
            .map_err(|_| bad(format!("{s:?} is not a rank")))
    };
    let mut ranks = Vec::new();
    for item in list.split(',') {
        match item.split_once('-') {
            Some((lo, hi)) => {
                let (lo, hi) = (number(lo)?, number(hi)?);
                if lo > hi {
                    return Err(bad(format!("range {lo}-{hi} is backwards")));
                }
                ranks.extend(lo..=hi);
            }
            None => ranks.push(number(item)?),
        }
    }
    let mut seen = ranks.clone();
    seen.sort_unstable();
    if let Some(w) = seen.windows(2).find(|w| w[0] == w[1]) {
        return Err(bad(format!("rank {} appears twice", w[0])));
    }
    Ok(ranks)
}

/// Formats ranks as a rank list, folding ascending runs into ranges.
pub fn format_ranklist(ranks: &[u32]) -> String {
    let mut parts = Vec::new();
    let mut i = 0;
    while i < ranks.len() {
        let mut j = i;
        while j + 1 < ranks.len() && ranks[j].checked_add(1) == Some(ranks[j + 1]) {
            j += 1;
        }
        parts.push(if j > i {
            format!("{}-{}", ranks[i], ranks[j])
        } else {
            ranks[i].to_string()
        });
        i = j + 1;
    }
    parts.join(",")
}

/// Encodes process sets as the value stored under [`PSETS_KEY`].
pub fn encode_psets(psets: &[Pset]) -> String {
    let lines: Vec<String> = psets
        .iter()
        .map(|p| format!("{}={}", p.name, format_ranklist(&p.ranks)))
        .collect();
    hex_encode(lines.join("\n").as_bytes())
}

/// Decodes the value stored under [`PSETS_KEY`].
pub fn decode_psets(value: &str) -> Result<Vec<Pset>, PmiError> {
    let bytes = hex_decode(value)?;
    let text = String::from_utf8(bytes)
        .map_err(|_| PmiError::malformed("process sets", "not UTF-8 text"))?;
    text.split('\n')
        .filter(|line| !line.is_empty())
        .map(|line| Pset::parse(line, u32::MAX))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranklists() {
        assert_eq!(parse_ranklist("0,2-3").unwrap(), vec![0, 2, 3]);
        assert_eq!(parse_ranklist("3,1").unwrap(), vec![3, 1]);
        assert_eq!(parse_ranklist(" 5 - 6 ").unwrap(), vec![5, 6]);
        for bad in ["", "1,", "a", "3-1", "1,1", "0-2,2", "-1"] {
            assert!(parse_ranklist(bad).is_err(), "{bad:?}");
        }
        assert_eq!(format_ranklist(&[0, 2, 3, 4, 7, 6]), "0,2-4,7,6");
        assert_eq!(format_ranklist(&[]), "");
    }

    #[test]
    fn round_trip() {
        let sets = vec![
            Pset::parse("app://evens=0,2", 4).unwrap(),
            Pset::parse("a=b=1-3", 4).unwrap(),
        ];
        assert_eq!(sets[1].name, "a=b");
        let value = encode_psets(&sets);
        assert!(value.bytes().all(|b| b.is_ascii_hexdigit()));
        assert_eq!(decode_psets(&value).unwrap(), sets);
        assert_eq!(decode_psets("").unwrap(), vec![]);
    }

    #[test]
    fn bad_specs() {
        assert!(Pset::parse("x=0-4", 4).is_err());
        assert!(Pset::parse("=1", 4).is_err());
        assert!(Pset::parse("noequals", 4).is_err());
        assert!(decode_psets("zz").is_err());
        assert!(decode_psets(&hex_encode(b"x=1\ny")).is_err());
    }
}
