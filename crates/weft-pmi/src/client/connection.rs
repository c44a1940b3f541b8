//! One client connection to a PMI server: strict request/answer exchanges.
//!
//! Each request goes out in a single `write()` (Slurm reads each request with one
//! `read()`), and a new request is only sent once the previous answer has arrived.
#![forbid(unsafe_code)]

use std::io::{self, Read, Write};
use std::net::TcpStream;
use std::os::unix::net::UnixStream;

use crate::wire::{Decoder, Framing, Message};
use crate::PmiError;

/// The socket under a connection: inherited (`PMI_FD`) or dialled (`PMI_PORT`).
#[derive(Debug)]
pub(crate) enum Stream {
    /// An `AF_UNIX` stream socket.
    Unix(UnixStream),
    /// A TCP connection to Hydra's `-pmi-port` listener.
    Tcp(TcpStream),
}

impl Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Unix(s) => s.read(buf),
            Stream::Tcp(s) => s.read(buf),
        }
    }

    fn write_all(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self {
            Stream::Unix(s) => s.write_all(bytes),
            Stream::Tcp(s) => s.write_all(bytes),
        }
    }
}

/// A framed, strictly sequential PMI conversation.
#[derive(Debug)]
pub(crate) struct Connection {
    stream: Stream,
    decoder: Decoder,
}

impl Connection {
    /// A connection that starts with the PMI-1 framing, as every connection does.
    pub(crate) fn new(stream: Stream) -> Self {
        Connection {
            stream,
            decoder: Decoder::new(Framing::V1),
        }
    }

    /// Switches both directions to `framing` (after a PMI-2 `init`).
    pub(crate) fn set_framing(&mut self, framing: Framing) {
        self.decoder.set_framing(framing);
    }

    /// Sends `msg` without waiting for an answer.
    pub(crate) fn send(&mut self, msg: &Message) -> Result<(), PmiError> {
        let bytes = msg
            .encode(self.decoder.framing())
            .map_err(|e| PmiError::InvalidArgument {
                cmd: msg.cmd.clone(),
                reason: e.to_string(),
            })?;
        self.stream
            .write_all(&bytes)
            .map_err(|source| PmiError::Io {
                cmd: msg.cmd.clone(),
                source,
            })
    }

    /// Sends `msg` and returns the answer, which must be the command `reply`.
    pub(crate) fn request(&mut self, msg: &Message, reply: &str) -> Result<Message, PmiError> {
        self.send(msg)?;
        self.receive(&msg.cmd, reply)
    }

    /// Like [`request`](Self::request), but a non-zero `rc` in the answer is an error.
    pub(crate) fn request_ok(&mut self, msg: &Message, reply: &str) -> Result<Message, PmiError> {
        let answer = self.request(msg, reply)?;
        match answer.get("rc").map(str::parse::<i64>) {
            None | Some(Ok(0)) => Ok(answer),
            Some(Ok(rc)) => Err(PmiError::Rejected {
                cmd: msg.cmd.clone(),
                rc,
                message: answer
                    .get("errmsg")
                    .or_else(|| answer.get("msg"))
                    .unwrap_or_default()
                    .to_string(),
            }),
            Some(Err(_)) => Err(PmiError::protocol(&msg.cmd, "non-numeric rc")),
        }
    }

    /// Reads the next message, which must be the command `reply`; `cmd` names the request
    /// in errors.
    pub(crate) fn receive(&mut self, cmd: &str, reply: &str) -> Result<Message, PmiError> {
        let mut buf = [0u8; 4096];
        loop {
            let decoded = self
                .decoder
                .next_message()
                .map_err(|e| PmiError::protocol(cmd, e.to_string()))?;
            if let Some(answer) = decoded {
                if answer.cmd != reply {
                    return Err(PmiError::protocol(
                        cmd,
                        format!("expected cmd={reply}, got cmd={}", answer.cmd),
                    ));
                }
                return Ok(answer);
            }
            match self.stream.read(&mut buf) {
                Ok(0) => {
                    return Err(PmiError::Closed {
                        cmd: cmd.to_string(),
                    })
                }
                Ok(n) => self.decoder.push(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    return Err(PmiError::Io {
                        cmd: cmd.to_string(),
                        source,
                    })
                }
            }
        }
    }
}
