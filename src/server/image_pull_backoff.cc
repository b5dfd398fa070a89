#include "server/image_pull_backoff.h"

#include <algorithm>

namespace muster::server {
namespace {

std::string Quoted(const std::string& image) { return "\"" + image + "\""; }

}  // namespace

std::string ImagePullBackOff::Key(const std::string& pod_id, const std::string& image) {
  return pod_id + "|" + image;
}

ImageWaitState ImagePullBackOff::PullFailed(const std::string& key, const std::string& image,
                                            const std::string& error, Time now) {
  Entry& e = entries_[key];
  // flowcontrol.Backoff.Next: the first failure (or one after 2 x max without any)
  // waits the initial period, each further one twice the last, up to the maximum.
  const bool fresh = e.delay <= 0 || now - e.last_failure > 2 * settings_.max_seconds;
  e.delay = fresh ? settings_.initial_seconds : std::min(2 * e.delay, settings_.max_seconds);
  e.last_failure = now;
  e.next_sync = now + settings_.initial_seconds;
  e.never = false;
  ImageWaitState state{"ErrImagePull", error, {}};
  state.events.push_back(
      {"Warning", "Failed", "Failed to pull image " + Quoted(image) + ": " + error});
  state.events.push_back({"Warning", "Failed", "Error: ErrImagePull"});
  return state;
}

ImageWaitState ImagePullBackOff::NeverPull(const std::string& key, const std::string& image,
                                           Time now) {
  Entry& e = entries_[key];
  e.never = true;
  e.next_sync = now + settings_.initial_seconds;
  const std::string message =
      "Container image " + Quoted(image) + " is not present with pull policy of Never";
  ImageWaitState state{"ErrImageNeverPull", message, {}};
  state.events.push_back({"Warning", "ErrImageNeverPull", message});
  state.events.push_back({"Warning", "Failed", "Error: ErrImageNeverPull"});
  return state;
}

ImagePullBackOff::Next ImagePullBackOff::Sync(const std::string& key, const std::string& image,
                                              Time now, ImageWaitState* state) {
  auto it = entries_.find(key);
  if (it == entries_.end()) return Next::kRetry;
  Entry& e = it->second;
  if (now < e.next_sync) return Next::kWait;
  // IsInBackOffSinceUpdate: still within the back-off of the last failure.
  if (e.never || now - e.last_failure >= e.delay) return Next::kRetry;
  e.next_sync = std::min(now + settings_.initial_seconds, e.last_failure + e.delay);
  const std::string message = "Back-off pulling image " + Quoted(image);
  *state = ImageWaitState{"ImagePullBackOff", message, {}};
  state->events.push_back({"Normal", "BackOff", message});
  state->events.push_back({"Warning", "Failed", "Error: ImagePullBackOff"});
  return Next::kBackOff;
}

double ImagePullBackOff::Delay(const std::string& key) const {
  auto it = entries_.find(key);
  return it == entries_.end() || it->second.never ? 0 : it->second.delay;
}

}  // namespace muster::server
