#include "server/image_pull_backoff.h"

#include <algorithm>
#include <cmath>
#include <set>

namespace muster::server {
namespace {

std::string Quoted(const std::string& image) { return "\"" + image + "\""; }

}  // namespace

std::string GoDuration(double seconds) {
  int64_t ms = static_cast<int64_t>(std::floor(std::max(0.0, seconds) * 1000 + 1e-6));
  if (ms == 0) return "0s";
  if (ms < 1000) return std::to_string(ms) + "ms";
  std::string out;
  const int64_t hours = ms / 3'600'000, minutes = ms / 60'000 % 60;
  if (hours > 0) out += std::to_string(hours) + "h";
  if (hours > 0 || minutes > 0) out += std::to_string(minutes) + "m";
  const int64_t sec_ms = ms % 60'000;
  out += std::to_string(sec_ms / 1000);
  if (int64_t frac = sec_ms % 1000; frac != 0) {
    std::string digits = std::to_string(frac);
    digits.insert(0, 3 - digits.size(), '0');
    while (digits.back() == '0') digits.pop_back();
    out += "." + digits;
  }
  return out + "s";
}

PodEventNote PullingEvent(const std::string& image) {
  return {"Normal", "Pulling", "Pulling image " + Quoted(image)};
}

PodEventNote PulledEvent(const std::string& image, double seconds, int64_t size_bytes) {
  // One pull at a time per image here, none queued: no waiting beyond the pull.
  const std::string took = GoDuration(seconds);
  return {"Normal", "Pulled",
          "Successfully pulled image " + Quoted(image) + " in " + took + " (" + took +
              " including waiting). Image size: " +
              std::to_string(std::max<int64_t>(0, size_bytes)) + " bytes."};
}

PodEventNote AlreadyPresentEvent(const std::string& image) {
  return {"Normal", "Pulled", "Container image " + Quoted(image) + " already present on machine"};
}

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
  e.image = image;
  ++version_;
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
  e.image = image;
  ++version_;
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

void ImagePullBackOff::Retain(const std::vector<std::string>& pod_ids) {
  const std::set<std::string> keep(pod_ids.begin(), pod_ids.end());
  for (auto it = entries_.begin(); it != entries_.end();) {
    if (keep.count(it->first.substr(0, it->first.find('|'))) != 0) {
      ++it;
      continue;
    }
    it = entries_.erase(it);
    ++version_;
  }
}

nlohmann::json ImagePullBackOff::Save() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, e] : entries_) {
    out[key] = {{"image", e.image},
                {"lastFailure", e.last_failure},
                {"delay", e.delay},
                {"never", e.never}};
  }
  return out;
}

void ImagePullBackOff::Load(const nlohmann::json& saved) {
  if (!saved.is_object()) return;
  for (const auto& [key, v] : saved.items()) {
    if (!v.is_object()) continue;
    Entry e;
    e.image = v.value("image", "");
    e.last_failure = v.value("lastFailure", 0.0);
    e.delay = v.value("delay", 0.0);
    e.never = v.value("never", false);
    e.next_sync = 0;  // looked at again at once
    entries_[key] = e;
  }
}

}  // namespace muster::server
