// The process's heap as serve and kube tune it. The muster binary links jemalloc
// (CMake's MUSTER_ALLOCATOR, the default outside sanitizer builds): its per-thread
// caches and size classes cut the allocation cost that every layer pays per object
// (side by side with glibc: 1.15-1.34x admissions per second, 1.25-1.28x serve
// submissions, -15 % muster kube CPU per pod on a real API server; docs/performance.md). Test
// binaries, sanitizer builds and
// `-DMUSTER_ALLOCATOR=system` run on glibc's malloc (or a sanitizer's), so every call here asks
// which allocator the process has and does what that one needs.
#pragma once

#include <string_view>

namespace muster::control {

// Whether malloc is jemalloc's: the binary linked it (or it was preloaded).
bool JemallocActive();

// "jemalloc", "sanitizer" (an ASan or TSan build: the sanitizer's allocator) or
// "glibc" (any other preloaded allocator reads as glibc: its tuning calls are glibc's
// and do nothing to the allocator in use).
std::string_view HeapAllocatorName();

// Set-up for a long-running server (serve, kube), before its threads start. glibc:
// a fixed 256 KiB mmap threshold and four arenas. glibc raises its threshold to the
// largest block freed so far, so after one large LIST body every later one comes from
// the arenas and fragments them and RSS follows the largest transient peaks (ten
// minutes of bench/serve_churn.sh: 135 MiB flat with it, 98 -> 190 MiB and rising
// without). jemalloc: nothing; the binary's malloc_conf (cli/main.cc) starts its
// background thread, which returns freed pages after its decay time.
void TuneHeapForServer();

// glibc only: turns fastbins off (M_MXFAST 0). libcurl allocates and frees a 16 KB
// buffer per request, and a free that large makes glibc consolidate every fastbin
// chunk freed since the last one (5 % of muster kube's CPU per bound pod); without
// fastbins small frees go to the per-thread cache and then straight to the bins.
// `muster kube` calls it with TuneHeapForServer. False where nothing was changed
// (jemalloc, a sanitizer, another C library).
bool TurnOffFastbins();

// Hands the heap's free pages back to the system now: jemalloc purges every arena,
// glibc runs malloc_trim(0). Walks every arena, so callers do it after a large drop
// (kube's MemoryTrimmer) or seldom (serve's garbage collector, once a minute). False where the
// allocator offers no way (sanitizers keep freed memory in quarantine).
bool ReleaseFreeHeap();

}  // namespace muster::control
