#include "server/log_stream.h"

#include <sys/stat.h>

#include <algorithm>
#include <fstream>
#include <thread>
#include <utility>

namespace muster::server {
namespace {

// Bounds one chunk, so a large backlog is sent in pieces rather than one buffer.
constexpr uint64_t kMaxChunk = 64u << 10;

}  // namespace

LogStream::LogStream(ObjectStore& store, control::ObjectKey pod, std::string path,
                     std::string initial, uint64_t offset, std::optional<uint64_t> limit_bytes)
    : store_(store),
      pod_(std::move(pod)),
      path_(std::move(path)),
      offset_(offset),
      remaining_(limit_bytes) {
  pending_ = Capped(std::move(initial));
  struct stat st {};
  if (::stat(path_.c_str(), &st) == 0) inode_ = st.st_ino;
}

std::string LogStream::Capped(std::string bytes) {
  if (!remaining_) return bytes;
  if (bytes.size() > *remaining_) bytes.resize(*remaining_);
  *remaining_ -= bytes.size();
  return bytes;
}

std::string LogStream::ReadAppended() {
  if (remaining_ && *remaining_ == 0) return "";
  struct stat st {};
  if (::stat(path_.c_str(), &st) != 0) return "";
  const uint64_t size = static_cast<uint64_t>(st.st_size);
  // Another file (a restart moved the old one to log.1) or a truncated one: the new
  // attempt's output starts at 0.
  if (st.st_ino != inode_ || size < offset_) {
    inode_ = st.st_ino;
    offset_ = 0;
  }
  if (size == offset_) return "";
  std::ifstream in(path_, std::ios::binary);
  if (!in) return "";
  in.seekg(static_cast<std::streamoff>(offset_));
  std::string bytes(std::min(size - offset_, kMaxChunk), '\0');
  in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  bytes.resize(static_cast<size_t>(in.gcount()));
  offset_ += bytes.size();
  return Capped(std::move(bytes));
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
  std::string out = ReadAppended();
  if (!out.empty()) return out;
  if ((remaining_ && *remaining_ == 0) || store_.hub().closed()) {
    done_ = true;
    return std::nullopt;
  }
  if (PodFinished()) {
    // The last bytes may have landed between the read above and the phase change;
    // the stream ends once a read after the pod finished finds nothing more.
    out = ReadAppended();
    if (out.empty()) {
      done_ = true;
      return std::nullopt;
    }
    return out;
  }
  std::this_thread::sleep_for(std::min(wait, kPollInterval));
  return ReadAppended();
}

}  // namespace muster::server
