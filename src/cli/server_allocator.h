// How the long-running modes (`muster serve`, `muster kube`) set up glibc's malloc.
// Not for the in-process commands (simulate, bench): their large, short-lived
// vectors are cheaper from the heap than from mmap.
#pragma once

namespace muster::cli {

// glibc raises its mmap threshold to the largest block freed so far (up to 32 MiB);
// after one large LIST body or parsed list, every later one comes from the heap
// arenas and fragments them, and the server's RSS follows its largest transient peaks
// rather than what it holds. A fixed 256 KiB threshold keeps large blocks in mmap
// (returned when freed), and four arenas bound how many heaps the HTTP and controller
// threads spread over. Ten minutes of create/finish/delete churn
// (bench/serve_churn.sh): RSS 135 MiB flat from the fifth minute on, against 98 ->
// 190 MiB and rising without it (docs/performance.md).
void TuneAllocatorForServer();

}  // namespace muster::cli
