//! Build-time probe for UCX: where `pkg-config` finds `ucx` (Debian's `libucx-dev`), the
//! `ucx` transport is compiled in (`cfg(weft_ucx)`); elsewhere the build goes on without it
//! (messages between nodes then fail with a clear error). `libucp.so.0` is not linked: the
//! transport loads it when it is first used (`transport/ucx/ffi.rs`), so single-node
//! programs never load UCX.
//! `WEFT_BUILD_UCX=0` builds without it even where it is installed.

use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(weft_ucx)");
    println!("cargo::rerun-if-env-changed=WEFT_BUILD_UCX");
    println!("cargo::rerun-if-env-changed=PKG_CONFIG_PATH");
    if std::env::var("WEFT_BUILD_UCX").as_deref() == Ok("0") {
        return;
    }
    let found = Command::new("pkg-config")
        .args(["--exists", "ucx"])
        .status()
        .is_ok_and(|s| s.success());
    if !found {
        println!(
            "cargo::warning=UCX not found (pkg-config ucx): building without the ucx transport"
        );
        return;
    }
    let version = Command::new("pkg-config")
        .args(["--modversion", "ucx"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    println!("cargo::rustc-cfg=weft_ucx");
    println!("cargo::rustc-env=WEFT_UCX_BUILD_VERSION={version}");
}
