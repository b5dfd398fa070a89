// libFuzzer entry: any bytes through DecodeText and the cross-object checks must
// neither crash, hang nor throw (CONTRACT section 2: "never crashes").
#include <cstddef>
#include <cstdint>
#include <string>

#include "api/decode.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string text(reinterpret_cast<const char*>(data), size);
  muster::api::DecodeResult result;
  muster::api::DecodeText(text, "fuzz.yaml", result);
  muster::api::ValidateCrossObject(result);
  muster::api::SortDiagnostics(result);
  for (const auto& d : result.diagnostics) (void)d.ToString();
  return 0;
}
