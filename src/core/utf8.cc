#include "core/utf8.h"

#include <cstdint>

namespace muster {

bool IsValidUtf8(std::string_view text, size_t* bad_at) {
  const auto* s = reinterpret_cast<const uint8_t*>(text.data());
  const size_t n = text.size();
  for (size_t i = 0; i < n;) {
    const uint8_t c = s[i];
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    uint8_t lo = 0x80, hi = 0xBF;  // the second byte's range (Table 3-7 of Unicode)
    if (c >= 0xC2 && c <= 0xDF) {
      len = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
      len = 3;
      if (c == 0xE0) lo = 0xA0;  // no overlong forms
      if (c == 0xED) hi = 0x9F;  // no surrogates
    } else if (c >= 0xF0 && c <= 0xF4) {
      len = 4;
      if (c == 0xF0) lo = 0x90;  // no overlong forms
      if (c == 0xF4) hi = 0x8F;  // nothing above U+10FFFF
    }
    bool ok = len != 0 && i + len <= n && s[i + 1] >= lo && s[i + 1] <= hi;
    for (size_t k = 2; ok && k < len; ++k) ok = s[i + k] >= 0x80 && s[i + k] <= 0xBF;
    if (!ok) {
      if (bad_at != nullptr) *bad_at = i;
      return false;
    }
    i += len;
  }
  return true;
}

}  // namespace muster
