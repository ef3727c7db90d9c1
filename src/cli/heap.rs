//! The allocator of a binary that starts a second thread part way through
//! a run: from then on, small blocks from mimalloc; everything else,
//! always, from the system's.
//!
//! agy-encode parses a long input a batch ahead on a second thread
//! ([`crate::stream::ahead`]): each record's strings and vectors are
//! allocated there. They were freed on the main thread once encoded.
//! glibc's malloc keeps a thread's blocks in that thread's arena, and a
//! free from another thread takes that arena's lock, which the parsing
//! thread holds for its own allocations: on big.db's messages the two
//! waited on it in turn (`__lll_lock_wait_private` was where most of the
//! main thread's context switches were), and the read-ahead took as long
//! as reading in one thread, for half again the CPU. mimalloc puts a block
//! that another thread frees on a list of its own, without a lock. The
//! records now go back to the parsing thread with their batch and are
//! freed there, and glibc's malloc alone no longer waits (300-550 context
//! switches a run, as with mimalloc, against 2,400-3,200); mimalloc is
//! kept for agy-encode as the faster of the two there: 30 runs taking
//! turns, glibc's took 3.6 % more CPU and 4 % more time. agy-render met the
//! same lock once a long page's calls went to its spooling thread
//! (`render::body`), each with its input copied on the rendering
//! thread and freed on the other: 180 -> 1,100 context switches a run on
//! big.db's messages, nine in ten of them waiting on that lock, and a
//! fifth more CPU; with this heap, 50-80.
//!
//! Only from [`Heap::share`] on, when the thread starts: until then a run
//! allocates as it would without this (mimalloc's pages, touched by a
//! short run, cost examples/sample 0.2 ms of its 1.5, and a
//! single-threaded `agy-encode --onto` 6 MiB more, over its 32). A block
//! is freed where it is, as mimalloc itself tells (`mi_is_in_heap_region`),
//! so blocks from before and after the switch mix freely.
//!
//! Blocks of [`LARGE`] and more stay with the system allocator even then:
//! they are few (it was the many small ones that met on the lock), glibc
//! grows a block of megabytes in place (`mremap`) where mimalloc copies it
//! into a new one, and it gives memory back sooner. With mimalloc for
//! every block under a MiB, agy-encode's peak on a 50 MB prompt rose from
//! 293 to 417 MiB (its output row grows by doubling: over twice its
//! longest line); with 16 KiB, 294 MiB, and big.db's messages take as long.
//!
//! mimalloc is built as its version 2 without transparent huge pages
//! (Cargo.toml): its version 3, and huge pages (a 2 MiB page zeroed on its
//! first touch and split again at exit), cost a short run a tenth more.
//! The binary names it ([`Heap`]'s parameter), not this library: mimalloc
//! starts in every process it is linked into (a constructor reading its
//! options from the environment), and only agy-encode and agy-render
//! have a second thread allocate.

use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::c_void;
use std::sync::atomic::{AtomicBool, Ordering};

/// Blocks of at least this many bytes come from the system allocator.
pub const LARGE: usize = 16 << 10;

/// Whether an allocator holds a block: mimalloc's `mi_is_in_heap_region`,
/// which reads its map of segments and may be asked about any pointer.
pub type Holds = unsafe extern "C" fn(*const c_void) -> bool;

/// Small blocks from `Small` (mimalloc) once [`Heap::share`] is called,
/// everything else from the system: see the module.
pub struct Heap<Small> {
    small: Small,
    holds: Holds,
    /// Whether new small blocks come from `small`.
    shared: AtomicBool,
}

impl<Small> Heap<Small> {
    /// Small blocks from `small`, whose blocks `holds` tells, once shared.
    pub const fn new(small: Small, holds: Holds) -> Heap<Small> {
        Heap {
            small,
            holds,
            shared: AtomicBool::new(false),
        }
    }

    /// From now on new small blocks come from the small-block allocator:
    /// called when blocks start going from thread to thread.
    pub fn share(&self) {
        self.shared.store(true, Ordering::Relaxed);
    }

    /// Whether a new block of `size` bytes comes from `small`.
    fn new_in_small(&self, size: usize) -> bool {
        !is_large(size) && self.shared.load(Ordering::Relaxed)
    }

    /// Whether the block of `size` bytes at `ptr` is `small`'s. Before the
    /// heap is shared no block is, and `small` is not asked: most runs
    /// never share it (a short input), and each free asked it. A block of
    /// `small`'s was allocated after its thread saw `shared` set, and is
    /// freed after it was allocated, so the free sees it set too: the flag
    /// is never cleared, and a later read never sees an older value.
    fn in_small(&self, ptr: *mut u8, size: usize) -> bool {
        // SAFETY: `holds` may be asked about any pointer (see Holds).
        !is_large(size)
            && self.shared.load(Ordering::Relaxed)
            && unsafe { (self.holds)(ptr.cast()) }
    }
}

fn is_large(size: usize) -> bool {
    size >= LARGE
}

// SAFETY: a block is freed, and grown in place, by the allocator that
// holds it, as that allocator itself tells (`holds`), or, for a block of
// LARGE or more, which only the system's ever holds, by its size, which is
// the same in every call about it (the GlobalAlloc contract). A realloc
// that moves a block to the other allocator (a small one of mimalloc's
// grown to LARGE) allocates there, copies what both sizes hold, and frees
// the old block where it is.
unsafe impl<Small: GlobalAlloc> GlobalAlloc for Heap<Small> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        match self.new_in_small(layout.size()) {
            true => unsafe { self.small.alloc(layout) },
            false => unsafe { System.alloc(layout) },
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        match self.new_in_small(layout.size()) {
            true => unsafe { self.small.alloc_zeroed(layout) },
            false => unsafe { System.alloc_zeroed(layout) },
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        match self.in_small(ptr, layout.size()) {
            true => unsafe { self.small.dealloc(ptr, layout) },
            false => unsafe { System.dealloc(ptr, layout) },
        }
    }

    /// A block stays with its allocator, but for one of mimalloc's grown
    /// to [`LARGE`] or more, which moves to the system's.
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if !self.in_small(ptr, layout.size()) {
            return unsafe { System.realloc(ptr, layout, new_size) };
        }
        if !is_large(new_size) {
            return unsafe { self.small.realloc(ptr, layout, new_size) };
        }
        // SAFETY: the caller promises new_size, rounded up to the
        // alignment, does not overflow isize (realloc's contract).
        let new_layout = unsafe { Layout::from_size_align_unchecked(new_size, layout.align()) };
        let new = unsafe { System.alloc(new_layout) };
        if !new.is_null() {
            // SAFETY: both blocks hold at least the smaller size and are
            // different blocks.
            unsafe {
                std::ptr::copy_nonoverlapping(ptr, new, layout.size().min(new_size));
                self.small.dealloc(ptr, layout);
            }
        }
        new
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use libmimalloc_sys::mi_is_in_heap_region;
    use mimalloc::MiMalloc;

    fn holds(ptr: *mut u8) -> bool {
        // SAFETY: it may be asked about any pointer.
        unsafe { mi_is_in_heap_region(ptr.cast()) }
    }

    /// Takes the block at `ptr` (`size` bytes, aligned to `align`, filled
    /// with 0xa5) through every kind of growth and shrinking: small to
    /// small, across [`LARGE`] both ways, large to large; checks that its
    /// bytes stay, and frees it.
    ///
    /// # Safety
    /// `ptr` is a block of `heap`'s of that layout.
    unsafe fn walk(heap: &Heap<MiMalloc>, mut ptr: *mut u8, mut size: usize, align: usize) {
        for new_size in [4000, LARGE - 1, LARGE, 3 * LARGE + 5, 100, LARGE + 1, 7] {
            let layout = Layout::from_size_align(size, align).unwrap();
            // SAFETY: the block and layout the call before gave.
            unsafe {
                ptr = heap.realloc(ptr, layout, new_size);
                assert!(!ptr.is_null());
                assert_eq!(ptr as usize % align, 0, "aligned to {align}");
                let kept = std::slice::from_raw_parts(ptr, size.min(new_size));
                assert!(kept.iter().all(|&b| b == 0xa5), "{size} -> {new_size}");
                std::ptr::write_bytes(ptr, 0xa5, new_size);
            }
            if is_large(new_size) {
                assert!(!holds(ptr), "a large block is the system's");
            }
            size = new_size;
        }
        // SAFETY: the block and layout the last call gave.
        unsafe { heap.dealloc(ptr, Layout::from_size_align(size, align).unwrap()) };
    }

    /// A block keeps its bytes through every growth and shrinking whichever
    /// allocator holds it: one allocated before the heap was shared (the
    /// system's, and it stays so), one after (mimalloc's until it grows
    /// large); a zeroed one is zeroed; at the alignments std's types ask for.
    #[test]
    fn blocks_keep_their_bytes_whichever_allocator_holds_them() {
        for align in [1, 8, 64, 4096] {
            let heap = Heap::new(MiMalloc, mi_is_in_heap_region);
            let layout = Layout::from_size_align(16, align).unwrap();
            // SAFETY: each block is walked with its own layout.
            unsafe {
                let before = heap.alloc(layout);
                assert!(!before.is_null() && !holds(before));
                std::ptr::write_bytes(before, 0xa5, 16);
                heap.share();
                let after = heap.alloc(layout);
                assert!(!after.is_null() && holds(after));
                std::ptr::write_bytes(after, 0xa5, 16);
                walk(&heap, before, 16, align);
                walk(&heap, after, 16, align);
                for size in [24, LARGE + 3] {
                    let layout = Layout::from_size_align(size, align).unwrap();
                    let ptr = heap.alloc_zeroed(layout);
                    assert_eq!(holds(ptr), !is_large(size));
                    assert!(std::slice::from_raw_parts(ptr, size)
                        .iter()
                        .all(|&b| b == 0));
                    heap.dealloc(ptr, layout);
                }
            }
        }
    }
}
