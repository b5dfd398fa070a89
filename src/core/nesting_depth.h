// ExceedsNestingDepth: whether JSON (or YAML flow) text nests arrays and objects
// deeper than a limit, found with one linear scan before any recursive parser,
// printer or comparison sees the text: a body of 100,000 '[' must be refused, not
// overflow a thread's stack.
#pragma once

#include <cstddef>
#include <string_view>

namespace muster {

// Brackets inside JSON strings (with their escapes) do not count.
bool ExceedsNestingDepth(std::string_view text, size_t max_depth);

}  // namespace muster
