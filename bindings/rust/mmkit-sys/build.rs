// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! Compiles libmmkit from the C files lib/SOURCES lists (csrc/lib links to
//! the repository's lib/) into one object whose internal symbols are local
//! (the C compiler's `-r`, then objcopy, `OBJCOPY` if set), or links an
//! installed libmmkit when `MMKIT_SYS_SYSTEM=1` (from `MMKIT_SYS_LIB_DIR`
//! if set).

use std::env;
use std::fs;
use std::path::PathBuf;
use std::process::Command;

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
    // lib/refpage-kmod.c includes ../kmod/refpage/refpage.h (the module's ioctls).
    println!("cargo:rerun-if-changed=csrc/kmod/refpage/refpage.h");
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
    let out = PathBuf::from(env::var_os("OUT_DIR").expect("OUT_DIR"));
    let joined = out.join("mmkit.o");
    let objects = build.compile_intermediates();
    // As the Makefile makes libmmkit.a: one object, its hidden symbols
    // local, so that only mmkit_ names can collide with other C code in
    // the program (another crate's sys_open, say).
    let mut link = build.get_compiler().to_command();
    link.args(["-r", "-nostdlib", "-o"])
        .arg(&joined)
        .args(&objects);
    run(&mut link);
    let objcopy =
        env::var_os("OBJCOPY").map_or_else(|| tool_beside(&build, "objcopy"), PathBuf::from);
    let mut localize = Command::new(&objcopy);
    localize.arg("--localize-hidden").arg(&joined);
    run(&mut localize);
    let archive = out.join("libmmkit.a");
    let _ = fs::remove_file(&archive);
    let mut ar = build.get_archiver();
    ar.arg("crs").arg(&archive).arg(&joined);
    run(&mut ar);
    println!("cargo:rustc-link-search=native={}", out.display());
    println!("cargo:rustc-link-lib=static=mmkit");
    println!("cargo:rerun-if-env-changed=OBJCOPY");
    println!("cargo:include={}", include.display());
}

/// TOOL of the compiler's binutils: aarch64-linux-gnu-objcopy beside
/// aarch64-linux-gnu-gcc, objcopy beside cc.
fn tool_beside(build: &cc::Build, tool: &str) -> PathBuf {
    let compiler = build.get_compiler();
    let name = compiler
        .path()
        .file_name()
        .map(|n| n.to_string_lossy().into_owned());
    match name.as_deref().and_then(|n| n.strip_suffix("gcc")) {
        Some(prefix) if prefix.ends_with('-') => PathBuf::from(format!("{}{}", prefix, tool)),
        _ => PathBuf::from(tool),
    }
}

fn run(command: &mut Command) {
    let status = command
        .status()
        .unwrap_or_else(|e| panic!("{:?}: {}", command, e));
    assert!(status.success(), "{:?}: {}", command, status);
}
