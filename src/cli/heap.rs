//! The allocator of a binary that frees on one thread what another
//! allocated: small blocks from mimalloc, large ones from the system's.
//!
//! agy-encode parses its input a batch ahead on a second thread
//! ([`crate::stream::ahead`]): each record's strings and vectors are
//! allocated there and freed on the main thread once encoded. glibc's
//! malloc keeps a thread's blocks in that thread's arena, and a free from
//! another thread takes that arena's lock, which the parsing thread holds
//! for its own allocations: on big.db's messages the two waited on it in
//! turn (`__lll_lock_wait_private` was where most of the main thread's
//! context switches were), and the read-ahead took as long as reading in
//! one thread, for half again the CPU. mimalloc puts a block that another
//! thread frees on a list of its own, without a lock.
//!
//! Blocks of [`LARGE`] and more stay with the system allocator, which is
//! where the lock cost nothing: they are few (it was the many small ones
//! that met on the lock), glibc grows a block of megabytes in place
//! (`mremap`) where mimalloc copies it into a new one, and it gives memory
//! back sooner. With mimalloc alone agy-encode's peak on a 50 MB prompt
//! rose from 293 to 417 MiB (its output row grows by doubling: over twice
//! its longest line), and `agy-encode --onto`, one thread, from 28 to 35
//! MiB (over its 32); with blocks from 16 KiB on the system's they are
//! 294 and 29 MiB, and big.db's messages take as long as with mimalloc
//! alone. Which allocator holds a block is told by its size, which every
//! call of [`GlobalAlloc`] carries.
//!
//! mimalloc is built as its version 2 without transparent huge pages
//! (Cargo.toml): its version 3, and huge pages (a 2 MiB page zeroed on its
//! first touch and split again at exit), cost a short run a tenth more.
//! The binary names it ([`Heap`]'s parameter), not this library: mimalloc
//! starts in every process it is linked into (a constructor reading its
//! options from the environment, a tenth of a millisecond), and only
//! agy-encode hands records from thread to thread.

use std::alloc::{GlobalAlloc, Layout, System};

/// Blocks of at least this many bytes come from the system allocator.
pub const LARGE: usize = 16 << 10;

/// Small blocks from `Small` (mimalloc), large ones from the system: see
/// the module.
pub struct Heap<Small>(pub Small);

fn is_large(size: usize) -> bool {
    size >= LARGE
}

// SAFETY: each call goes to the allocator its block's size names, and a
// block's size is the same in every call about it (the GlobalAlloc
// contract: dealloc and realloc get the layout it was allocated with), so
// a block is freed or grown by the allocator that gave it. A realloc that
// crosses LARGE allocates from the other allocator, copies what both
// sizes hold, and frees the old block where it came from.
unsafe impl<Small: GlobalAlloc> GlobalAlloc for Heap<Small> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match is_large(layout.size()) {
            true => unsafe { System.alloc(layout) },
            false => unsafe { self.0.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match is_large(layout.size()) {
            true => unsafe { System.alloc_zeroed(layout) },
            false => unsafe { self.0.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match is_large(layout.size()) {
            true => unsafe { System.dealloc(ptr, layout) },
            false => unsafe { self.0.dealloc(ptr, layout) },
        }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        match (is_large(layout.size()), is_large(new_size)) {
            (true, true) => unsafe { System.realloc(ptr, layout, new_size) },
            (false, false) => unsafe { self.0.realloc(ptr, layout, new_size) },
            _ => {
                // SAFETY: the caller promises new_size, rounded up to the
                // alignment, does not overflow isize (realloc's contract).
                let new_layout =
                    unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
                let new = unsafe { self.alloc(new_layout) };
                if !new.is_null() {
                    // SAFETY: both blocks hold at least the smaller size
                    // and are different blocks.
                    unsafe {
                        std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                        self.dealloc(ptr, layout);
                    }
                }
                new
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What agy-encode runs with.
    const HEAP: Heap<mimalloc::MiMalloc> = Heap(mimalloc::MiMalloc);

    /// A block keeps its bytes through every kind of growth and shrinking
    /// (small to small, across [`LARGE`] both ways, large to large), and a
    /// zeroed one is zeroed, at the alignments std's types ask for.
    #[test]
    fn blocks_keep_their_bytes_whichever_allocator_holds_them() {
        let sizes = [16, 4000, LARGE - 1, LARGE, 3 * LARGE + 5, 100, LARGE + 1, 7];
        for align in [1, 8, 64, 4096] {
            let mut layout = Layout::from_size_align(sizes[0], align).unwrap();
            // SAFETY: each call gets the block and layout the one before gave.
            unsafe {
                let mut ptr = HEAP.alloc(layout);
                assert!(!ptr.is_null());
                let mut held = layout.size();
                std::ptr::write_bytes(ptr, 0xa5, held);
                for &size in &sizes[1..] {
                    ptr = HEAP.realloc(ptr, layout, size);
                    assert!(!ptr.is_null());
                    assert_eq!(ptr as usize % align, 0, "aligned to {align}");
                    let kept = held.min(size);
                    let bytes = std::slice::from_raw_parts(ptr, kept);
                    assert!(bytes.iter().all(|&b| b == 0xa5), "{held} -> {size}");
                    layout = Layout::from_size_align(size, align).unwrap();
                    std::ptr::write_bytes(ptr, 0xa5, size);
                    held = size;
                }
                HEAP.dealloc(ptr, layout);
                for size in [24, LARGE + 3] {
                    let layout = Layout::from_size_align(size, align).unwrap();
                    let ptr = HEAP.alloc_zeroed(layout);
                    assert!(std::slice::from_raw_parts(ptr, size)
                        .iter()
                        .all(|&b| b == 0));
                    HEAP.dealloc(ptr, layout);
                }
            }
        }
    }
}
