// libFuzzer entry: bytes of one connection through muster serve's request parser and
// API handler (fuzz/http_api_harness.h). Seeds: fuzz/http_corpus.
#include <cstddef>
#include <cstdint>

#include "http_api_harness.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static auto* harness = new muster::fuzz::HttpApiHarness();  // one store for the run
  harness->Run(data, size);
  return 0;
}
