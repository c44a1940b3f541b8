//! The collective half of `MPI_Comm_accept`/`MPI_Comm_connect`/`MPI_Comm_join` (and so of
//! `MPI_Comm_spawn`): two groups whose roots hold the two ends of a byte stream (a socket)
//! become an intercommunicator.
//!
//! 1. The roots swap *hellos* over the stream: the ring geometry and VCI count of their job
//!    (which must agree, since the processes push into each other's rings) and the name of
//!    every member of their group (`ProcName`: job and rank there). Each root broadcasts
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

use super::comm::{key, sub_key, Spec};
use super::context_id;
use super::exchange::{self, bytes_to_words, tag, words_to_bytes, Channel};
use super::{Comm, CommKind, Group};
use crate::error::{ErrorClass, MpiError, MpiResult};
use crate::transport::shm::foreign::ProcName;

/// A byte stream to the other group's root.
pub trait Link: Read + Write {}
impl<T: Read + Write> Link for T {}

/// The hello's first bytes.
const MAGIC: &[u8; 8] = b"WEFTCON1";
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
    let mut remote = Vec::with_capacity(names.len());
    let mut trouble = None;
    for name in &names {
        match inst.connect_process(name) {
            Ok(id) => remote.push(id),
            Err(e) => {
                trouble = Some(e);
                break;
            }
        }
    }
    let mut both = TwoGroups {
        ch,
        members,
        me,
        root: root_i,
        stream,
        func,
    };
    let mut ok = [trouble.is_none() as u64];
    both.and(&mut ok)?;
    if let Some(e) = trouble {
        return Err(MpiError {
            code: e.code,
            message: format!("{func}: {}", e.message),
        });
    }
    if ok[0] == 0 {
        return Err(MpiError::new(
            ErrorClass::Other,
            format!("{func}: a process of one of the groups could not reach the other group"),
        ));
    }
    if remote.iter().any(|&p| local.group.contains(p)) {
        return Err(MpiError::new(
            ErrorClass::Comm,
            format!("{func}: the local and remote groups overlap"),
        ));
    }
    // 3. The context id.
    let k = key(u32::MAX, sub_key::COLLECTIVE);
    let ctx = context_id::agree(k, func, |words| both.and(words), || exchange::pause(inst))?;
    Ok(Arc::new(Comm::derived(
        local,
        Spec {
            kind: CommKind::Inter,
            group: local.group.clone(),
            rank: local.rank,
            remote: Some(Group::new(remote)),
            topo: None,
        },
        ctx,
    )))
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
    for v in [
        inst.config.shm_cells as u64,
        inst.config.shm_cell_size as u64,
        inst.config.num_vcis as u64,
        local.size() as u64,
    ] {
        hello.extend_from_slice(&v.to_le_bytes());
    }
    for &p in local.group.members() {
        let name = inst.proc_name(p).ok_or_else(|| {
            MpiError::new(
                ErrorClass::Intern,
                format!("{func}: process {p} of the group has no name"),
            )
        })?;
        put_name(&mut hello, &name);
    }
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
    let (cells, cell_size, nvcis, n) = (r.u64(), r.u64(), r.u64(), r.u64());
    let mine = &hello[8..32];
    if theirs.get(8..32) != Some(mine) {
        return Err(MpiError::new(
            ErrorClass::Other,
            format!(
                "{func}: the other job runs with WEFT_SHM_CELLS={cells:?}, WEFT_SHM_CELL_SIZE={cell_size:?}, WEFT_NUM_VCIS={nvcis:?}; both jobs must use the same values"
            ),
        ));
    }
    let n = n.ok_or_else(|| bad(func, "truncated hello"))? as usize;
    (0..n)
        .map(|_| get_name(&mut r).ok_or_else(|| bad(func, "truncated hello")))
        .collect()
}

fn bad(func: &str, what: &str) -> MpiError {
    MpiError::new(
        ErrorClass::Port,
        format!("{func}: bad handshake from the other group's root: {what}"),
    )
}

fn put_name(out: &mut Vec<u8>, name: &ProcName) {
    out.extend_from_slice(&(name.job.len() as u32).to_le_bytes());
    out.extend_from_slice(name.job.as_bytes());
    out.extend_from_slice(&name.rank.to_le_bytes());
}

fn get_name(r: &mut Reader) -> Option<ProcName> {
    let len = r.u32()? as usize;
    let job = String::from_utf8(r.take(len)?.to_vec()).ok()?;
    Some(ProcName {
        job,
        rank: r.u32()?,
    })
}

/// What the root broadcasts after the hellos: 0 and the names, or 1, the class and why.
fn encode_outcome(outcome: Result<&Vec<ProcName>, &MpiError>) -> Vec<u8> {
    let mut out = Vec::new();
    match outcome {
        Ok(names) => {
            out.push(0);
            out.extend_from_slice(&(names.len() as u32).to_le_bytes());
            for n in names {
                put_name(&mut out, n);
            }
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
        Some([0]) => {
            let n = r.u32().unwrap_or(0);
            (0..n)
                .map(|_| get_name(&mut r).ok_or_else(|| bad(func, "truncated names")))
                .collect()
        }
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

    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_le_bytes(self.take(8)?.try_into().ok()?))
    }
}
