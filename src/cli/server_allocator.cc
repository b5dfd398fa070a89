#include "cli/server_allocator.h"

#include <malloc.h>

namespace muster::cli {

void TuneAllocatorForServer() {
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  mallopt(M_ARENA_MAX, 4);
}

}  // namespace muster::cli
