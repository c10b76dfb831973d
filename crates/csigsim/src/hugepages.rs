//! A memory allocator that asks Linux for huge pages for large blocks.
//!
//! A large fabric's state (the packets in flight, the pending events, the
//! ports, the flows) spans tens of megabytes and is touched all over: with
//! 4 KiB pages most of those touches miss the TLB as well as the caches, and
//! the loop waits on page walks (on `nscc_uec_permutation_8192` the
//! prefetches of the next packet alone stalled for a quarter of the time).
//! Every block of at least 2 MiB is aligned to 2 MiB and advised
//! `MADV_HUGEPAGE` as it is allocated, before it is first touched, so that
//! the kernel backs it with 2 MiB pages where transparent huge pages are
//! enabled (`madvise` or `always` in
//! `/sys/kernel/mm/transparent_hugepage/enabled`); growing such a block moves
//! it to a new aligned block. Nothing else changes: the same memory, the same
//! outputs. Elsewhere than on Linux it is the system allocator.
//!
//! The allocator of a program is the program's choice: the `csigsim` command
//! and the Python module install it; a program using the library picks its
//! own:
//!
//! ```
//! #[global_allocator]
//! static ALLOC: csigsim::hugepages::HugePages = csigsim::hugepages::HugePages;
//! ```

use std::alloc::{GlobalAlloc, Layout, System};

/// The system allocator, with large blocks advised to use huge pages.
pub struct HugePages;

/// The size of a huge page, and the smallest block advised.
const HUGE: usize = 2 << 20;

/// Advises the whole huge pages inside `[p, p + size)`.
#[cfg(target_os = "linux")]
fn advise(p: *mut u8, size: usize) {
    let start = (p as usize).next_multiple_of(HUGE);
    let end = (p as usize + size) & !(HUGE - 1);
    if end > start {
        // SAFETY: the range lies inside a block the allocator just handed
        // out; madvise only changes how the kernel backs it (on failure,
        // as without THP, nothing changes).
        #[allow(unsafe_code)]
        unsafe {
            libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise(_: *mut u8, _: usize) {}

/// The layout a block is allocated with: large ones aligned to a huge page.
#[inline]
fn placed(layout: Layout) -> Layout {
    if layout.size() >= HUGE && cfg!(target_os = "linux") {
        Layout::from_size_align(layout.size(), layout.align().max(HUGE)).unwrap_or(layout)
    } else {
        layout
    }
}

/// A block the system allocator returned for layout `l`, advised when it is
/// large.
#[inline]
fn advised(p: *mut u8, l: Layout) -> *mut u8 {
    if l.size() >= HUGE && !p.is_null() {
        advise(p, l.size());
    }
    p
}

// SAFETY: blocks come from the system allocator, large ones with a larger
// alignment than asked (which every caller accepts) and freed with the same
// layout; the advice touches no byte of the block.
#[allow(unsafe_code)]
unsafe impl GlobalAlloc for HugePages {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let l = placed(layout);
        // SAFETY: `l` is `layout` or the same size with a larger alignment.
        advised(unsafe { System.alloc(l) }, l)
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        let l = placed(layout);
        // SAFETY: as for `alloc`.
        advised(unsafe { System.alloc_zeroed(l) }, l)
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was allocated with `placed(layout)`.
        unsafe { System.dealloc(ptr, placed(layout)) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if layout.size() < HUGE && new_size < HUGE {
            // SAFETY: small blocks are the system allocator's own.
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        // A large block moves to a new aligned one.
        // SAFETY: the caller guarantees `new_size` with `layout.align()` is a
        // valid layout; `ptr` holds `layout.size()` bytes and is freed once.
        unsafe {
            let new_layout = Layout::from_size_align_unchecked(new_size, layout.align());
            let p = self.alloc(new_layout);
            if !p.is_null() {
                std::ptr::copy_nonoverlapping(ptr, p, layout.size().min(new_size));
                self.dealloc(ptr, layout);
            }
            p
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Blocks of every size round trip through the allocator with their
    /// contents, across growth past the huge-page size.
    #[test]
    fn blocks_keep_their_bytes_across_growth() {
        let a = HugePages;
        for &(size, grown) in &[(64usize, 4096usize), (HUGE - 8, HUGE + 4096), (3 * HUGE + 17, 5 * HUGE)] {
            let layout = Layout::from_size_align(size, 8).unwrap();
            #[allow(unsafe_code)]
            // SAFETY: a valid non-zero layout; the block is written within
            // its size, grown with the same layout and freed once.
            unsafe {
                let p = a.alloc(layout);
                assert!(!p.is_null());
                for i in (0..size).step_by(4096) {
                    *p.add(i) = (i / 4096) as u8;
                }
                let q = a.realloc(p, layout, grown);
                assert!(!q.is_null());
                if cfg!(target_os = "linux") && grown >= HUGE {
                    assert_eq!(q as usize % HUGE, 0, "a large block starts on a huge page");
                }
                for i in (0..size).step_by(4096) {
                    assert_eq!(*q.add(i), (i / 4096) as u8);
                }
                a.dealloc(q, Layout::from_size_align(grown, 8).unwrap());
                let z = a.alloc_zeroed(layout);
                assert!((0..size).step_by(4096).all(|i| *z.add(i) == 0));
                a.dealloc(z, layout);
            }
        }
    }
}
