// LogStream: one `kubectl logs -f` request. Sends the log file's bytes as they are
// appended, polling the file (the executor writes it from another process, so
// there is nothing to wait on), until the pod has finished (status.phase Succeeded
// or Failed), the pod is deleted, the server stops or `limitBytes` is reached.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "server/object_store.h"

namespace muster::server {

class LogStream {
 public:
  // Streams `initial` first, then what is appended to `path` after byte `offset`.
  // `limit_bytes` caps everything sent, `initial` included (nullopt: no cap).
  LogStream(ObjectStore& store, control::ObjectKey pod, std::string path, std::string initial,
            uint64_t offset, std::optional<uint64_t> limit_bytes);

  // Same contract as WatchStream::Next: the next bytes, "" when nothing was appended
  // within `wait`, nullopt when the stream is over.
  std::optional<std::string> Next(std::chrono::milliseconds wait);

  // How often the file is looked at while nothing new is there.
  static constexpr std::chrono::milliseconds kPollInterval{150};

 private:
  std::string ReadAppended();
  bool PodFinished() const;
  std::string Capped(std::string bytes);

  ObjectStore& store_;
  control::ObjectKey pod_;
  std::string path_;
  std::string pending_;
  uint64_t offset_;
  uint64_t inode_ = 0;  // of the file `offset_` counts in
  std::optional<uint64_t> remaining_;
  bool done_ = false;
};

}  // namespace muster::server
