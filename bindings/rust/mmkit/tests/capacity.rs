// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! 100,000 live SecretBox<[u8; 32]> as an unprivileged user under an 8 MiB
//! RLIMIT_MEMLOCK, and the failure after them: ENOMEM with the figures.
//!
//! The test runs itself again, as uid 65534 without capabilities when run
//! as root (setpriv), under the limit (prlimit): from a copy of this test
//! program in a directory that user can read.

use std::env;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::Command;

use mmkit::SecretBox;

const CHILD: &str = "MMKIT_RUST_CAPACITY_CHILD";
const LIMIT: u64 = 8 << 20;
const COUNT: usize = 100_000;

extern "C" {
    fn geteuid() -> u32;
}

#[test]
fn hundred_thousand_boxes_under_8_mib() {
    if env::var_os(CHILD).is_some() {
        return unprivileged_child();
    }
    let dir = env::temp_dir().join(format!("mmkit-rust-capacity-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    let exe: PathBuf = dir.join("capacity");
    fs::copy(env::current_exe().unwrap(), &exe).unwrap();
    fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).unwrap();

    let prlimit = [
        "prlimit".to_string(),
        format!("--memlock={}:{}", LIMIT, LIMIT),
        "--".into(),
    ];
    // SAFETY: geteuid() takes nothing and cannot fail.
    let mut argv: Vec<String> = if unsafe { geteuid() } == 0 {
        [
            "setpriv",
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--inh-caps=-all",
            "--",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect()
    } else {
        Vec::new()
    };
    argv.extend(prlimit);
    let out = Command::new(&argv[0])
        .args(&argv[1..])
        .arg(&exe)
        .args([
            "--exact",
            "hundred_thousand_boxes_under_8_mib",
            "--nocapture",
        ])
        .env(CHILD, "1")
        .current_dir(&dir)
        .output()
        .unwrap_or_else(|e| panic!("{}: {} (util-linux)", argv[0], e));
    let _ = fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    print!(
        "{}",
        stdout
            .lines()
            .filter(|l| l.starts_with("    "))
            .collect::<Vec<_>>()
            .join("\n")
    );
    println!();
    assert!(
        out.status.success(),
        "child: {}\n{}\n{}",
        out.status,
        stdout,
        stderr
    );
    assert!(
        stdout.contains("1 passed"),
        "the child ran no test:\n{}",
        stdout
    );
}

fn unprivileged_child() {
    let stats = mmkit::secret_stats().unwrap();
    assert!(!stats.memlock_exempt, "still exempt from RLIMIT_MEMLOCK");
    assert_eq!(stats.memlock_limit, Some(LIMIT));
    let mut boxes = Vec::with_capacity(COUNT);
    for i in 0..COUNT {
        let b = SecretBox::<[u8; 32]>::init_with_mut(|k| {
            k[..8].copy_from_slice(&(i as u64).to_le_bytes());
            k[31] = 0xee;
        })
        .unwrap_or_else(|e| panic!("secret {} of {}: {}", i + 1, COUNT, e));
        boxes.push(b);
    }
    for (i, b) in boxes.iter().enumerate() {
        let k = b.expose_secret();
        assert_eq!(u64::from_le_bytes(k[..8].try_into().unwrap()), i as u64);
        assert_eq!(k[31], 0xee);
    }
    let stats = mmkit::secret_stats().unwrap();
    assert!(stats.allocs_live >= COUNT as u64);
    assert!(stats.bytes_locked <= LIMIT);
    println!(
        "    {} live SecretBox<[u8; 32]> as uid {}: {} KiB of {} KiB locked ({})",
        COUNT,
        // SAFETY: geteuid() takes nothing and cannot fail.
        unsafe { geteuid() },
        stats.bytes_locked / 1024,
        LIMIT / 1024,
        stats.backend
    );
    // More until the limit refuses: ENOMEM, with the figures in the message.
    let err = loop {
        match SecretBox::<[u8; 32]>::zeroed() {
            Ok(b) => boxes.push(b),
            Err(e) => break e,
        }
        assert!(boxes.len() < 10 * COUNT, "no limit reached");
    };
    assert_eq!(err.errno(), 12, "{}", err);
    assert!(err.message().starts_with("mmkit_secret_alloc: "), "{}", err);
    assert!(
        err.message().contains("RLIMIT_MEMLOCK: limit 8192 KiB"),
        "{}",
        err
    );
    println!("    {} live before: {}", boxes.len(), err);
}
