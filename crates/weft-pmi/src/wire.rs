//! Encoding and decoding of PMI messages.
//!
//! Two framings exist on the same socket:
//! - PMI-1: one message per line, `cmd=NAME key=value ...\n`, fields separated by spaces.
//! - PMI-2: a 6-character decimal length (padded with spaces on either side), then
//!   `cmd=NAME;key=value;...;` with no newline.
//!
//! The first message of every connection (`cmd=init pmi_version=N ...`) and its answer
//! use the PMI-1 framing even when PMI-2 is chosen; [`Decoder::set_framing`] switches.
//! Neither framing can escape its separators, so values never contain spaces (PMI-1),
//! semicolons (PMI-2) or newlines.
#![forbid(unsafe_code)]

use crate::PmiError;

/// Longest PMI-1 line accepted, newline excluded.
pub const MAX_LINE: usize = 64 * 1024;

/// Longest PMI-2 body: the length field has six decimal digits.
pub const MAX_V2_BODY: usize = 999_999;

/// Width of the PMI-2 length field.
const V2_HEADER: usize = 6;

/// Which of the two framings a connection currently uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Framing {
    /// Newline-terminated `key=value` fields separated by spaces.
    V1,
    /// Length-prefixed `key=value;` fields.
    V2,
}

/// One PMI message: a command name and its ordered `key=value` fields.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Message {
    /// The command, the value of the leading `cmd=` field.
    pub cmd: String,
    /// The remaining fields, in wire order.
    pub pairs: Vec<(String, String)>,
}

impl Message {
    /// A message with no fields besides `cmd`.
    pub fn new(cmd: &str) -> Self {
        Message {
            cmd: cmd.to_string(),
            pairs: Vec::new(),
        }
    }

    /// Appends a field and returns the message (builder style).
    pub fn with(mut self, key: &str, value: impl ToString) -> Self {
        self.pairs.push((key.to_string(), value.to_string()));
        self
    }

    /// The value of the first field named `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// Encodes in the given framing.
    pub fn encode(&self, framing: Framing) -> Result<Vec<u8>, PmiError> {
        match framing {
            Framing::V1 => self.encode_v1(),
            Framing::V2 => self.encode_v2(),
        }
    }

    /// Encodes as one PMI-1 line, newline included.
    pub fn encode_v1(&self) -> Result<Vec<u8>, PmiError> {
        self.check_fields(&[' ', '\n'])?;
        let mut line = format!("cmd={}", self.cmd);
        for (k, v) in &self.pairs {
            line.push(' ');
            line.push_str(k);
            line.push('=');
            line.push_str(v);
        }
        if line.len() > MAX_LINE {
            return Err(PmiError::malformed("PMI-1 message", "line too long"));
        }
        line.push('\n');
        Ok(line.into_bytes())
    }

    /// Encodes as one PMI-2 message, length header included.
    pub fn encode_v2(&self) -> Result<Vec<u8>, PmiError> {
        self.check_fields(&[';', '\n'])?;
        let mut body = format!("cmd={};", self.cmd);
        for (k, v) in &self.pairs {
            body.push_str(k);
            body.push('=');
            body.push_str(v);
            body.push(';');
        }
        if body.len() > MAX_V2_BODY {
            return Err(PmiError::malformed("PMI-2 message", "body too long"));
        }
        Ok(format!("{:<width$}{body}", body.len(), width = V2_HEADER).into_bytes())
    }

    /// Refuses fields that the framing could not carry unambiguously.
    fn check_fields(&self, separators: &[char]) -> Result<(), PmiError> {
        let bad = |s: &str| s.contains(separators);
        if self.cmd.is_empty() || bad(&self.cmd) || self.cmd.contains('=') {
            return Err(PmiError::malformed("PMI message", "unusable command name"));
        }
        for (k, v) in &self.pairs {
            if k.is_empty() || bad(k) || k.contains('=') {
                return Err(PmiError::malformed(
                    "PMI message",
                    format!("unusable key {k:?}"),
                ));
            }
            if bad(v) {
                return Err(PmiError::malformed(
                    "PMI message",
                    format!("value of {k} contains a separator"),
                ));
            }
        }
        Ok(())
    }

    /// Parses one PMI-1 line (the trailing newline may be present or not).
    pub fn parse_v1(line: &str) -> Result<Message, PmiError> {
        let line = line.strip_suffix('\n').unwrap_or(line);
        let line = line.strip_suffix('\r').unwrap_or(line);
        Self::from_fields(line.split(' ').filter(|f| !f.is_empty()), "PMI-1 message")
    }

    /// Parses one PMI-2 body (without its length header).
    pub fn parse_v2(body: &str) -> Result<Message, PmiError> {
        Self::from_fields(body.split(';').filter(|f| !f.is_empty()), "PMI-2 message")
    }

    /// Builds a message from `key=value` fields, the first of which must be `cmd`.
    fn from_fields<'a>(
        mut fields: impl Iterator<Item = &'a str>,
        what: &'static str,
    ) -> Result<Message, PmiError> {
        let split = |field: &'a str| {
            field
                .split_once('=')
                .filter(|(k, _)| !k.is_empty())
                .ok_or_else(|| {
                    PmiError::malformed(what, format!("field {field:?} is not key=value"))
                })
        };
        let first = fields
            .next()
            .ok_or_else(|| PmiError::malformed(what, "empty message"))?;
        let (key, cmd) = split(first)?;
        if key != "cmd" || cmd.is_empty() {
            return Err(PmiError::malformed(what, "it does not start with cmd=NAME"));
        }
        let pairs = fields
            .map(|f| split(f).map(|(k, v)| (k.to_string(), v.to_string())))
            .collect::<Result<_, _>>()?;
        Ok(Message {
            cmd: cmd.to_string(),
            pairs,
        })
    }
}

/// Cuts a byte stream into messages, for either side of a connection.
#[derive(Debug)]
pub struct Decoder {
    buf: Vec<u8>,
    framing: Framing,
}

impl Decoder {
    /// A decoder that starts in `framing` (connections start in [`Framing::V1`]).
    pub fn new(framing: Framing) -> Self {
        Decoder {
            buf: Vec::new(),
            framing,
        }
    }

    /// The framing used for the next message.
    pub fn framing(&self) -> Framing {
        self.framing
    }

    /// Switches the framing for the messages not decoded yet.
    pub fn set_framing(&mut self, framing: Framing) {
        self.framing = framing;
    }

    /// Appends received bytes.
    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// The next complete message, `Ok(None)` when more bytes are needed.
    pub fn next_message(&mut self) -> Result<Option<Message>, PmiError> {
        match self.framing {
            Framing::V1 => self.next_v1(),
            Framing::V2 => self.next_v2(),
        }
    }

    fn next_v1(&mut self) -> Result<Option<Message>, PmiError> {
        let Some(end) = self.buf.iter().position(|&b| b == b'\n') else {
            if self.buf.len() > MAX_LINE {
                return Err(PmiError::malformed("PMI-1 message", "line too long"));
            }
            return Ok(None);
        };
        let line: Vec<u8> = self.buf.drain(..=end).collect();
        let text = text_of(&line[..end], "PMI-1 message")?;
        Message::parse_v1(text).map(Some)
    }

    fn next_v2(&mut self) -> Result<Option<Message>, PmiError> {
        if self.buf.len() < V2_HEADER {
            return Ok(None);
        }
        let header = text_of(&self.buf[..V2_HEADER], "PMI-2 length")?;
        let len: usize = header.trim_matches(' ').parse().map_err(|_| {
            PmiError::malformed("PMI-2 length", format!("{header:?} is not a length"))
        })?;
        if self.buf.len() < V2_HEADER + len {
            return Ok(None);
        }
        let frame: Vec<u8> = self.buf.drain(..V2_HEADER + len).collect();
        let body = text_of(&frame[V2_HEADER..], "PMI-2 message")?;
        Message::parse_v2(body).map(Some)
    }
}

/// The bytes as UTF-8 text, or a `Malformed` error naming `what`.
fn text_of<'a>(bytes: &'a [u8], what: &'static str) -> Result<&'a str, PmiError> {
    std::str::from_utf8(bytes).map_err(|_| PmiError::malformed(what, "not UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Message {
        Message::new("put")
            .with("kvsname", "kvs_1")
            .with("key", "a")
            .with("value", "x=y")
    }

    #[test]
    fn v1_round_trip() {
        let bytes = sample().encode_v1().unwrap();
        assert_eq!(bytes, b"cmd=put kvsname=kvs_1 key=a value=x=y\n");
        let mut d = Decoder::new(Framing::V1);
        d.push(&bytes);
        assert_eq!(d.next_message().unwrap(), Some(sample()));
        assert_eq!(d.next_message().unwrap(), None);
    }

    #[test]
    fn v2_round_trip() {
        let bytes = sample().encode_v2().unwrap();
        assert_eq!(&bytes[..6], b"38    ");
        assert_eq!(&bytes[6..], b"cmd=put;kvsname=kvs_1;key=a;value=x=y;");
        let mut d = Decoder::new(Framing::V2);
        d.push(&bytes);
        assert_eq!(d.next_message().unwrap(), Some(sample()));
    }

    #[test]
    fn v2_accepts_either_padding_and_split_delivery() {
        let body = b"cmd=kvs-fence-response;rc=0;";
        let mut d = Decoder::new(Framing::V2);
        let header = format!("{:>6}", body.len());
        d.push(header.as_bytes());
        assert_eq!(d.next_message().unwrap(), None);
        d.push(&body[..5]);
        assert_eq!(d.next_message().unwrap(), None);
        d.push(&body[5..]);
        let m = d.next_message().unwrap().unwrap();
        assert_eq!(m.cmd, "kvs-fence-response");
        assert_eq!(m.get("rc"), Some("0"));
        assert_eq!(d.next_message().unwrap(), None);
    }

    #[test]
    fn v1_tolerates_repeated_spaces_and_cr() {
        let m = Message::parse_v1("cmd=barrier_out  tag=0 \r\n").unwrap();
        assert_eq!(m.cmd, "barrier_out");
        assert_eq!(m.get("tag"), Some("0"));
        assert_eq!(m.get("rc"), None);
    }

    #[test]
    fn empty_values_parse() {
        let m = Message::parse_v1("cmd=initack rank=0 debug=").unwrap();
        assert_eq!(m.get("debug"), Some(""));
    }

    #[test]
    fn framing_switch_keeps_buffered_bytes() {
        let mut d = Decoder::new(Framing::V1);
        let mut bytes = Message::new("init")
            .with("pmi_version", 2)
            .encode_v1()
            .unwrap();
        bytes.extend(Message::new("fullinit").encode_v2().unwrap());
        d.push(&bytes);
        assert_eq!(d.next_message().unwrap().unwrap().cmd, "init");
        d.set_framing(Framing::V2);
        assert_eq!(d.next_message().unwrap().unwrap().cmd, "fullinit");
    }

    #[test]
    fn malformed_input_is_an_error() {
        for bad in ["", "key=value", "cmd=", "cmd=put junk", "cmd=put =x", "   "] {
            assert!(Message::parse_v1(bad).is_err(), "{bad:?}");
        }
        for bad in ["", "cmd=;", "x=y;cmd=a;", "cmd=a;novalue;"] {
            assert!(Message::parse_v2(bad).is_err(), "{bad:?}");
        }
        let mut d = Decoder::new(Framing::V2);
        d.push(b"abcdefcmd=x;");
        assert!(d.next_message().is_err());
        let mut d = Decoder::new(Framing::V1);
        d.push(&[0xff, 0xfe, b'\n']);
        assert!(d.next_message().is_err());
        let mut d = Decoder::new(Framing::V1);
        d.push(&vec![b'a'; MAX_LINE + 1]);
        assert!(d.next_message().is_err());
    }

    #[test]
    fn unencodable_fields_are_refused() {
        assert!(Message::new("put").with("key", "a b").encode_v1().is_err());
        assert!(Message::new("put").with("key", "a;b").encode_v2().is_err());
        assert!(Message::new("put").with("k=", "v").encode_v2().is_err());
        assert!(Message::new("put").with("key", "a;b").encode_v1().is_ok());
        assert!(Message::new("").encode_v1().is_err());
    }
}
