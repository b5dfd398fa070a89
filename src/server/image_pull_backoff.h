// The kubelet's handling of a container whose image it cannot get (image_manager.go
// and the pod worker's re-sync), for the local executor under podman. Pure: the
// caller passes the time (the executor's injected clock) and records the Events.
//
//   - a failed pull: the container waits with reason ErrImagePull (the error as its
//     message), Events Failed "Failed to pull image "X": ERR" and Failed "Error:
//     ErrImagePull"; the next pull waits out a back-off per pod and image that starts
//     at `initial_seconds` and doubles after each further failure up to
//     `max_seconds` (kubelet's backOffPeriod 10 s and MaxContainerBackOff 300 s);
//     one that saw no failure for 2 x max starts afresh (flowcontrol.Backoff);
//   - the pod is looked at again `initial_seconds` after each look (the pod worker
//     re-syncs a pod whose sync failed after backOffPeriod): still in its back-off,
//     the container waits with reason ImagePullBackOff, message "Back-off pulling
//     image "X"", Events BackOff (Normal, same message) and Failed "Error:
//     ImagePullBackOff"; past it, the pull is tried again;
//   - imagePullPolicy Never and no such image: reason ErrImageNeverPull with the
//     kubelet's message, Events ErrImageNeverPull and Failed "Error:
//     ErrImageNeverPull"; no back-off (upstream checks before its back-off), looked at
//     again every `initial_seconds`.
// The pod stays Pending throughout: upstream never fails a pod for its image.
//
// Unlike the kubelet's (in memory), the back-off outlives a restart of the server:
// Save/Load carry each entry's last failure and delay (wall-clock times), so a pod
// adopted after a kill -9 waits out what was left instead of starting again at
// `initial_seconds`.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "core/clock.h"

namespace muster::server {

struct ImagePullBackOffSettings {
  double initial_seconds = 10;  // kubelet's backOffPeriod (also its re-sync of the pod)
  double max_seconds = 300;     // kubelet's MaxContainerBackOff
};

struct PodEventNote {
  std::string type;  // Normal, Warning
  std::string reason;
  std::string message;
};

// What the container shows now, and the Events to record.
struct ImageWaitState {
  std::string reason;   // ErrImagePull, ImagePullBackOff, ErrImageNeverPull
  std::string message;  // the container's waiting message
  std::vector<PodEventNote> events;
};

// The kubelet's Events of the pull step (image_manager.go, v1.32): Pulling before a
// pull, Pulled after one (its duration as Go prints a time.Duration truncated to
// milliseconds) or for an image already here.
PodEventNote PullingEvent(const std::string& image);
PodEventNote PulledEvent(const std::string& image, double seconds, int64_t size_bytes);
PodEventNote AlreadyPresentEvent(const std::string& image);
// Go's time.Duration.String() of `seconds` truncated to milliseconds: "0s", "250ms",
// "1.5s", "2m3.004s", "1h0m0s".
std::string GoDuration(double seconds);

class ImagePullBackOff {
 public:
  explicit ImagePullBackOff(ImagePullBackOffSettings settings = {}) : settings_(settings) {}

  // Keys are a pod and its image ("<pod id>|<image>", as upstream's "<uid>_<image>").
  static std::string Key(const std::string& pod_id, const std::string& image);

  // The pull of `image` for `key` failed with `error` at `now`.
  ImageWaitState PullFailed(const std::string& key, const std::string& image,
                            const std::string& error, Time now);
  // imagePullPolicy Never and `image` is not here.
  ImageWaitState NeverPull(const std::string& key, const std::string& image, Time now);

  enum class Next { kWait, kBackOff, kRetry };
  // The pod's next look at `now`: kWait before it is due (nothing changes), kBackOff
  // (`state` filled) while its back-off runs, kRetry when the start is to be tried
  // again (a Never pod's image is checked again).
  Next Sync(const std::string& key, const std::string& image, Time now, ImageWaitState* state);

  // The seconds the next pull of `key` waits after its last failure (0: none).
  double Delay(const std::string& key) const;
  // The pod started, stopped or was deleted: its back-off is dropped (a pod that
  // starts again here is a new gang attempt's, a new pod upstream: a new uid).
  void Forget(const std::string& key) { version_ += entries_.erase(key); }
  bool Waiting(const std::string& key) const { return entries_.count(key) != 0; }
  size_t size() const { return entries_.size(); }
  // Drops the entries of pods not in `pod_ids` (Key's first part).
  void Retain(const std::vector<std::string>& pod_ids);

  // The entries, for a restart: {key: {image, lastFailure, delay, never}}. A loaded
  // entry's pod is looked at again at once (its first Sync is due).
  nlohmann::json Save() const;
  void Load(const nlohmann::json& saved);
  // Counts changes worth saving (a failure, an entry dropped).
  uint64_t version() const { return version_; }

 private:
  struct Entry {
    Time last_failure = 0;
    double delay = 0;    // the current back-off
    Time next_sync = 0;  // the pod's next look
    bool never = false;  // ErrImageNeverPull: no back-off
    std::string image;
  };

  ImagePullBackOffSettings settings_;
  std::map<std::string, Entry> entries_;
  uint64_t version_ = 0;
};

}  // namespace muster::server
