#include "server/log_stream.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <thread>
#include <utility>

namespace muster::server {
namespace {

// Bounds one chunk, so a large backlog is sent in pieces rather than one buffer.
constexpr uint64_t kMaxChunk = 64u << 10;

// Up to kMaxChunk bytes of `fd` from its current position.
std::string ReadChunk(int fd) {
  std::string bytes(kMaxChunk, '\0');
  ssize_t n;
  do {
    n = ::read(fd, bytes.data(), bytes.size());
  } while (n < 0 && errno == EINTR);
  bytes.resize(n > 0 ? static_cast<size_t>(n) : 0);
  return bytes;
}

}  // namespace

LogStream::LogStream(ObjectStore& store, control::ObjectKey pod, std::string path,
                     std::string initial, uint64_t offset, std::optional<uint64_t> limit_bytes,
                     bool follow, std::vector<std::string> backlog)
    : store_(store),
      pod_(std::move(pod)),
      path_(std::move(path)),
      backlog_(backlog.begin(), backlog.end()),
      offset_(offset),
      remaining_(limit_bytes),
      follow_(follow) {
  pending_ = Capped(std::move(initial));
  // Opened now: the bytes before `offset` were read from this very file.
  fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd_ >= 0) {
    struct stat st {};
    if (::fstat(fd_, &st) != 0 || static_cast<uint64_t>(st.st_size) < offset_) offset_ = 0;
    ::lseek(fd_, static_cast<off_t>(offset_), SEEK_SET);
  }
}

LogStream::~LogStream() {
  CloseFile();
  if (backlog_fd_ >= 0) ::close(backlog_fd_);
}

void LogStream::CloseFile() {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
}

std::string LogStream::Capped(std::string bytes) {
  if (!remaining_) return bytes;
  if (bytes.size() > *remaining_) bytes.resize(*remaining_);
  *remaining_ -= bytes.size();
  return bytes;
}

std::string LogStream::ReadLive() {
  if (fd_ < 0) {
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    offset_ = 0;
    if (fd_ < 0) return "";
  }
  struct stat open_st {};
  if (::fstat(fd_, &open_st) == 0 && static_cast<uint64_t>(open_st.st_size) < offset_) {
    ::lseek(fd_, 0, SEEK_SET);  // truncated (a single-file log starting over)
    offset_ = 0;
  }
  std::string bytes = ReadChunk(fd_);
  offset_ += bytes.size();
  if (!bytes.empty()) return bytes;
  // At the end of the open file: if the path now names another file (rotated, or a
  // new attempt), that one is next, from its start.
  struct stat path_st {};
  if (::stat(path_.c_str(), &path_st) == 0 &&
      (path_st.st_ino != open_st.st_ino || path_st.st_dev != open_st.st_dev)) {
    CloseFile();
    fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC);
    offset_ = 0;
    if (fd_ < 0) return "";
    bytes = ReadChunk(fd_);
    offset_ += bytes.size();
  }
  return bytes;
}

std::string LogStream::ReadMore() {
  if (remaining_ && *remaining_ == 0) return "";
  while (!backlog_.empty() || backlog_fd_ >= 0) {
    if (backlog_fd_ < 0) {
      backlog_fd_ = ::open(backlog_.front().c_str(), O_RDONLY | O_CLOEXEC);
      backlog_.pop_front();
      if (backlog_fd_ < 0) continue;
    }
    std::string bytes = ReadChunk(backlog_fd_);
    if (!bytes.empty()) return Capped(std::move(bytes));
    ::close(backlog_fd_);
    backlog_fd_ = -1;
  }
  return Capped(ReadLive());
}

bool LogStream::PodFinished() const {
  auto pod = store_.Get(pod_);
  if (!pod.ok()) return true;  // deleted
  const nlohmann::json& o = *pod;
  if (!o.contains("status") || !o["status"].is_object()) return false;
  const std::string phase = o["status"].value("phase", "");
  return phase == "Succeeded" || phase == "Failed";
}

std::optional<std::string> LogStream::Next(std::chrono::milliseconds wait) {
  if (done_) return std::nullopt;
  if (!pending_.empty()) return std::exchange(pending_, "");
  std::string out = ReadMore();
  if (!out.empty()) return out;
  if ((remaining_ && *remaining_ == 0) || store_.hub().closed() || !follow_) {
    done_ = true;
    return std::nullopt;
  }
  if (PodFinished()) {
    // The last bytes may have landed between the read above and the phase change;
    // the stream ends once a read after the pod finished finds nothing more.
    out = ReadMore();
    if (out.empty()) {
      done_ = true;
      return std::nullopt;
    }
    return out;
  }
  std::this_thread::sleep_for(std::min(wait, kPollInterval));
  return ReadMore();
}

}  // namespace muster::server
