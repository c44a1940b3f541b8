//! PMI-1 commands, one newline-terminated line each.
#![forbid(unsafe_code)]

use super::{required, Event, Server};
use crate::wire::Message;

/// Handles one PMI-1 request from `rank` (after its `init`).
pub(super) fn handle(server: &mut Server, rank: u32, msg: &Message, out: &mut Vec<Event>) {
    let answer = match msg.cmd.as_str() {
        "get_maxes" => Message::new("maxes")
            .with("rc", 0)
            .with("kvsname_max", 256)
            .with("keylen_max", 64)
            .with("vallen_max", 1024),
        "get_appnum" => Message::new("appnum")
            .with("rc", 0)
            .with("appnum", server.appnums[rank as usize]),
        "get_universe_size" => Message::new("universe_size")
            .with("rc", 0)
            .with("size", server.size()),
        "get_my_kvsname" => Message::new("my_kvsname")
            .with("rc", 0)
            .with("kvsname", &server.kvsname),
        "put" => {
            let Some(key) = required(server, rank, msg, "key", out) else {
                return;
            };
            let value = msg.get("value").unwrap_or_default();
            server.kvs.insert(key.to_string(), value.to_string());
            Message::new("put_result").with("rc", 0)
        }
        "get" => {
            let Some(key) = required(server, rank, msg, "key", out) else {
                return;
            };
            match server.kvs.get(key).or_else(|| server.job_attrs.get(key)) {
                Some(value) => Message::new("get_result")
                    .with("rc", 0)
                    .with("value", value),
                None => Message::new("get_result")
                    .with("rc", 1)
                    .with("msg", "key_not_found"),
            }
        }
        "barrier_in" => return server.enter_barrier(rank, msg, out),
        "finalize" => {
            server.finalize(rank);
            Message::new("finalize_ack").with("rc", 0)
        }
        "abort" => return server.abort(rank, msg, out),
        other => return server.error_reply(rank, msg, &format!("unknown command {other}"), out),
    };
    server.send(rank, &answer, out);
}
