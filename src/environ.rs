//! Keeping gisclaw's secrets out of `/proc/<pid>/environ`.
//!
//! That file shows a process's *initial* environment block, whatever the
//! process later sets or removes; any process of the same user may read it.
//! Sessions run in their own PID namespace and cannot see gisclaw's `/proc`
//! entry, but where the kernel refuses namespaces, this is the layer that
//! keeps an API key from a cell: [`scrub_initial_block`] moves every
//! variable to the heap (where `std::env` keeps finding it) and overwrites
//! the initial block with zeros.

use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

extern "C" {
    static mut environ: *mut *mut libc::c_char;
}

/// Moves every environment variable out of the initial block and wipes the
/// block. Call first thing in `main`, before any thread starts.
pub fn scrub_initial_block() {
    // SAFETY: single-threaded (called first in main); `environ` is the C
    // library's array of NUL-terminated strings. Each string is copied
    // before setenv replaces its slot, and a string is wiped only when no
    // slot of the array points at it any more.
    unsafe {
        let mut originals = Vec::new();
        let mut slot = environ;
        while !slot.is_null() && !(*slot).is_null() {
            let ptr = *slot;
            originals.push((ptr, libc::strlen(ptr)));
            slot = slot.add(1);
        }
        for &(ptr, len) in &originals {
            let entry = std::slice::from_raw_parts(ptr as *const u8, len);
            if let Some(eq) = entry.iter().position(|b| *b == b'=').filter(|&eq| eq > 0) {
                let key = OsStr::from_bytes(&entry[..eq]).to_owned();
                let value = OsStr::from_bytes(&entry[eq + 1..]).to_owned();
                std::env::set_var(&key, &value);
            }
        }
        let mut still_used = std::collections::HashSet::new();
        let mut slot = environ;
        while !slot.is_null() && !(*slot).is_null() {
            still_used.insert(*slot as usize);
            slot = slot.add(1);
        }
        for (ptr, len) in originals {
            if !still_used.contains(&(ptr as usize)) {
                std::ptr::write_bytes(ptr, 0, len);
            }
        }
    }
}
