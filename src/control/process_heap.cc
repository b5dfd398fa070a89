#include "control/process_heap.h"

#include <cstddef>
#include <string>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

// jemalloc's control interface. Weak, so that this layer links into binaries without
// jemalloc (tests, sanitizer builds): there the address is null. No jemalloc header:
// unprefixed, it redeclares malloc and free.
// NOLINTNEXTLINE(readability-identifier-naming): jemalloc's name
extern "C" int mallctl(const char* name, void* oldp, size_t* oldlenp, void* newp, size_t newlen)
    __attribute__((weak));

namespace muster::control {
namespace {

// ASan's and TSan's allocators replace malloc (and intercept mallopt and malloc_trim,
// keeping freed memory in quarantine).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitizerHeap = true;
#else
constexpr bool kSanitizerHeap = false;
#endif

// glibc's own malloc: glibc, and neither jemalloc nor a sanitizer in its place.
bool GlibcHeap() {
#if defined(__GLIBC__)
  return !kSanitizerHeap && !JemallocActive();
#else
  return false;
#endif
}

}  // namespace

bool JemallocActive() { return &mallctl != nullptr; }

std::string_view HeapAllocatorName() {
  if (kSanitizerHeap) return "sanitizer";
  return JemallocActive() ? "jemalloc" : "glibc";
}

void TuneHeapForServer() {
#if defined(__GLIBC__)
  if (!GlibcHeap()) return;
  mallopt(M_MMAP_THRESHOLD, 256 * 1024);
  mallopt(M_ARENA_MAX, 4);
#endif
}

bool TurnOffFastbins() {
#if defined(__GLIBC__)
  if (!GlibcHeap()) return false;
  return mallopt(M_MXFAST, 0) == 1;
#else
  return false;
#endif
}

bool ReleaseFreeHeap() {
  if (JemallocActive()) {
    // "arena.<i>.purge" for every arena: reading the count avoids depending on the
    // value of MALLCTL_ARENAS_ALL from a header this file does not include.
    unsigned arenas = 0;
    size_t len = sizeof(arenas);
    if (mallctl("arenas.narenas", &arenas, &len, nullptr, 0) != 0) return false;
    for (unsigned i = 0; i < arenas; ++i) {
      const std::string name = "arena." + std::to_string(i) + ".purge";
      mallctl(name.c_str(), nullptr, nullptr, nullptr, 0);  // EFAULT for an arena not made
    }
    return true;
  }
#if defined(__GLIBC__)
  if (!GlibcHeap()) return false;
  malloc_trim(0);
  return true;
#else
  return false;
#endif
}

}  // namespace muster::control
