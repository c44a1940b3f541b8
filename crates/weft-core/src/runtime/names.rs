//! The name service (`MPI_Publish_name`, `MPI_Lookup_name`, `MPI_Unpublish_name`): a
//! directory shared by the jobs that should find each other (`WEFT_NAME_DIR`, by default
//! `weft-names-<uid>` in the temporary directory), with one file per published service
//! whose content is the port name. File names are the service name in hex, so any service
//! name is a valid file name. Publishing creates the file exclusively, so two publishers of
//! one name cannot both succeed; a file is written completely under a temporary name and
//! then linked in, so a lookup never reads half a port name.
#![forbid(unsafe_code)]

use std::fs;
use std::io::{ErrorKind, Write};
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::PathBuf;

use crate::config::Config;
use crate::error::{ErrorClass, MpiError, MpiResult};

fn dir(config: &Config) -> PathBuf {
    match &config.name_dir {
        Some(d) => PathBuf::from(d),
        None => {
            let uid = fs::metadata("/proc/self").map(|m| m.uid()).unwrap_or(0);
            std::env::temp_dir().join(format!("weft-names-{uid}"))
        }
    }
}

fn file(config: &Config, service: &str) -> PathBuf {
    let hex: String = service.bytes().map(|b| format!("{b:02x}")).collect();
    dir(config).join(hex)
}

fn io_error(func: &str, what: &str, e: std::io::Error) -> MpiError {
    MpiError::new(ErrorClass::Other, format!("{func}: {what}: {e}"))
}

/// `MPI_Publish_name`.
pub fn publish(config: &Config, service: &str, port: &str) -> MpiResult<()> {
    let func = "MPI_Publish_name";
    let d = dir(config);
    fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&d)
        .map_err(|e| io_error(func, &format!("cannot create {}", d.display()), e))?;
    let target = file(config, service);
    let tmp = d.join(format!(
        ".tmp.{}.{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |t| t.as_nanos())
    ));
    let write = || -> std::io::Result<()> {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(port.trim_end().as_bytes())?;
        f.sync_all()
    };
    write().map_err(|e| io_error(func, &format!("cannot write {}", tmp.display()), e))?;
    let linked = fs::hard_link(&tmp, &target);
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::AlreadyExists => Err(MpiError::new(
            ErrorClass::Service,
            format!("{func}(service_name): \"{service}\" is published already"),
        )),
        Err(e) => Err(io_error(
            func,
            &format!("cannot create {}", target.display()),
            e,
        )),
    }
}

/// `MPI_Lookup_name`: the port published under `service`.
pub fn lookup(config: &Config, service: &str) -> MpiResult<String> {
    match fs::read_to_string(file(config, service)) {
        Ok(port) => Ok(port),
        Err(e) if e.kind() == ErrorKind::NotFound => Err(MpiError::new(
            ErrorClass::Name,
            format!("MPI_Lookup_name(service_name): \"{service}\" is not published"),
        )),
        Err(e) => Err(io_error(
            "MPI_Lookup_name",
            "cannot read the name service",
            e,
        )),
    }
}

/// `MPI_Unpublish_name`: `port` must be the port published under `service`.
pub fn unpublish(config: &Config, service: &str, port: &str) -> MpiResult<()> {
    let func = "MPI_Unpublish_name";
    let path = file(config, service);
    match fs::read_to_string(&path) {
        Ok(p) if p == port.trim_end() => fs::remove_file(&path)
            .map_err(|e| io_error(func, &format!("cannot remove {}", path.display()), e)),
        Ok(p) => Err(MpiError::new(
            ErrorClass::Service,
            format!("{func}: \"{service}\" is published with port \"{p}\", not \"{port}\""),
        )),
        Err(e) if e.kind() == ErrorKind::NotFound => Err(MpiError::new(
            ErrorClass::Service,
            format!("{func}(service_name): \"{service}\" is not published"),
        )),
        Err(e) => Err(io_error(func, "cannot read the name service", e)),
    }
}
