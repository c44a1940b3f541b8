//! The PMI server state machine, free of I/O.
//!
//! The launcher feeds it the bytes each rank sends ([`Server::receive`]) and carries out
//! the [`Event`]s it returns: answers to write back, aborts to act on, protocol errors.
//! The server owns the job's key-value space, its attributes, the node attributes of
//! PMI-2 and the barrier. Each connection picks its version with its first line,
//! `cmd=init pmi_version=N`; PMI-1 and PMI-2 ranks may share one job.
#![forbid(unsafe_code)]

mod v1;
mod v2;

use std::collections::{BTreeMap, BTreeSet};

use crate::wire::{Decoder, Framing, Message};
use crate::{hex_decode, ABORT_MESSAGE_HEX};

/// What a rank's connection has done so far.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeerState {
    /// Nothing usable received yet.
    Silent,
    /// Initialized (`cmd=init`) and not finalized.
    Active,
    /// Sent `finalize`.
    Finalized,
    /// Sent `abort`.
    Aborted,
    /// Sent bytes that are not PMI; nothing more is read from it.
    Broken,
}

/// Something the launcher must do on behalf of the server.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Event {
    /// Write `bytes` to `rank`'s connection.
    Send {
        /// The destination rank.
        rank: u32,
        /// One or more encoded messages.
        bytes: Vec<u8>,
    },
    /// `rank` asked to end the job.
    Abort {
        /// The rank that called abort.
        rank: u32,
        /// The exit code it asked for.
        exit_code: i32,
        /// Its explanation.
        message: String,
    },
    /// `rank` sent something that is not PMI.
    ProtocolError {
        /// The offending rank.
        rank: u32,
        /// What was wrong.
        reason: String,
    },
}

/// One rank's connection state.
#[derive(Debug)]
struct Peer {
    decoder: Decoder,
    state: PeerState,
}

/// The PMI server of one job.
#[derive(Debug)]
pub struct Server {
    kvsname: String,
    appnums: Vec<i32>,
    kvs: BTreeMap<String, String>,
    job_attrs: BTreeMap<String, String>,
    node_attrs: BTreeMap<String, String>,
    node_waiters: Vec<(u32, String)>,
    peers: Vec<Peer>,
    barrier: BTreeSet<u32>,
}

impl Server {
    /// A server for a single-node job `kvsname` of `size` ranks, all of application 0.
    ///
    /// `PMI_process_mapping` is `(vector,(0,1,size))` and `universeSize` is `size`.
    pub fn new(kvsname: &str, size: u32) -> Server {
        let mut job_attrs = BTreeMap::new();
        job_attrs.insert(
            "PMI_process_mapping".to_string(),
            format!("(vector,(0,1,{size}))"),
        );
        job_attrs.insert("universeSize".to_string(), size.to_string());
        Server {
            kvsname: kvsname.to_string(),
            appnums: vec![0; size as usize],
            kvs: BTreeMap::new(),
            job_attrs,
            node_attrs: BTreeMap::new(),
            node_waiters: Vec::new(),
            peers: (0..size)
                .map(|_| Peer {
                    decoder: Decoder::new(Framing::V1),
                    state: PeerState::Silent,
                })
                .collect(),
            barrier: BTreeSet::new(),
        }
    }

    /// Sets the application number (MPMD index) of `rank`.
    ///
    /// Panics if `rank` is not below [`size`](Self::size).
    pub fn set_appnum(&mut self, rank: u32, appnum: i32) {
        self.appnums[rank as usize] = appnum;
    }

    /// Adds or replaces a job attribute, visible to PMI-1 `get` and PMI-2
    /// `info-getjobattr` (e.g. [`crate::PSETS_KEY`]).
    pub fn set_job_attr(&mut self, key: &str, value: &str) {
        self.job_attrs.insert(key.to_string(), value.to_string());
    }

    /// The number of ranks.
    pub fn size(&self) -> u32 {
        self.peers.len() as u32
    }

    /// The job's key-value space name.
    pub fn kvsname(&self) -> &str {
        &self.kvsname
    }

    /// What `rank`'s connection has done so far.
    ///
    /// Panics if `rank` is not below [`size`](Self::size).
    pub fn state(&self, rank: u32) -> PeerState {
        self.peers[rank as usize].state
    }

    /// Feeds bytes received from `rank` and returns what to do about them.
    ///
    /// Panics if `rank` is not below [`size`](Self::size).
    pub fn receive(&mut self, rank: u32, bytes: &[u8]) -> Vec<Event> {
        let mut out = Vec::new();
        let peer = &mut self.peers[rank as usize];
        if matches!(peer.state, PeerState::Broken | PeerState::Aborted) {
            return out;
        }
        peer.decoder.push(bytes);
        loop {
            let peer = &mut self.peers[rank as usize];
            match peer.decoder.next_message() {
                Ok(Some(msg)) => self.handle(rank, msg, &mut out),
                Ok(None) => break,
                Err(e) => {
                    peer.state = PeerState::Broken;
                    out.push(Event::ProtocolError {
                        rank,
                        reason: e.to_string(),
                    });
                    break;
                }
            }
            if matches!(self.state(rank), PeerState::Aborted) {
                break;
            }
        }
        out
    }

    /// Dispatches one message to the handler of the connection's version.
    fn handle(&mut self, rank: u32, msg: Message, out: &mut Vec<Event>) {
        let peer = &self.peers[rank as usize];
        if peer.state == PeerState::Silent {
            self.handle_init(rank, &msg, out);
        } else if peer.decoder.framing() == Framing::V1 {
            v1::handle(self, rank, &msg, out);
        } else {
            v2::handle(self, rank, &msg, out);
        }
    }

    /// The first message must be `cmd=init pmi_version=1|2`, answered in PMI-1 framing.
    fn handle_init(&mut self, rank: u32, msg: &Message, out: &mut Vec<Event>) {
        let version = msg.get("pmi_version");
        if msg.cmd != "init" || !matches!(version, Some("1" | "2")) {
            let reason = format!(
                "expected cmd=init pmi_version=1|2 first, got cmd={}",
                msg.cmd
            );
            self.error_reply(rank, msg, &reason, out);
            return;
        }
        let v2 = version == Some("2");
        let subversion = if v2 { "0" } else { "1" };
        let answer = Message::new("response_to_init")
            .with("pmi_version", version.unwrap_or_default())
            .with("pmi_subversion", subversion)
            .with("rc", 0);
        self.send(rank, &answer, out);
        let peer = &mut self.peers[rank as usize];
        peer.state = PeerState::Active;
        if v2 {
            peer.decoder.set_framing(Framing::V2);
        }
    }

    /// Encodes `msg` in `rank`'s framing and queues it.
    fn send(&self, rank: u32, msg: &Message, out: &mut Vec<Event>) {
        let framing = self.peers[rank as usize].decoder.framing();
        match msg.encode(framing) {
            Ok(bytes) => out.push(Event::Send { rank, bytes }),
            Err(e) => out.push(Event::ProtocolError {
                rank,
                reason: format!("cannot answer cmd={}: {e}", msg.cmd),
            }),
        }
    }

    /// Answers a request the server cannot honour, in the version's reply convention.
    fn error_reply(&self, rank: u32, request: &Message, reason: &str, out: &mut Vec<Event>) {
        let v2 = self.peers[rank as usize].decoder.framing() == Framing::V2;
        let (name, text_key) = if v2 {
            (format!("{}-response", request.cmd), "errmsg")
        } else {
            (format!("{}_result", request.cmd), "msg")
        };
        let text: String = reason
            .chars()
            .map(|c| {
                if c.is_whitespace() || c == ';' {
                    '_'
                } else {
                    c
                }
            })
            .collect();
        self.send(
            rank,
            &Message::new(&name).with("rc", -1).with(text_key, text),
            out,
        );
    }

    /// Marks `rank` as in the barrier; releases everyone when the last rank arrives.
    fn enter_barrier(&mut self, rank: u32, request: &Message, out: &mut Vec<Event>) {
        if !self.barrier.insert(rank) {
            self.error_reply(rank, request, "already in the barrier", out);
            return;
        }
        if self.barrier.len() < self.peers.len() {
            return;
        }
        for r in std::mem::take(&mut self.barrier) {
            let answer = match self.peers[r as usize].decoder.framing() {
                Framing::V1 => Message::new("barrier_out").with("rc", 0),
                Framing::V2 => Message::new("kvs-fence-response").with("rc", 0),
            };
            self.send(r, &answer, out);
        }
    }

    /// Records `rank`'s abort request.
    fn abort(&mut self, rank: u32, msg: &Message, out: &mut Vec<Event>) {
        self.peers[rank as usize].state = PeerState::Aborted;
        out.push(Event::Abort {
            rank,
            exit_code: msg
                .get("exitcode")
                .and_then(|c| c.parse().ok())
                .unwrap_or(1),
            message: msg
                .get(ABORT_MESSAGE_HEX)
                .and_then(|h| String::from_utf8(hex_decode(h).ok()?).ok())
                .map(|m| m.trim_end().to_string())
                .or_else(|| {
                    msg.get("message")
                        .or_else(|| msg.get("msg"))
                        .map(String::from)
                })
                .unwrap_or_default(),
        });
    }

    /// Records `rank`'s finalize.
    fn finalize(&mut self, rank: u32) {
        self.peers[rank as usize].state = PeerState::Finalized;
    }
}

/// The value of a required field, or an error reply naming it.
fn required<'m>(
    server: &Server,
    rank: u32,
    msg: &'m Message,
    key: &str,
    out: &mut Vec<Event>,
) -> Option<&'m str> {
    let value = msg.get(key);
    if value.is_none() {
        server.error_reply(rank, msg, &format!("missing {key}="), out);
    }
    value
}

#[cfg(test)]
mod tests;
