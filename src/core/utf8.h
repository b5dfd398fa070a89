// Whether text is well-formed UTF-8 (RFC 3629: no overlong forms, no surrogates,
// nothing above U+10FFFF). JSON and YAML bodies must be: a YAML parser does not check
// (yaml-cpp passes the bytes through), and a stored object with an invalid byte in a
// key cannot be serialized again (the store's write failed with a 500).
#pragma once

#include <cstddef>
#include <string_view>

namespace muster {

// True when `text` is well-formed; else false with the offset of the first byte of
// the first ill-formed sequence in `*bad_at` (when given).
bool IsValidUtf8(std::string_view text, size_t* bad_at = nullptr);

}  // namespace muster
