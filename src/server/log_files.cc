#include "server/log_files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace muster::server {
namespace {

constexpr size_t kBlock = 64 << 10;
constexpr int kMaxSegments = 1000;

// Reads `size` bytes at `offset` of `fd` into `out` (appending).
void ReadAt(int fd, uint64_t offset, size_t size, std::string& out) {
  size_t start = out.size();
  out.resize(start + size);
  size_t got = 0;
  while (got < size) {
    ssize_t n = ::pread(fd, out.data() + start + got, size - got, static_cast<off_t>(offset + got));
    if (n <= 0) break;
    got += static_cast<size_t>(n);
  }
  out.resize(start + got);
}

uint64_t FileSize(const std::string& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
}

}  // namespace

std::vector<std::string> LogSegments(const std::string& base) {
  std::vector<std::string> newest_first;
  for (int k = 0; k < kMaxSegments; ++k) {
    std::string path = k == 0 ? base : base + "." + std::to_string(k);
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) {
      if (k == 0) continue;  // a rotation between two files: older ones may still exist
      break;
    }
    newest_first.push_back(path);
  }
  return {newest_first.rbegin(), newest_first.rend()};
}

uint64_t LogSize(const std::vector<std::string>& segments) {
  uint64_t total = 0;
  for (const auto& s : segments) total += FileSize(s);
  return total;
}

std::string ReadTailLines(const std::vector<std::string>& segments, int64_t lines) {
  if (lines <= 0) return "";
  // Blocks read backwards, newest segment first, until `lines` newlines are found
  // before the end (a trailing newline does not count: it ends the last line).
  std::vector<std::string> blocks;  // newest first
  int64_t newlines = 0;
  bool trailing_checked = false;
  bool done = false;
  for (auto seg = segments.rbegin(); seg != segments.rend() && !done; ++seg) {
    int fd = ::open(seg->c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st {};
    uint64_t end = ::fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
    while (end > 0 && !done) {
      uint64_t begin = end > kBlock ? end - kBlock : 0;
      std::string block;
      ReadAt(fd, begin, static_cast<size_t>(end - begin), block);
      end = begin;
      size_t stop = block.size();
      if (!trailing_checked && !block.empty()) {
        trailing_checked = true;
        if (block.back() == '\n') --stop;
      }
      // Scan this block backwards for the line that starts the tail.
      for (size_t i = stop; i > 0; --i) {
        if (block[i - 1] != '\n') continue;
        if (++newlines == lines) {
          block.erase(0, i);
          done = true;
          break;
        }
      }
      blocks.push_back(std::move(block));
    }
    ::close(fd);
  }
  std::string out;
  for (auto it = blocks.rbegin(); it != blocks.rend(); ++it) out += *it;
  return out;
}

std::string ReadHead(const std::vector<std::string>& segments, uint64_t limit) {
  std::string out;
  for (const auto& seg : segments) {
    if (out.size() >= limit) break;
    int fd = ::open(seg.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st {};
    uint64_t size = ::fstat(fd, &st) == 0 ? static_cast<uint64_t>(st.st_size) : 0;
    ReadAt(fd, 0, static_cast<size_t>(std::min<uint64_t>(size, limit - out.size())), out);
    ::close(fd);
  }
  return out;
}

}  // namespace muster::server
