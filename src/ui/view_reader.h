// Who reads the scheduler view, and what of it they may see. The views are built once
// for everybody (control/scheduler_view.h); a reader who may not read the workloads of
// every namespace gets them cut to what they may read:
//
//  - a list of WorkloadViews across namespaces holds only the namespaces they may read
//    (as OpenShift's project list shows only your projects, instead of a 403);
//  - wherever another view names a workload of a namespace they may not read (a GPU's
//    holder, a NUMA zone's, a node's workloads, a preemption candidate, the workload a
//    job is preempted for, the timeline, messages), the name is withheld: it reads
//    kWithheldWorkload, as Kueue names a preemptor by UID rather than by name;
//  - the ClusterView's workload counts are those of the readable namespaces.
//
// Whether a reader may read a namespace is the caller's question to its authorizer
// (serve: RBAC; kube: a SelfSubjectAccessReview), asked at most once per namespace per
// request.
#pragma once

#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace muster::ui {

// What a withheld workload key reads as (no "/": the page does not link it).
inline constexpr const char* kWithheldWorkload = "(another namespace)";

class ViewReader {
 public:
  using MayRead = std::function<bool(const std::string& namespace_)>;

  // Reads every namespace.
  ViewReader() = default;
  // Reads the namespaces `may_read` allows.
  explicit ViewReader(MayRead may_read) : may_read_(std::move(may_read)) {}

  bool restricted() const { return static_cast<bool>(may_read_); }
  // Memoised: the authorizer is asked once per namespace.
  bool MayReadNamespace(const std::string& namespace_) const;
  // A workload key "<namespace>/<name>" as this reader sees it: itself, or
  // kWithheldWorkload. Anything without a "/" (a node name) is returned unchanged.
  std::string Key(const std::string& key) const;
  // `text` with every "<namespace>/<name>" of a namespace in `namespaces` that the
  // reader may not read replaced by kWithheldWorkload. Only known namespaces are
  // looked for, so "nvidia.com/gpu" stays as it is.
  std::string Text(const std::string& text, const std::set<std::string>& namespaces) const;

  // Withholds what the reader may not see in one view object as view_json.h writes it
  // (`plural`: workloadviews, nodeviews; "timeline" for the ClusterTimeline). Does
  // nothing for an unrestricted reader.
  void Redact(const std::string& plural, nlohmann::json& object,
              const std::set<std::string>& namespaces) const;

 private:
  MayRead may_read_;
  mutable std::map<std::string, bool> decided_;
};

}  // namespace muster::ui
