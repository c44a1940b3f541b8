//! Build-time probe for UCX: where `pkg-config` finds `ucx` (Debian's `libucx-dev`), the
//! `ucx` transport is compiled in (`cfg(weft_ucx)`) and linked against `libucp`; elsewhere the
//! build goes on without it (messages between nodes then fail with a clear error).
//! `WEFT_BUILD_UCX=0` builds without it even where it is installed.

use std::process::Command;

fn main() {
    println!("cargo::rustc-check-cfg=cfg(weft_ucx)");
    println!("cargo::rerun-if-env-changed=WEFT_BUILD_UCX");
    println!("cargo::rerun-if-env-changed=PKG_CONFIG_PATH");
    if std::env::var("WEFT_BUILD_UCX").as_deref() == Ok("0") {
        return;
    }
    let libs = Command::new("pkg-config")
        .args(["--libs", "ucx"])
        .output()
        .ok()
        .filter(|o| o.status.success());
    let Some(libs) = libs else {
        println!(
            "cargo::warning=UCX not found (pkg-config ucx): building without the ucx transport"
        );
        return;
    };
    let version = Command::new("pkg-config")
        .args(["--modversion", "ucx"])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    println!("cargo::rustc-cfg=weft_ucx");
    println!("cargo::rustc-env=WEFT_UCX_BUILD_VERSION={version}");
    for flag in String::from_utf8_lossy(&libs.stdout).split_whitespace() {
        if let Some(dir) = flag.strip_prefix("-L") {
            println!("cargo::rustc-link-search=native={dir}");
        } else if let Some(lib) = flag.strip_prefix("-l") {
            println!("cargo::rustc-link-lib=dylib={lib}");
        }
    }
}
