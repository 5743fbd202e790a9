// SPDX-License-Identifier: MIT OR LGPL-2.1-or-later
//! 32-byte secrets from mmkit, memsec (memfd_secret and mlock malloc) and
//! the secrets crate (libsodium's sodium_malloc), side by side in one run:
//! nanoseconds per allocation + free (median of the rounds), and how many
//! live secrets one process gets before the first failure, as an
//! unprivileged user under an 8 MiB RLIMIT_MEMLOCK.
//!
//! Each allocator runs in a process of its own (this program again, as uid
//! 65534 through setpriv when run as root, under prlimit), so that none
//! inherits another's mappings or locked memory.
//!
//!     cargo run --release -- [ROUNDS [ALLOCS_PER_ROUND]]

use std::env;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::panic;
use std::process::Command;
use std::ptr::NonNull;
use std::time::Instant;

const LIMIT: u64 = 8 << 20;
/// Where the capacity count stops if nothing fails (memsec's malloc never
/// does: it goes on unlocked once mlock fails).
const CAP: usize = 200_000;
/// VmLck is read every this many allocations, to find the last one locked.
const SAMPLE: usize = 256;

type Key = [u8; 32];

/// One allocator: allocate a 32-byte secret (None on failure), free it.
trait Allocator {
    type Secret;
    fn alloc() -> Option<Self::Secret>;
    fn free(secret: Self::Secret);
}

struct Mmkit;
impl Allocator for Mmkit {
    type Secret = mmkit::SecretBox<Key>;
    fn alloc() -> Option<Self::Secret> {
        mmkit::SecretBox::zeroed().ok()
    }
    fn free(secret: Self::Secret) {
        drop(secret)
    }
}

struct MemsecMemfd;
impl Allocator for MemsecMemfd {
    type Secret = NonNull<Key>;
    fn alloc() -> Option<Self::Secret> {
        // SAFETY: memsec's allocation; freed once by free() below.
        unsafe { memsec::memfd_secret::<Key>() }
    }
    fn free(secret: Self::Secret) {
        // SAFETY: a live allocation of memsec::memfd_secret.
        unsafe { memsec::free_memfd_secret(secret) }
    }
}

struct MemsecMalloc;
impl Allocator for MemsecMalloc {
    type Secret = NonNull<Key>;
    fn alloc() -> Option<Self::Secret> {
        // SAFETY: memsec's allocation; freed once by free() below.
        unsafe { memsec::malloc::<Key>() }
    }
    fn free(secret: Self::Secret) {
        // SAFETY: a live allocation of memsec::malloc.
        unsafe { memsec::free(secret) }
    }
}

struct Secrets;
impl Allocator for Secrets {
    type Secret = secrets::SecretBox<Key>;
    fn alloc() -> Option<Self::Secret> {
        // It panics when sodium_malloc fails.
        panic::catch_unwind(secrets::SecretBox::<Key>::zero).ok()
    }
    fn free(secret: Self::Secret) {
        drop(secret)
    }
}

fn vm_locked_kib() -> u64 {
    let status = fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmLck:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// The child's work: "NAME NS_MEDIAN LIVE LOCKED_UNTIL VMLCK_KIB", where
/// LOCKED_UNTIL is the count of live secrets when VmLck last grew (to
/// SAMPLE allocations): the secrets after it are not locked.
fn measure<A: Allocator>(name: &str, rounds: usize, per_round: usize) {
    let mut per_pair = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let t = Instant::now();
        for _ in 0..per_round {
            let s = A::alloc().expect("allocation failed while timing");
            A::free(s);
        }
        per_pair.push(t.elapsed().as_nanos() as f64 / per_round as f64);
    }
    per_pair.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let median = per_pair[rounds / 2];
    let mut live = Vec::new();
    let (mut locked, mut locked_until) = (vm_locked_kib(), 0);
    while live.len() < CAP {
        match A::alloc() {
            Some(s) => live.push(s),
            None => break,
        }
        if live.len() % SAMPLE == 0 {
            let now = vm_locked_kib();
            if now > locked {
                locked = now;
                locked_until = live.len();
            }
        }
    }
    if vm_locked_kib() > locked {
        locked_until = live.len();
    }
    println!(
        "{} {:.0} {} {} {}",
        name,
        median,
        live.len(),
        locked_until,
        vm_locked_kib()
    );
    // Leaving frees nothing that matters: the process ends here.
    std::process::exit(0);
}

fn child(name: &str, rounds: usize, per_round: usize) {
    // Silence the panics the secrets crate reports its failures with.
    panic::set_hook(Box::new(|_| {}));
    match name {
        "mmkit" => measure::<Mmkit>(name, rounds, per_round),
        "memsec-memfd_secret" => measure::<MemsecMemfd>(name, rounds, per_round),
        "memsec-malloc" => measure::<MemsecMalloc>(name, rounds, per_round),
        "secrets" => measure::<Secrets>(name, rounds, per_round),
        _ => panic!("unknown allocator {}", name),
    }
}

extern "C" {
    fn geteuid() -> u32;
}

fn main() {
    let args: Vec<String> = env::args().collect();
    if args.len() == 5 && args[1] == "--child" {
        return child(&args[2], args[3].parse().unwrap(), args[4].parse().unwrap());
    }
    let rounds: usize = args.get(1).map_or(7, |a| a.parse().expect("ROUNDS"));
    let per_round: usize = args
        .get(2)
        .map_or(2000, |a| a.parse().expect("ALLOCS_PER_ROUND"));

    // A copy of this program that uid 65534 can run.
    let dir = env::temp_dir().join(format!("mmkit-bench-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    fs::set_permissions(&dir, fs::Permissions::from_mode(0o755)).unwrap();
    let exe = dir.join("mmkit-bench");
    fs::copy(env::current_exe().unwrap(), &exe).unwrap();
    fs::set_permissions(&exe, fs::Permissions::from_mode(0o755)).unwrap();
    // SAFETY: geteuid() takes nothing and cannot fail.
    let root = unsafe { geteuid() } == 0;
    let mut argv: Vec<String> = Vec::new();
    if root {
        argv.extend(
            [
                "setpriv",
                "--reuid=65534",
                "--regid=65534",
                "--clear-groups",
                "--inh-caps=-all",
                "--",
            ]
            .iter()
            .map(|s| s.to_string()),
        );
    }
    argv.extend([
        "prlimit".to_string(),
        format!("--memlock={}:{}", LIMIT, LIMIT),
        "--".into(),
    ]);

    println!(
        "32-byte secrets, uid {} under RLIMIT_MEMLOCK {} MiB; alloc+free: median of {} rounds of {}",
        // SAFETY: geteuid() takes nothing and cannot fail.
        if root { 65534 } else { unsafe { geteuid() } },
        LIMIT >> 20,
        rounds,
        per_round
    );
    println!();
    println!("| allocator | ns per alloc+free | vs mmkit | live secrets before failure | vs mmkit | locked (VmLck last grew at) | VmLck then |");
    println!("|---|---:|---:|---:|---:|---:|---:|");
    let mut base: Option<(f64, f64)> = None;
    for name in ["mmkit", "memsec-memfd_secret", "memsec-malloc", "secrets"] {
        let out = Command::new(&argv[0])
            .args(&argv[1..])
            .arg(&exe)
            .args(["--child", name, &rounds.to_string(), &per_round.to_string()])
            .current_dir(&dir)
            .output()
            .expect("setpriv/prlimit (util-linux)");
        let text = String::from_utf8_lossy(&out.stdout);
        let fields: Vec<&str> = text.split_whitespace().collect();
        if !out.status.success() || fields.len() != 5 {
            let err = String::from_utf8_lossy(&out.stderr);
            println!(
                "| {} | failed: {} {} | | | | | |",
                name,
                out.status,
                err.trim()
            );
            continue;
        }
        let ns: f64 = fields[1].parse().unwrap();
        let live: f64 = fields[2].parse().unwrap();
        let (base_ns, base_live) = *base.get_or_insert((ns, live));
        let capped = if live as usize >= CAP { " (cap)" } else { "" };
        println!(
            "| {} | {:.0} | {:.1}x | {}{} | {:.3}x | {} | {} KiB |",
            name,
            ns,
            ns / base_ns,
            live,
            capped,
            live / base_live,
            fields[3],
            fields[4]
        );
    }
    let _ = fs::remove_dir_all(&dir);
}
