//! PMI-2 commands, length-prefixed `cmd=NAME;key=value;...;` messages.
#![forbid(unsafe_code)]

use super::{required, Event, Server};
use crate::wire::Message;

/// Handles one PMI-2 request from `rank` (after its `init`).
pub(super) fn handle(server: &mut Server, rank: u32, msg: &Message, out: &mut Vec<Event>) {
    let answer = match msg.cmd.as_str() {
        "fullinit" => Message::new("fullinit-response")
            .with("pmi-version", 2)
            .with("pmi-subversion", 0)
            .with("rank", rank)
            .with("size", server.size())
            .with("appnum", server.appnums[rank as usize])
            .with("debugged", "FALSE")
            .with("pmiverbose", "FALSE")
            .with("rc", 0),
        "job-getid" => Message::new("job-getid-response")
            .with("jobid", &server.kvsname)
            .with("rc", 0),
        "kvs-put" => {
            let Some(key) = required(server, rank, msg, "key", out) else {
                return;
            };
            let Some(value) = required(server, rank, msg, "value", out) else {
                return;
            };
            server.kvs.insert(key.to_string(), value.to_string());
            Message::new("kvs-put-response").with("rc", 0)
        }
        "kvs-get" => {
            let Some(key) = required(server, rank, msg, "key", out) else {
                return;
            };
            found(&msg.cmd, server.kvs.get(key))
        }
        "kvs-fence" => return server.enter_barrier(rank, msg, out),
        "info-getjobattr" => {
            let Some(key) = required(server, rank, msg, "key", out) else {
                return;
            };
            found(&msg.cmd, server.job_attrs.get(key))
        }
        "info-putnodeattr" => return put_node_attr(server, rank, msg, out),
        "info-getnodeattr" => {
            let Some(key) = required(server, rank, msg, "key", out) else {
                return;
            };
            let value = server.node_attrs.get(key);
            if value.is_none()
                && msg
                    .get("wait")
                    .is_some_and(|w| w.eq_ignore_ascii_case("TRUE"))
            {
                server.node_waiters.push((rank, key.to_string()));
                return;
            }
            found(&msg.cmd, value)
        }
        "finalize" => {
            server.finalize(rank);
            Message::new("finalize-response").with("rc", 0)
        }
        "abort" => return server.abort(rank, msg, out),
        other => return server.error_reply(rank, msg, &format!("unknown command {other}"), out),
    };
    server.send(rank, &answer, out);
}

/// Stores a node attribute and answers the ranks waiting for it.
fn put_node_attr(server: &mut Server, rank: u32, msg: &Message, out: &mut Vec<Event>) {
    let Some(key) = required(server, rank, msg, "key", out) else {
        return;
    };
    let Some(value) = required(server, rank, msg, "value", out) else {
        return;
    };
    server.node_attrs.insert(key.to_string(), value.to_string());
    server.send(
        rank,
        &Message::new("info-putnodeattr-response").with("rc", 0),
        out,
    );
    let (ready, waiting) = std::mem::take(&mut server.node_waiters)
        .into_iter()
        .partition(|(_, k)| k == key);
    server.node_waiters = waiting;
    for (waiter, _) in ready {
        server.send(
            waiter,
            &found("info-getnodeattr", Some(&value.to_string())),
            out,
        );
    }
}

/// A `<cmd>-response` saying whether a value was found (and which).
fn found(cmd: &str, value: Option<&String>) -> Message {
    let answer = Message::new(&format!("{cmd}-response"));
    match value {
        Some(v) => answer.with("found", "TRUE").with("value", v).with("rc", 0),
        None => answer.with("found", "FALSE").with("rc", 0),
    }
}
