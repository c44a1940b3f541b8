//! Forwarding of a rank's output, whole lines at a time.
#![forbid(unsafe_code)]

use std::io::Write;

/// A line longer than this is forwarded in pieces rather than buffered further.
const MAX_PENDING: usize = 64 * 1024;

/// Reassembles one output stream of one rank into whole lines, optionally prefixed.
#[derive(Debug)]
pub struct LineForwarder {
    prefix: Vec<u8>,
    pending: Vec<u8>,
    at_line_start: bool,
}

impl LineForwarder {
    /// A forwarder that starts each line with `prefix` (empty for none).
    pub fn new(prefix: String) -> Self {
        LineForwarder {
            prefix: prefix.into_bytes(),
            pending: Vec::new(),
            at_line_start: true,
        }
    }

    /// Takes bytes read from the rank and writes every completed line to `out`.
    pub fn feed(&mut self, data: &[u8], out: &mut dyn Write) {
        self.pending.extend_from_slice(data);
        let Some(last_newline) = self.pending.iter().rposition(|&b| b == b'\n') else {
            if self.pending.len() > MAX_PENDING {
                self.flush(out);
            }
            return;
        };
        let rest = self.pending.split_off(last_newline + 1);
        let complete = std::mem::replace(&mut self.pending, rest);
        let mut chunk = Vec::with_capacity(complete.len() + self.prefix.len() * 4);
        for line in complete.split_inclusive(|&b| b == b'\n') {
            if self.at_line_start {
                chunk.extend_from_slice(&self.prefix);
            }
            chunk.extend_from_slice(line);
            self.at_line_start = true;
        }
        emit(out, &chunk);
    }

    /// Writes out a partial last line (at end of stream, or when it grows too long).
    pub fn flush(&mut self, out: &mut dyn Write) {
        if self.pending.is_empty() {
            return;
        }
        let mut chunk = Vec::with_capacity(self.pending.len() + self.prefix.len());
        if self.at_line_start {
            chunk.extend_from_slice(&self.prefix);
        }
        chunk.append(&mut self.pending);
        self.at_line_start = false;
        emit(out, &chunk);
    }
}

/// Writes in one go; a closed destination (e.g. `mpiexec ... | head`) is not an error
/// worth stopping the job for.
fn emit(out: &mut dyn Write, chunk: &[u8]) {
    let _ = out.write_all(chunk).and_then(|()| out.flush());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_lines_get_prefixed() {
        let mut f = LineForwarder::new("[3] ".into());
        let mut out = Vec::new();
        f.feed(b"hel", &mut out);
        assert!(out.is_empty());
        f.feed(b"lo\nwor", &mut out);
        assert_eq!(out, b"[3] hello\n");
        f.feed(b"ld\n\nx", &mut out);
        assert_eq!(out, b"[3] hello\n[3] world\n[3] \n");
        f.flush(&mut out);
        assert_eq!(out, b"[3] hello\n[3] world\n[3] \n[3] x");
        f.feed(b"y\n", &mut out);
        assert_eq!(out, b"[3] hello\n[3] world\n[3] \n[3] xy\n");
    }

    #[test]
    fn untagged_output_is_unchanged() {
        let mut f = LineForwarder::new(String::new());
        let mut out = Vec::new();
        f.feed(b"a\nb", &mut out);
        f.flush(&mut out);
        assert_eq!(out, b"a\nb");
    }

    #[test]
    fn endless_lines_are_forwarded_in_pieces() {
        let mut f = LineForwarder::new("[0] ".into());
        let mut out = Vec::new();
        f.feed(&vec![b'a'; MAX_PENDING + 1], &mut out);
        assert_eq!(out.len(), MAX_PENDING + 1 + 4);
        f.feed(b"b\n", &mut out);
        assert!(out.ends_with(b"ab\n"));
    }
}
