//! The command's allocator: huge pages for large blocks
//! (`csigsim::hugepages`), and an allocation that fails ends the process
//! with a message and exit status 1 instead of an abort. The resource
//! budget (docs/robustness.md) refuses most scenarios that would not fit
//! before they run; this is what is left when its estimate is short.

use csigsim::hugepages::HugePages;
use std::alloc::{GlobalAlloc, Layout};

pub struct Allocator;

/// Writes the message and exits, allocating nothing (the allocator is out).
#[cold]
#[inline(never)]
fn out_of_memory(size: usize) -> ! {
    let mut digits = itoa::Buffer::new();
    let parts: [&[u8]; 3] = [
        b"error: out of memory: an allocation of ",
        digits.format(size).as_bytes(),
        b" bytes failed; the run needs more memory than this process may have. Lower the scenario's size, or give --max-memory the memory this process really has so that such a scenario is refused before it runs (docs/robustness.md)\n",
    ];
    for p in parts {
        // SAFETY: writes `p.len()` bytes of `p` to standard error.
        #[cfg(unix)]
        unsafe {
            libc::write(2, p.as_ptr().cast(), p.len());
        }
    }
    // Not `exit`: its handlers may allocate.
    #[cfg(unix)]
    // SAFETY: ends the process at once.
    unsafe {
        libc::_exit(1)
    }
    #[cfg(not(unix))]
    std::process::abort()
}

fn checked(p: *mut u8, size: usize) -> *mut u8 {
    if p.is_null() {
        out_of_memory(size);
    }
    p
}

// SAFETY: every call goes to `HugePages` unchanged; a null answer ends the
// process instead of returning.
unsafe impl GlobalAlloc for Allocator {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract, passed on.
        checked(unsafe { HugePages.alloc(layout) }, layout.size())
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        checked(unsafe { HugePages.alloc_zeroed(layout) }, layout.size())
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as for `alloc`.
        unsafe { HugePages.dealloc(ptr, layout) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as for `alloc`.
        checked(unsafe { HugePages.realloc(ptr, layout, new_size) }, new_size)
    }
}
