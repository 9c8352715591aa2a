//! Applying a [`ConfinementPolicy`] to the current process: the one place
//! where the worker narrows what user code may do. Called in each forked
//! session child, before any user code runs, and never undone.
//!
//! Layers, each reported on its own so nothing degrades silently:
//! - rlimits: address space (a memory bomb becomes `MemoryError`), file size,
//!   no core dumps;
//! - `PR_SET_NO_NEW_PRIVS`;
//! - Landlock: read everywhere, write only under the policy's write roots;
//!   no TCP bind/connect (ABI ≥ 4); no abstract Unix sockets or signals
//!   outside the sandbox (ABI ≥ 6);
//! - seccomp: `socket()` for any family but `AF_UNIX` fails with `EACCES`,
//!   `io_uring_setup` with `EPERM` (io_uring can open sockets too).

use std::collections::BTreeMap;

use gisclaw_protocol::{ConfinementPolicy, ConfinementReport, LayerStatus};
use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, Ruleset, RulesetAttr, RulesetCreatedAttr,
    RulesetStatus, Scope, ABI,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

/// The Landlock ABI this code was written against.
const LANDLOCK_ABI: ABI = ABI::V6;

/// The Landlock ABI version the running kernel offers, if any.
pub fn landlock_abi() -> Option<i32> {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a null attr and size 0 this syscall only reports the ABI.
    let v = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    (v > 0).then_some(v as i32)
}

/// Whether the kernel accepts seccomp filters.
pub fn seccomp_available() -> bool {
    // SAFETY: PR_GET_SECCOMP has no pointer arguments.
    unsafe { libc::prctl(libc::PR_GET_SECCOMP, 0, 0, 0, 0) >= 0 }
}

/// Applies the whole policy to this process and reports each layer.
pub fn apply(policy: &ConfinementPolicy) -> ConfinementReport {
    let rlimits = apply_rlimits(policy);
    if !policy.confine {
        return ConfinementReport {
            filesystem: LayerStatus::Disabled,
            network: LayerStatus::Disabled,
            no_new_privs: LayerStatus::Disabled,
            rlimits,
        };
    }
    // SAFETY: PR_SET_NO_NEW_PRIVS takes integer arguments only.
    let nnp = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
    let no_new_privs = if nnp == 0 {
        LayerStatus::Enforced("set".into())
    } else {
        LayerStatus::Unsupported(std::io::Error::last_os_error().to_string())
    };
    let filesystem = apply_landlock(policy);
    let network = if policy.allow_network {
        LayerStatus::Disabled
    } else {
        apply_seccomp()
    };
    ConfinementReport {
        filesystem,
        network,
        no_new_privs,
        rlimits,
    }
}

/// Sets one rlimit (soft and hard) to `value`.
fn set_rlimit(resource: libc::__rlimit_resource_t, value: u64) -> std::io::Result<()> {
    let lim = libc::rlimit {
        rlim_cur: value,
        rlim_max: value,
    };
    // SAFETY: lim is a valid rlimit for the duration of the call.
    if unsafe { libc::setrlimit(resource, &lim) } == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

fn apply_rlimits(policy: &ConfinementPolicy) -> LayerStatus {
    let mut applied = vec!["no core dumps".to_string()];
    let mut failed = Vec::new();
    if let Err(e) = set_rlimit(libc::RLIMIT_CORE, 0) {
        failed.push(format!("RLIMIT_CORE: {e}"));
    }
    if let Some(bytes) = policy.memory_limit_bytes {
        match set_rlimit(libc::RLIMIT_AS, bytes) {
            Ok(()) => applied.push(format!("address space ≤ {} MiB", bytes >> 20)),
            Err(e) => failed.push(format!("RLIMIT_AS: {e}")),
        }
    }
    if let Some(bytes) = policy.file_size_limit_bytes {
        // Without this, exceeding RLIMIT_FSIZE kills the process with SIGXFSZ
        // instead of failing the write with EFBIG.
        // SAFETY: SIG_IGN is a valid disposition for SIGXFSZ.
        unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
        match set_rlimit(libc::RLIMIT_FSIZE, bytes) {
            Ok(()) => applied.push(format!("files ≤ {} MiB", bytes >> 20)),
            Err(e) => failed.push(format!("RLIMIT_FSIZE: {e}")),
        }
    }
    if failed.is_empty() {
        LayerStatus::Enforced(applied.join(", "))
    } else {
        LayerStatus::Partial(failed.join("; "))
    }
}

fn apply_landlock(policy: &ConfinementPolicy) -> LayerStatus {
    let Some(kernel_abi) = landlock_abi() else {
        return LayerStatus::Unsupported("the kernel offers no Landlock (needs Linux ≥ 5.13 with Landlock enabled)".into());
    };
    let abi = LANDLOCK_ABI;
    let mut writable: Vec<&std::path::Path> = policy.write_roots.iter().map(|p| p.as_path()).collect();
    let dev_null = std::path::Path::new("/dev/null");
    writable.push(dev_null);
    let result = Ruleset::default()
        .handle_access(AccessFs::from_all(abi))
        .and_then(|r| r.handle_access(AccessNet::BindTcp | AccessNet::ConnectTcp))
        .and_then(|r| r.scope(Scope::AbstractUnixSocket | Scope::Signal))
        .and_then(|r| r.create())
        .and_then(|r| r.add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi))))
        .and_then(|r| r.add_rules(path_beneath_rules(writable, AccessFs::from_all(abi))))
        .and_then(|r| r.restrict_self());
    match result {
        Ok(status) => match status.ruleset {
            RulesetStatus::FullyEnforced => LayerStatus::Enforced(format!("Landlock ABI {kernel_abi}")),
            RulesetStatus::PartiallyEnforced => LayerStatus::Partial(format!(
                "kernel Landlock ABI {kernel_abi} lacks some rights of ABI {}",
                abi as i32
            )),
            RulesetStatus::NotEnforced => LayerStatus::Unsupported("Landlock is not enforced by this kernel".into()),
        },
        Err(err) => LayerStatus::Unsupported(format!("Landlock failed: {err}")),
    }
}

/// Builds a filter that answers `errno` to `syscall` when any of `rules`
/// matches (every call when `rules` is empty) and allows everything else.
fn errno_filter(syscall: i64, rules: Vec<SeccompRule>, errno: i32) -> Result<BpfProgram, String> {
    let arch = std::env::consts::ARCH
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    let map: BTreeMap<i64, Vec<SeccompRule>> = [(syscall, rules)].into_iter().collect();
    let filter = SeccompFilter::new(map, SeccompAction::Allow, SeccompAction::Errno(errno as u32), arch)
        .map_err(|e| e.to_string())?;
    filter.try_into().map_err(|e: seccompiler::BackendError| e.to_string())
}

/// The two programs described in the module docs.
fn network_filters() -> Result<[BpfProgram; 2], String> {
    let not_unix = SeccompCondition::new(0, SeccompCmpArgLen::Dword, SeccompCmpOp::Ne, libc::AF_UNIX as u64)
        .and_then(|cond| SeccompRule::new(vec![cond]))
        .map_err(|e| e.to_string())?;
    Ok([
        errno_filter(libc::SYS_socket, vec![not_unix], libc::EACCES)?,
        errno_filter(libc::SYS_io_uring_setup, vec![], libc::EPERM)?,
    ])
}

fn apply_seccomp() -> LayerStatus {
    if !seccomp_available() {
        return LayerStatus::Unsupported("the kernel offers no seccomp filters".into());
    }
    let applied = network_filters().and_then(|programs| {
        programs
            .iter()
            .try_for_each(|prog| seccompiler::apply_filter(prog).map_err(|e| e.to_string()))
    });
    match applied {
        Ok(()) => LayerStatus::Enforced("seccomp: sockets limited to AF_UNIX".into()),
        Err(err) => LayerStatus::Unsupported(format!("seccomp filter failed: {err}")),
    }
}
