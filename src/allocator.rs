//! The process's use of glibc's allocator: its tuning at start and the return of freed pages to
//! the system, called by the server after heavy calls and large replies and by the search index
//! after it built or refreshed its segment (a build's batches free several MiB at once).

/// Tunes glibc's allocator; a program calls it first, before any thread starts (the server's `main`
/// and the search benches, which measure memory as the server uses it; docs/performance.md has the
/// figures): at most two arenas instead of eight per core, so memory freed by one thread's large
/// reply is not kept in an arena no other thread uses; and a fixed 256 KiB mmap threshold, so
/// every large buffer (a reply's serialization, a tree's JSON) is mapped on its own and returned
/// to the system when freed, instead of glibc raising the threshold after the first such free and keeping the next
/// ones in the heap. `FORGEMCP_MALLOC_DEFAULTS=1` keeps glibc's defaults (for comparisons).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub fn tune_malloc() {
    if std::env::var_os("FORGEMCP_MALLOC_DEFAULTS").is_some_and(|v| v == "1") {
        return;
    }
    // SAFETY: mallopt only sets allocator parameters; it is called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 2);
        libc::mallopt(libc::M_MMAP_THRESHOLD, 256 * 1024);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn tune_malloc() {}

/// Gives the pages of freed heap memory back to the system (glibc's `malloc_trim`), after a heavy
/// call, a large reply or an index build: glibc otherwise keeps them for the process, and the freed chunks of one
/// large call (a tree's JSON, a search's buffers) stay resident under the next one's.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[allow(unsafe_code)]
pub fn release_freed_memory() {
    // SAFETY: malloc_trim only returns free memory of the allocator's own arenas to the kernel.
    unsafe {
        libc::malloc_trim(0);
    }
}

#[cfg(not(all(target_os = "linux", target_env = "gnu")))]
pub fn release_freed_memory() {}
