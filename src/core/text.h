// Small text helpers for annotation and configuration values ("a, b;c").
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace muster {

// `s` without leading and trailing spaces, tabs, CR and LF.
std::string_view TrimSpace(std::string_view s);

// `s` split at every `sep`, each piece trimmed; empty pieces are kept ("a,,b" has 3).
std::vector<std::string> SplitTrimmed(std::string_view s, char sep);

}  // namespace muster
