#include "server/process_handle.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>

#include "server/process_stat.h"

namespace muster::server {

std::optional<ProcessHandle> ProcessHandle::Open(int pid, uint64_t start_ticks) {
  if (pid <= 0) return std::nullopt;
  const std::string path = "/proc/" + std::to_string(pid);
  const int dir = ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return std::nullopt;
  ProcessHandle handle(dir);
  // Checked after the open: the directory now names one process for good, so a match
  // here holds for every later read through it.
  auto text = handle.Read("stat", 4096);
  auto stat = text ? ParseProcessStat(*text) : std::nullopt;
  if (!stat || stat->start_ticks != start_ticks || stat->state == 'Z' || stat->state == 'X') {
    return std::nullopt;
  }
  return handle;
}

ProcessHandle& ProcessHandle::operator=(ProcessHandle&& other) noexcept {
  if (this != &other) {
    if (dir_ >= 0) ::close(dir_);
    dir_ = other.dir_;
    other.dir_ = -1;
  }
  return *this;
}

ProcessHandle::~ProcessHandle() {
  if (dir_ >= 0) ::close(dir_);
}

int ProcessHandle::OpenFile(const char* name) const {
  if (dir_ < 0) return -1;
  return ::openat(dir_, name, O_RDONLY | O_CLOEXEC);
}

std::optional<std::string> ProcessHandle::Read(const char* name, size_t max_bytes) const {
  const int fd = OpenFile(name);
  if (fd < 0) return std::nullopt;
  std::string out;
  char buf[4096];
  bool failed = false;
  while (out.size() < max_bytes) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) failed = true;
    if (n <= 0) break;
    out.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  if (failed) return std::nullopt;
  if (out.size() > max_bytes) out.resize(max_bytes);
  return out;
}

}  // namespace muster::server
