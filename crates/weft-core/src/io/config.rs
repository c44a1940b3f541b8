//! `WEFT_IO_*`: the defaults of MPI-IO's hints (a file's info may override each) and the
//! engine of nonblocking file operations.
#![forbid(unsafe_code)]

use crate::error::{ErrorClass, MpiError, MpiResult};

/// Whether collective accesses aggregate (`romio_cb_read`/`romio_cb_write`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Buffering {
    /// Aggregate when the ranks' accesses interleave in small pieces.
    #[default]
    Auto,
    Enable,
    Disable,
}

impl Buffering {
    pub fn parse(v: &str) -> Option<Buffering> {
        match v.trim().to_ascii_lowercase().as_str() {
            "automatic" | "auto" => Some(Buffering::Auto),
            "enable" | "true" => Some(Buffering::Enable),
            "disable" | "false" => Some(Buffering::Disable),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Buffering::Auto => "automatic",
            Buffering::Enable => "enable",
            Buffering::Disable => "disable",
        }
    }
}

/// How nonblocking file operations reach the kernel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Engine {
    /// io_uring where the kernel allows it, else `Posix`.
    #[default]
    Auto,
    Uring,
    /// `pread`/`pwrite` in slices inside the requests' `poll_fn`.
    Posix,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IoConfig {
    /// Bytes an aggregator handles per round of a collective access (`cb_buffer_size`).
    pub cb_buffer_size: usize,
    /// Aggregators of a collective access; 0: every rank (`cb_nodes`).
    pub cb_nodes: usize,
    pub cb_read: Buffering,
    pub cb_write: Buffering,
    pub engine: Engine,
    /// Kernel worker threads io_uring may run per process for file I/O (0: the kernel's
    /// default).
    pub uring_workers: u32,
}

pub const CB_BUFFER_SIZE_DEFAULT: usize = 16 << 20;

impl Default for IoConfig {
    fn default() -> IoConfig {
        IoConfig {
            cb_buffer_size: CB_BUFFER_SIZE_DEFAULT,
            cb_nodes: 0,
            cb_read: Buffering::Auto,
            cb_write: Buffering::Auto,
            engine: Engine::Auto,
            uring_workers: 1,
        }
    }
}

fn bad(name: &str, value: &str, expected: &str) -> MpiError {
    MpiError::new(
        ErrorClass::Arg,
        format!("{name}={value:?} is not valid: expected {expected}"),
    )
}

/// A positive byte count (suffixes k, m, g allowed), at most `max`.
pub fn parse_size(v: &str, max: usize) -> Option<usize> {
    let v = v.trim().to_ascii_lowercase();
    let (num, mult) = match v.chars().last()? {
        'k' => (&v[..v.len() - 1], 1 << 10),
        'm' => (&v[..v.len() - 1], 1 << 20),
        'g' => (&v[..v.len() - 1], 1 << 30),
        _ => (&v[..], 1),
    };
    let n: usize = num.trim().parse().ok()?;
    n.checked_mul(mult).filter(|&n| n > 0 && n <= max)
}

impl IoConfig {
    pub fn from_lookup(lookup: &impl Fn(&str) -> Option<String>) -> MpiResult<IoConfig> {
        let mut c = IoConfig::default();
        if let Some(v) = lookup("WEFT_IO_CB_BUFFER_SIZE") {
            c.cb_buffer_size = parse_size(&v, 1 << 30)
                .ok_or_else(|| bad("WEFT_IO_CB_BUFFER_SIZE", &v, "a byte count in 1..=1g"))?;
        }
        if let Some(v) = lookup("WEFT_IO_CB_NODES") {
            c.cb_nodes = v
                .trim()
                .parse()
                .ok()
                .filter(|&n: &usize| n <= 1 << 20)
                .ok_or_else(|| bad("WEFT_IO_CB_NODES", &v, "a number of ranks (0: all)"))?;
        }
        for (name, slot) in [
            ("WEFT_IO_CB_READ", &mut c.cb_read),
            ("WEFT_IO_CB_WRITE", &mut c.cb_write),
        ] {
            if let Some(v) = lookup(name) {
                *slot = Buffering::parse(&v)
                    .ok_or_else(|| bad(name, &v, "automatic, enable or disable"))?;
            }
        }
        if let Some(v) = lookup("WEFT_IO_ENGINE") {
            c.engine = match v.trim() {
                "auto" | "" => Engine::Auto,
                "uring" | "io_uring" => Engine::Uring,
                "posix" => Engine::Posix,
                other => return Err(bad("WEFT_IO_ENGINE", other, "auto, uring or posix")),
            };
        }
        if let Some(v) = lookup("WEFT_IO_URING_WORKERS") {
            c.uring_workers = v
                .trim()
                .parse()
                .ok()
                .filter(|&n: &u32| n <= 1024)
                .ok_or_else(|| bad("WEFT_IO_URING_WORKERS", &v, "an integer in 0..=1024"))?;
        }
        Ok(c)
    }

    pub fn describe(&self, name: &str) -> String {
        match name {
            "WEFT_IO_CB_BUFFER_SIZE" => self.cb_buffer_size.to_string(),
            "WEFT_IO_CB_NODES" => self.cb_nodes.to_string(),
            "WEFT_IO_CB_READ" => self.cb_read.name().into(),
            "WEFT_IO_CB_WRITE" => self.cb_write.name().into(),
            "WEFT_IO_ENGINE" => match self.engine {
                Engine::Auto => "auto".into(),
                Engine::Uring => "uring".into(),
                Engine::Posix => "posix".into(),
            },
            "WEFT_IO_URING_WORKERS" => self.uring_workers.to_string(),
            _ => unreachable!("not an I/O variable: {name}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_sizes_and_modes() {
        assert_eq!(parse_size("4m", 1 << 30), Some(4 << 20));
        assert_eq!(parse_size("0", 1 << 30), None);
        let map = |k: &str| match k {
            "WEFT_IO_CB_BUFFER_SIZE" => Some("1048576".to_string()),
            "WEFT_IO_CB_WRITE" => Some("disable".to_string()),
            "WEFT_IO_ENGINE" => Some("posix".to_string()),
            _ => None,
        };
        let c = IoConfig::from_lookup(&map).unwrap();
        assert_eq!(c.cb_buffer_size, 1 << 20);
        assert_eq!(c.cb_write, Buffering::Disable);
        assert_eq!(c.engine, Engine::Posix);
        let bad = |k: &str| (k == "WEFT_IO_ENGINE").then(|| "aio".to_string());
        assert!(IoConfig::from_lookup(&bad).is_err());
    }
}
