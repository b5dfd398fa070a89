// Reading one container's log as the shim writes it (process_launch.h): the live file
// `base` and its rotations base.1 (newer) ... base.N (older), each at most the
// configured size. Tails are read backwards from the end in blocks, so `--tail 5` on
// a log of any size reads a few KiB, never the whole file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace muster::server {

// The existing files of the log, oldest first: base.N ... base.1, base.
std::vector<std::string> LogSegments(const std::string& base);

// The last `lines` lines (a final newline ends the last line rather than starting an
// empty one); everything when the log has fewer.
std::string ReadTailLines(const std::vector<std::string>& segments, int64_t lines);

// The log from its start, at most `limit` bytes.
std::string ReadHead(const std::vector<std::string>& segments, uint64_t limit);

// Total size of the segments.
uint64_t LogSize(const std::vector<std::string>& segments);

}  // namespace muster::server
