// LogStream: one `kubectl logs` answer that is too large for one body, or one
// `kubectl logs -f`. Sends `initial`, then whole older files (`backlog`, oldest
// first), then the live file from `offset`; when following, it keeps sending what is
// appended, polling the file (the shim writes it from another process, so there is
// nothing to wait on), and follows the live file across rotations (the shim renames
// log to log.1 and starts a new log: the renamed file is read to its end first), until
// the pod has finished (status.phase Succeeded or Failed), the pod is deleted, the
// server stops or `limitBytes` is reached.
#pragma once

#include <chrono>
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "server/object_store.h"

namespace muster::server {

class LogStream {
 public:
  // `limit_bytes` caps everything sent, `initial` included (nullopt: no cap).
  LogStream(ObjectStore& store, control::ObjectKey pod, std::string path, std::string initial,
            uint64_t offset, std::optional<uint64_t> limit_bytes, bool follow = true,
            std::vector<std::string> backlog = {});
  ~LogStream();
  LogStream(const LogStream&) = delete;
  LogStream& operator=(const LogStream&) = delete;

  // Same contract as WatchStream::Next: the next bytes, "" when nothing was appended
  // within `wait`, nullopt when the stream is over.
  std::optional<std::string> Next(std::chrono::milliseconds wait);

  // How often the file is looked at while nothing new is there.
  static constexpr std::chrono::milliseconds kPollInterval{150};

 private:
  std::string ReadMore();
  std::string ReadLive();
  bool PodFinished() const;
  std::string Capped(std::string bytes);
  void CloseFile();

  ObjectStore& store_;
  control::ObjectKey pod_;
  std::string path_;
  std::string pending_;
  std::deque<std::string> backlog_;
  int backlog_fd_ = -1;
  int fd_ = -1;  // the live file being read (kept open across a rotation)
  uint64_t offset_;
  std::optional<uint64_t> remaining_;
  bool follow_;
  bool done_ = false;
};

}  // namespace muster::server
