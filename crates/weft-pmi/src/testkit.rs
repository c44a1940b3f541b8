//! A threaded driver that runs a [`Server`] over socket pairs, for the tests.

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::sync::mpsc;
use std::thread::{self, JoinHandle};

use crate::{Event, Server};

/// What the test server saw besides the answers it sent.
#[derive(Debug, Default)]
pub(crate) struct Outcome {
    /// Abort and protocol-error events, in arrival order.
    pub events: Vec<Event>,
    /// The server, to inspect its final state.
    pub server: Option<Server>,
}

/// Starts `server` on its own thread; returns one client stream per rank and a handle
/// that completes once every client stream is closed.
pub(crate) fn serve(server: Server) -> (Vec<UnixStream>, JoinHandle<Outcome>) {
    let size = server.size();
    let (tx, rx) = mpsc::channel::<(u32, Option<Vec<u8>>)>();
    let mut clients = Vec::new();
    let mut writers = Vec::new();
    for rank in 0..size {
        let (client, mut ours) = UnixStream::pair().unwrap();
        clients.push(client);
        writers.push(ours.try_clone().unwrap());
        let tx = tx.clone();
        thread::spawn(move || {
            let mut buf = [0u8; 512];
            loop {
                match ours.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(n) => tx.send((rank, Some(buf[..n].to_vec()))).unwrap(),
                }
            }
            tx.send((rank, None)).unwrap();
        });
    }
    drop(tx);
    let handle = thread::spawn(move || {
        let mut server = server;
        let mut outcome = Outcome::default();
        let mut open = size;
        while open > 0 {
            let (rank, data) = rx.recv().unwrap();
            let Some(bytes) = data else {
                open -= 1;
                continue;
            };
            for event in server.receive(rank, &bytes) {
                match event {
                    Event::Send { rank, bytes } => {
                        let _ = writers[rank as usize].write_all(&bytes);
                    }
                    other => outcome.events.push(other),
                }
            }
        }
        outcome.server = Some(server);
        outcome
    });
    (clients, handle)
}
