//! The collective half of `MPI_Comm_accept`/`MPI_Comm_connect`/`MPI_Comm_join` (and so of
//! `MPI_Comm_spawn`): two groups whose roots hold the two ends of a byte stream (a socket)
//! become an intercommunicator.
//!
//! 1. The roots swap *hellos* over the stream: the settings their jobs must share
//!    (`agreed_settings`: the ring geometry and VCI count, since the processes push into each
//!    other's rings, and the collective algorithms; a difference fails the connection with a
//!    message naming each differing setting) and the name of every member of their group
//!    (`ProcName`: job and rank there). Each root broadcasts
//!    what it received (or why it failed) to its group.
//! 2. Every member connects to every process of the other group (`Instance::connect_process`:
//!    the rings both ways for a process of another job; nothing for one of its own job) and
//!    the two groups AND together whether all succeeded: the members reduce in their group,
//!    the roots swap the result over the stream, and each root broadcasts the AND.
//! 3. The context id is agreed the same way (`context_id::agree` over that two-level AND),
//!    with a key both sides compute alike.
//!
//! Only the roots touch the stream; each writes before it reads, in messages far below a
//! socket's buffer, so the swap cannot deadlock.
#![forbid(unsafe_code)]

use std::io::{Read, Write};
use std::sync::Arc;

use super::comm::{key, sub_key};
use super::context_id;
use super::exchange::{self, bytes_to_words, tag, words_to_bytes, Channel};
use super::{Comm, Group};
use crate::config::Config;
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::transport::shm::foreign::ProcName;

/// A byte stream to the other group's root.
pub trait Link: Read + Write {}
impl<T: Read + Write> Link for T {}

/// The hello's first bytes.
const MAGIC: &[u8; 8] = b"WEFTCON2";
/// The first bytes of a hello that says the other group will not come (a spawned job that
/// failed to start; `runtime::spawn`), followed by why.
pub const FAILED_MAGIC: &[u8; 8] = b"WEFTFAIL";
/// Largest hello accepted (names of up to ~10^5 processes).
const MAX_HELLO: usize = 16 << 20;

/// The root's link: the stream, or why there is none (the other group never came).
pub type RootLink<'a> = Result<&'a mut dyn Link, MpiError>;

/// Build the intercommunicator between `local` (an intracommunicator) and the group whose
/// root is at the other end of `link`, which only `local`'s `root` passes.
pub fn handshake(
    local: &Comm,
    root: u32,
    link: Option<RootLink<'_>>,
    func: &str,
) -> MpiResult<Arc<Comm>> {
    let inst = &local.session.instance;
    let ch = Channel::local(local);
    let members = exchange::all(local.size());
    let me = local.rank as usize;
    let root_i = root as usize;
    let is_root = link.is_some();
    let (mut stream, failure) = match link {
        None => (None, None),
        Some(Ok(stream)) => (Some(stream), None),
        Some(Err(e)) => (None, Some(e)),
    };
    // 1. Hellos.
    let mut packet = Vec::new();
    if is_root {
        let reply = match (failure, stream.as_deref_mut()) {
            (Some(e), _) => Err(e),
            (None, Some(stream)) => swap_hellos(local, stream, func),
            (None, None) => unreachable!("a root has a stream or a failure"),
        };
        packet = encode_outcome(reply.as_ref());
    }
    let mut len = (packet.len() as u64).to_le_bytes();
    ch.bcast(&members, me, root_i, tag::CONNECT, &mut len)?;
    packet.resize(u64::from_le_bytes(len) as usize, 0);
    ch.bcast(&members, me, root_i, tag::CONNECT, &mut packet)?;
    let names = decode_outcome(&packet, func)?;
    // 2. Connect to every remote process; all must succeed.
    let mut both = TwoGroups {
        ch,
        members,
        me,
        root: root_i,
        stream,
        func,
    };
    let remote = inst.connect_all(&names, func, |w| both.and(w))?;
    if remote.iter().any(|&p| local.group.contains(p)) {
        return Err(MpiError::new(
            ErrorClass::Comm,
            format!("{func}: the local and remote groups overlap"),
        ));
    }
    // 3. The context id.
    let k = key(u32::MAX, sub_key::COLLECTIVE);
    let ctx = context_id::agree(k, func, |words| both.and(words), || exchange::pause(inst))?;
    Ok(Comm::inter(local, Group::new(remote), ctx))
}

/// An AND over both groups: within each group, then between the roots over the stream.
struct TwoGroups<'a, 's> {
    ch: Channel<'a>,
    members: Vec<u32>,
    me: usize,
    root: usize,
    stream: Option<&'s mut dyn Link>,
    func: &'a str,
}

impl TwoGroups<'_, '_> {
    fn and(&mut self, words: &mut [u64]) -> MpiResult<()> {
        self.ch
            .allreduce_and(&self.members, self.me, tag::CONNECT, words)?;
        let mut bytes = words_to_bytes(words);
        if let Some(stream) = self.stream.as_mut() {
            let mut theirs = vec![0u8; bytes.len()];
            let io = stream
                .write_all(&bytes)
                .and_then(|()| stream.flush())
                .and_then(|()| stream.read_exact(&mut theirs));
            if let Err(e) = io {
                // The other root is gone: nothing more can be agreed; zeros make every
                // member of this group fail below (a hang is not an option).
                eprintln!(
                    "Weft: {}: the other group's root went away ({e})",
                    self.func
                );
                theirs.iter_mut().for_each(|b| *b = 0);
                bytes.iter_mut().for_each(|b| *b = 0);
            }
            for (a, b) in bytes.iter_mut().zip(&theirs) {
                *a &= *b;
            }
        }
        self.ch
            .bcast(&self.members, self.me, self.root, tag::CONNECT, &mut bytes)?;
        bytes_to_words(&bytes, words);
        Ok(())
    }
}

/// Write this group's hello, read the other's; the other group's member names.
fn swap_hellos(local: &Comm, stream: &mut dyn Link, func: &str) -> MpiResult<Vec<ProcName>> {
    let inst = &local.session.instance;
    let mut hello = Vec::new();
    hello.extend_from_slice(MAGIC);
    let settings = agreed_settings(&inst.config);
    hello.extend_from_slice(&(settings.len() as u32).to_le_bytes());
    hello.extend_from_slice(settings.as_bytes());
    hello.extend_from_slice(&inst.encode_names(local.group.members(), func)?);
    let lost = |e: std::io::Error| {
        MpiError::new(
            ErrorClass::Port,
            format!("{func}: the connection to the other group's root failed ({e})"),
        )
    };
    // A failure of the write is reported after the read: the other end may have said why
    // it will not come (a spawned job that failed, which closes its end right away).
    let wrote = stream
        .write_all(&(hello.len() as u64).to_le_bytes())
        .and_then(|()| stream.write_all(&hello))
        .and_then(|()| stream.flush());
    let mut len = [0u8; 8];
    stream.read_exact(&mut len).map_err(lost)?;
    let len = u64::from_le_bytes(len) as usize;
    if len > MAX_HELLO {
        return Err(bad(func, "hello too large"));
    }
    let mut theirs = vec![0u8; len];
    stream.read_exact(&mut theirs).map_err(lost)?;
    if theirs.starts_with(FAILED_MAGIC) {
        return Err(MpiError::new(
            ErrorClass::Spawn,
            format!("{func}: {}", String::from_utf8_lossy(&theirs[8..])),
        ));
    }
    wrote.map_err(lost)?;
    let mut r = Reader(&theirs);
    if r.take(MAGIC.len()) != Some(&MAGIC[..]) {
        return Err(bad(func, "the other end is not a Weft process"));
    }
    let theirs_settings = r
        .u32()
        .and_then(|n| r.take(n as usize))
        .ok_or_else(|| bad(func, "truncated hello"))?;
    let differ = differing_settings(&settings, &String::from_utf8_lossy(theirs_settings));
    if !differ.is_empty() {
        return Err(MpiError::new(
            ErrorClass::Other,
            format!(
                "{func}: the two jobs run with different settings ({}); jobs that connect must use the same values of these settings",
                differ.join("; ")
            ),
        ));
    }
    decode_names(r.0, func)
}

/// The settings that processes of two jobs must share to talk (the rings' geometry and
/// the VCIs a communicator's context maps to) or to run collectives together (every
/// member must choose the same algorithm), one `NAME=value` per line.
fn agreed_settings(config: &Config) -> String {
    let coll = &config.coll;
    [
        ("WEFT_SHM_CELLS", config.shm_cells.to_string()),
        ("WEFT_SHM_CELL_SIZE", config.shm_cell_size.to_string()),
        ("WEFT_NUM_VCIS", config.num_vcis.to_string()),
        ("WEFT_COLL_SHM_MAX", coll.shm_max.to_string()),
        ("WEFT_COLL_SHM_STREAM_MAX", coll.shm_stream_max.to_string()),
        ("WEFT_COLL_BARRIER", format!("{:?}", coll.barrier)),
        ("WEFT_COLL_BCAST", format!("{:?}", coll.bcast)),
        ("WEFT_COLL_REDUCE", format!("{:?}", coll.reduce)),
        ("WEFT_COLL_ALLREDUCE", format!("{:?}", coll.allreduce)),
        ("WEFT_COLL_ALLGATHER", format!("{:?}", coll.allgather)),
        ("WEFT_COLL_ALLTOALL", format!("{:?}", coll.alltoall)),
        ("WEFT_COLL_GATHER", format!("{:?}", coll.gather)),
        ("WEFT_COLL_SCAN", format!("{:?}", coll.scan)),
        (
            "WEFT_COLL_REDUCE_SCATTER",
            format!("{:?}", coll.reduce_scatter),
        ),
    ]
    .iter()
    .map(|(name, value)| format!("{name}={}\n", snake_case(value)))
    .collect()
}

/// `RecursiveDoubling` as its setting spells it: `recursive_doubling`.
fn snake_case(value: &str) -> String {
    let mut out = String::new();
    for (i, c) in value.chars().enumerate() {
        if c.is_ascii_uppercase() && i > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

/// The settings of `mine` whose values `theirs` does not share, as
/// `NAME=<this job's> here, <the other's> in the other job`.
fn differing_settings(mine: &str, theirs: &str) -> Vec<String> {
    let value_in = |text: &str, name: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix('='))
            .map(str::to_owned)
    };
    mine.lines()
        .filter_map(|line| {
            let (name, value) = line.split_once('=')?;
            let other = value_in(theirs, name).unwrap_or_else(|| "(unknown)".into());
            (other != value).then(|| format!("{name}={value} here, {other} in the other job"))
        })
        .collect()
}

fn bad(func: &str, what: &str) -> MpiError {
    MpiError::new(
        ErrorClass::Port,
        format!("{func}: bad handshake from the other group's root: {what}"),
    )
}

/// The names `ProcName::encode_all` wrote, which must fill `bytes`.
fn decode_names(bytes: &[u8], func: &str) -> MpiResult<Vec<ProcName>> {
    match ProcName::decode_all(bytes) {
        Some((names, [])) => Ok(names),
        _ => Err(bad(func, "truncated names")),
    }
}

/// What the root broadcasts after the hellos: 0 and the names, or 1, the class and why.
fn encode_outcome(outcome: Result<&Vec<ProcName>, &MpiError>) -> Vec<u8> {
    let mut out = Vec::new();
    match outcome {
        Ok(names) => {
            out.push(0);
            ProcName::encode_all(names, &mut out);
        }
        Err(e) => {
            out.push(1);
            out.extend_from_slice(&e.code.to_le_bytes());
            out.extend_from_slice(e.message.as_bytes());
        }
    }
    out
}

fn decode_outcome(bytes: &[u8], func: &str) -> MpiResult<Vec<ProcName>> {
    let mut r = Reader(bytes);
    match r.take(1) {
        Some([0]) => decode_names(r.0, func),
        _ => {
            let code = r.u32().map_or(ErrorClass::Other as i32, |c| c as i32);
            Err(MpiError {
                code,
                message: String::from_utf8_lossy(r.0).into_owned(),
            })
        }
    }
}

/// Reads little-endian fields off a byte slice.
struct Reader<'b>(&'b [u8]);

impl<'b> Reader<'b> {
    fn take(&mut self, n: usize) -> Option<&'b [u8]> {
        if self.0.len() < n {
            return None;
        }
        let (head, rest) = self.0.split_at(n);
        self.0 = rest;
        Some(head)
    }

    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_le_bytes(self.take(4)?.try_into().ok()?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_differing_setting_is_named_with_both_values() {
        let mine = agreed_settings(&Config::default());
        assert!(differing_settings(&mine, &mine).is_empty());
        let lookup = |name: &str| {
            let v = match name {
                "WEFT_SHM_CELLS" => "128",
                "WEFT_COLL_ALLREDUCE" => "recursive_doubling",
                _ => return None,
            };
            Some(v.to_string())
        };
        let theirs = agreed_settings(&Config::from_lookup(lookup).expect("valid"));
        assert_eq!(
            differing_settings(&mine, &theirs),
            [
                "WEFT_SHM_CELLS=64 here, 128 in the other job",
                "WEFT_COLL_ALLREDUCE=auto here, recursive_doubling in the other job",
            ]
        );
        assert_eq!(
            differing_settings("WEFT_NUM_VCIS=2\n", ""),
            ["WEFT_NUM_VCIS=2 here, (unknown) in the other job"]
        );
    }
}
