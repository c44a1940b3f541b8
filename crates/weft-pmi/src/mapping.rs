//! Parsing of `PMI_process_mapping`, the launcher's description of which node runs
//! which rank.
//!
//! Grammar (as served by MPICH's Hydra and Slurm): `(vector,ITEM,ITEM,...)` where an ITEM
//! is a block `(start_node,num_nodes,ranks_per_node)`, a repeat `[ITEM,...]xK`, or a bare
//! node number standing for one rank. Blocks place `ranks_per_node` consecutive ranks on
//! each of the nodes `start_node..start_node+num_nodes`. When the description covers
//! fewer ranks than the job has, it repeats from the start (ranks are dealt cyclically).
#![forbid(unsafe_code)]

use crate::PmiError;

/// Largest number of ranks one description may expand to (guards against `[..]x1e9`).
const MAX_EXPANDED: usize = 1 << 24;

/// The node index of each of the `size` ranks described by `mapping`.
pub fn parse_process_mapping(mapping: &str, size: u32) -> Result<Vec<u32>, PmiError> {
    let text: String = mapping.chars().filter(|c| !c.is_whitespace()).collect();
    let inner = text
        .strip_prefix("(vector,")
        .and_then(|rest| rest.strip_suffix(')'))
        .ok_or_else(|| bad(mapping, "it is not (vector,...)"))?;
    let mut parser = Parser {
        text: inner.as_bytes(),
        pos: 0,
        source: mapping,
    };
    let pattern = parser.items(b'\0')?;
    if pattern.is_empty() {
        return Err(bad(mapping, "it describes no rank"));
    }
    Ok(pattern
        .iter()
        .copied()
        .cycle()
        .take(size as usize)
        .collect())
}

fn bad(mapping: &str, reason: &str) -> PmiError {
    PmiError::malformed("PMI_process_mapping", format!("{mapping:?}: {reason}"))
}

/// A recursive-descent parser over the text between `(vector,` and the final `)`.
struct Parser<'a> {
    text: &'a [u8],
    pos: usize,
    source: &'a str,
}

impl Parser<'_> {
    /// Parses comma-separated items up to `end` (`]`, or `\0` for the end of text),
    /// returning the node of each rank they describe.
    fn items(&mut self, end: u8) -> Result<Vec<u32>, PmiError> {
        let mut nodes = Vec::new();
        loop {
            match self.peek() {
                Some(b'(') => self.block(&mut nodes)?,
                Some(b'[') => self.repeat(&mut nodes)?,
                Some(c) if c.is_ascii_digit() => nodes.push(self.number()?),
                _ => return Err(self.error("expected a block, a repeat or a node number")),
            }
            if nodes.len() > MAX_EXPANDED {
                return Err(self.error("it describes too many ranks"));
            }
            match self.peek() {
                Some(b',') => self.pos += 1,
                Some(c) if c == end => return Ok(nodes),
                None if end == b'\0' => return Ok(nodes),
                _ => return Err(self.error("expected ',' or the end of a list")),
            }
        }
    }

    /// `(start,count,per_node)`.
    fn block(&mut self, nodes: &mut Vec<u32>) -> Result<(), PmiError> {
        self.expect(b'(')?;
        let start = self.number()?;
        self.expect(b',')?;
        let count = self.number()?;
        self.expect(b',')?;
        let per_node = self.number()?;
        self.expect(b')')?;
        if (count as usize).saturating_mul(per_node as usize) > MAX_EXPANDED {
            return Err(self.error("it describes too many ranks"));
        }
        for node in start..start.saturating_add(count) {
            nodes.resize(nodes.len() + per_node as usize, node);
        }
        Ok(())
    }

    /// `[items]xK`.
    fn repeat(&mut self, nodes: &mut Vec<u32>) -> Result<(), PmiError> {
        self.expect(b'[')?;
        let body = self.items(b']')?;
        self.expect(b']')?;
        self.expect(b'x')?;
        let times = self.number()? as usize;
        if body.len().saturating_mul(times) > MAX_EXPANDED {
            return Err(self.error("it describes too many ranks"));
        }
        for _ in 0..times {
            nodes.extend_from_slice(&body);
        }
        Ok(())
    }

    fn number(&mut self) -> Result<u32, PmiError> {
        let start = self.pos;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        std::str::from_utf8(&self.text[start..self.pos])
            .ok()
            .and_then(|digits| digits.parse().ok())
            .ok_or_else(|| self.error("expected a number"))
    }

    fn expect(&mut self, c: u8) -> Result<(), PmiError> {
        if self.peek() == Some(c) {
            self.pos += 1;
            Ok(())
        } else {
            Err(self.error(&format!("expected '{}'", char::from(c))))
        }
    }

    fn peek(&self) -> Option<u8> {
        self.text.get(self.pos).copied()
    }

    fn error(&self, reason: &str) -> PmiError {
        bad(
            self.source,
            &format!("{reason} at offset {}", self.pos + "(vector,".len()),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn measured_strings() {
        assert_eq!(
            parse_process_mapping("(vector,(0,1,2))", 2).unwrap(),
            vec![0, 0]
        );
        assert_eq!(
            parse_process_mapping("(vector,[(0,2,1)]x2,0)", 5).unwrap(),
            vec![0, 1, 0, 1, 0]
        );
    }

    #[test]
    fn blocks_repeat_and_wrap() {
        assert_eq!(
            parse_process_mapping("(vector,(0,2,2))", 6).unwrap(),
            vec![0, 0, 1, 1, 0, 0]
        );
        assert_eq!(
            parse_process_mapping("(vector, (0,1,3), (1,1,1))", 4).unwrap(),
            vec![0, 0, 0, 1]
        );
        assert_eq!(
            parse_process_mapping("(vector,[(0,1,1),[2]x2]x2)", 6).unwrap(),
            vec![0, 2, 2, 0, 2, 2]
        );
        assert_eq!(parse_process_mapping("(vector,3)", 2).unwrap(), vec![3, 3]);
        assert_eq!(
            parse_process_mapping("(vector,(0,1,4))", 2).unwrap(),
            vec![0, 0]
        );
    }

    #[test]
    fn malformed_mappings_are_errors() {
        for bad in [
            "",
            "(vector,)",
            "(vector,(0,1))",
            "(vector,(0,1,2)",
            "vector,(0,1,2)",
            "(vector,[(0,1,1)])",
            "(vector,[(0,1,1)]x)",
            "(vector,(0,1,2)junk)",
            "(vector,(0,1,0))",
            "(vector,(0,99999,99999))",
            "(vector,[[(0,1,1000)]x100000]x100000)",
            "(vector,(a,1,2))",
            "(vector,99999999999)",
        ] {
            assert!(parse_process_mapping(bad, 4).is_err(), "{bad:?}");
        }
    }
}
