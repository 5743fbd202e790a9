// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! Compiles libmmkit from the C files lib/SOURCES lists (csrc/lib links to
//! the repository's lib/), or links an installed libmmkit when
//! `MMKIT_SYS_SYSTEM=1` (from `MMKIT_SYS_LIB_DIR` if set).

use std::env;
use std::fs;
use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-env-changed=MMKIT_SYS_SYSTEM");
    println!("cargo:rerun-if-env-changed=MMKIT_SYS_LIB_DIR");
    let manifest = PathBuf::from(env::var_os("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let csrc = manifest.join("csrc");
    let include = csrc.join("include");
    if env::var_os("MMKIT_SYS_SYSTEM").map_or(false, |v| v == "1") {
        if let Some(dir) = env::var_os("MMKIT_SYS_LIB_DIR") {
            println!(
                "cargo:rustc-link-search=native={}",
                PathBuf::from(dir).display()
            );
        }
        println!("cargo:rustc-link-lib=dylib=mmkit");
        return;
    }
    let lib = csrc.join("lib");
    let list = lib.join("SOURCES");
    let sources = fs::read_to_string(&list).unwrap_or_else(|e| {
        panic!(
            "{}: {} (csrc/lib must lead to mmkit's lib/; a packaged crate holds a copy)",
            list.display(),
            e
        )
    });
    // cc prints no rerun-if-changed of its own: any file under these.
    println!("cargo:rerun-if-changed={}", lib.display());
    println!("cargo:rerun-if-changed={}", include.display());
    println!("cargo:rerun-if-changed=csrc/layout.c");
    let mut build = cc::Build::new();
    build
        .std("gnu11")
        .define("_GNU_SOURCE", None)
        .include(&include)
        .flag("-pthread")
        .flag("-fvisibility=hidden")
        .warnings(false);
    for name in sources.lines().filter(|l| !l.is_empty()) {
        build.file(lib.join(name));
    }
    build.file(csrc.join("layout.c"));
    build.compile("mmkit");
    println!("cargo:include={}", include.display());
}
