// control/process_heap on the allocator the test binary runs on: glibc's malloc in
// control_test, jemalloc in heap_jemalloc_test (the same file, built with
// MUSTER_JEMALLOC and linked with jemalloc; CMakeLists.txt).
#include "control/process_heap.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace muster::control {
namespace {

#if defined(MUSTER_JEMALLOC)
constexpr bool kJemalloc = true;
#else
constexpr bool kJemalloc = false;
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizer = true;
#else
constexpr bool kSanitizer = false;
#endif

// Resident bytes of this process (/proc/self/statm's second field).
long ResidentBytes() {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  long size = 0, resident = -1;
  if (std::fscanf(f, "%ld %ld", &size, &resident) != 2) resident = -1;
  std::fclose(f);
  return resident < 0 ? -1 : resident * sysconf(_SC_PAGESIZE);
}

TEST(ProcessHeapTest, NamesTheAllocatorItRunsOn) {
  EXPECT_EQ(JemallocActive(), kJemalloc);
  EXPECT_EQ(HeapAllocatorName(), kSanitizer ? "sanitizer" : kJemalloc ? "jemalloc" : "glibc");
  // glibc's tuning calls are glibc's only: under jemalloc or a sanitizer they change
  // nothing.
  EXPECT_EQ(TurnOffFastbins(), !kJemalloc && !kSanitizer);
}

// Memory freed in the middle of the heap stays resident (glibc returns only the top
// of its heap on free; jemalloc keeps dirty pages for its decay time) until
// ReleaseFreeHeap hands it back.
TEST(ProcessHeapTest, ReleasingTheFreeHeapReturnsFreedPages) {
  if (kSanitizer) {
    EXPECT_FALSE(ReleaseFreeHeap());
    GTEST_SKIP() << "the sanitizer's allocator keeps freed memory in quarantine";
  }
  constexpr size_t kBlock = 4096;
  constexpr size_t kBlocks = 32768;  // 128 MiB
  std::vector<char*> blocks(kBlocks);
  for (char*& b : blocks) {
    b = static_cast<char*>(std::malloc(kBlock));
    ASSERT_NE(b, nullptr);
    std::memset(b, 1, kBlock);
  }
  char* pin = static_cast<char*>(std::malloc(kBlock));  // above the blocks: no top to trim
  std::memset(pin, 1, kBlock);
  for (char* b : blocks) std::free(b);
  const long freed = ResidentBytes();
  ASSERT_TRUE(ReleaseFreeHeap());
  const long released = ResidentBytes();
  std::free(pin);
  ASSERT_GT(freed, 0);
  EXPECT_GT(freed - released, static_cast<long>(kBlock * kBlocks / 2))
      << "resident after free " << freed << ", after release " << released;
}

}  // namespace
}  // namespace muster::control
