// FlavorAssigner: picks a ResourceFlavor per resource group for every pod set, as
// kueue pkg/scheduler/flavorassigner does: flavors in order of preference, skipping
// those whose taints or node labels the pod set rules out, classifying each as
// Fit / Preempt / NoFit against the quota tree, and stopping per flavorFungibility.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "admission/admission.h"
#include "admission/cluster_queue.h"
#include "admission/quota_tree.h"
#include "model/workload.h"

namespace muster::admission {

enum class FitMode { kNoFit = 0, kPreempt = 1, kFit = 2 };

// Why a flavor was refused for a pod set, kept as values: the words are written
// only when a message is asked for (most assignments' messages never are).
struct FlavorRefusal {
  enum class Kind : uint8_t { kMismatch, kNoQuota, kOverPotential, kOverAvailable };
  Kind kind = Kind::kMismatch;
  int32_t flavor = -1;
  ResourceId resource = 0;
  int64_t request = 0;  // what was asked (with the earlier pod sets' charges)
  int64_t limit = 0;    // kOverPotential: the potential; kOverAvailable: what is unused
  std::string words;    // kMismatch: FlavorMismatch's
  friend bool operator==(const FlavorRefusal&, const FlavorRefusal&) = default;
};

// The failure a FlavorAssignment's message tells: a resource no resource group
// covers, or a resource group's refused flavors.
struct FlavorFailure {
  bool set = false;
  bool uncovered = false;  // `resource` is in no resource group
  size_t pod_set = 0;      // index into the workload's pod sets
  ResourceId resource = 0;
  std::vector<FlavorRefusal> refusals;
  // Tells what the same message would: both unset, or the same pod set and the same
  // uncovered resource or refusals.
  bool SameAs(const FlavorFailure& other) const;
};

struct FlavorAssignment {
  FitMode mode = FitMode::kFit;   // worst mode over every pod set
  Assignment assignment;          // flavors per pod set (valid unless kNoFit)
  FrAmounts usage;                // total quota the workload charges, by FrId
  std::vector<FrId> preempt_frs;  // the (flavor, resource) pairs that need preemption
  std::string reason;             // when not kFit: QuotaExceeded | NoFit
  FlavorFailure failure;          // when not kFit: what Message() tells

  // When not kFit, Kueue's one line; written on the first call and kept. The
  // workload, ClusterQueue and flavors must be those the assignment was made for.
  const std::string& Message(const model::Workload& workload, const ClusterQueueSpec& cq,
                             const FlavorCatalog& flavors) const;
  // Every resource group took the first flavor it could use, and that flavor fit
  // without borrowing: the search stopped there. While the same charges still fit
  // so (FitsAsFirstChoice), assigning again gives this same answer.
  bool first_choice = false;

  // Forgets the message written (AssignFlavorsInto, reusing the object).
  void ForgetMessage() {
    message_.clear();
    message_written_ = false;
  }
  // Keeps the message written for `before` when the failure now is the same one, of
  // the same pod set name in a ClusterQueue of the same name (its only other
  // inputs); forgets it otherwise. A head assigned again after every admission in
  // its tree is mostly refused the same way, and writing the message (amounts
  // formatted per refused flavor) was 5 % of a cycle.
  void KeepMessageIfSame(const FlavorFailure& before, const std::string& pod_set,
                         const std::string& cluster_queue);

 private:
  mutable std::string message_;
  mutable bool message_written_ = false;
  // What message_ was written for, besides the failure (Message's arguments).
  mutable std::string message_pod_set_, message_cluster_queue_;
};

// What AssignFlavorsInto reads of a workload and a ClusterQueue before it looks at
// any usage: per pod set, the resources no resource group covers, and per resource
// group the resources asked of it (with the pod set's totals) and, per flavor in
// order of preference, why the pod set cannot use it ("" if it can) and the flavor's
// (flavor, resource) ids. It depends on the pod sets (names, counts, requests,
// tolerations, node selector and affinity), the ClusterQueue's resource groups and
// the flavors, never on usage: workloads of one flavor shape in one ClusterQueue
// share it (the admitter compiles it once, not per assignment).
struct FlavorInputs {
  struct Want {
    ResourceId resource = 0;
    int64_t total = 0;  // requests x count
  };
  struct Option {
    int32_t flavor = -1;
    std::string mismatch;   // FlavorMismatch's words; "" when the pod set may use it
    std::vector<FrId> frs;  // per want; -1: the flavor has no quota for it
  };
  struct Group {
    std::vector<Want> wants;         // resources of this group the pod set asks, by name
    std::vector<std::string> names;  // their names, as the assignment lists them
    std::vector<Option> options;
  };
  struct PodSet {
    std::string name;
    int32_t count = 0;
    std::vector<ResourceId> uncovered;  // asked, but in no resource group, by name
    std::vector<Group> groups;          // the groups asked of, in the queue's order
  };
  std::vector<PodSet> pod_sets;
};

void CompileFlavorInputs(FlavorInputs& out, const model::Workload& workload,
                         const ClusterQueueSpec& cq, const QuotaTree& tree,
                         const FlavorCatalog& flavors);

// Working storage AssignFlavorsInto reuses from one call to the next when the
// caller keeps it (a cycle assigns flavors to every head, often more than once).
struct AssignScratch {
  std::vector<FlavorRefusal> refusals;
  std::vector<std::pair<FrId, int64_t>> charges, best_charges;
  std::vector<FrId> short_frs, best_short_frs;  // a flavor's frs short of quota
  std::vector<std::pair<const std::string*, const std::string*>> chosen;  // resource, flavor
  FlavorInputs inputs;           // compiled per call when the caller has none
  FlavorFailure failure_before;  // the kept assignment's, for KeepMessageIfSame
};

struct AssignOptions {
  bool fair_sharing = false;  // lets preemption be planned while borrowing
  // Whether any admitted workload could be preempted for the given (flavor,
  // resource) pairs. A flavor that would need preemption with nobody to preempt is
  // Kueue's "no preemption candidates": the next flavor is tried and the flavor
  // ranks below every one that can be admitted. Null: candidates are assumed.
  std::function<bool(const std::vector<FrId>&)> has_candidates;
  // Set to true when has_candidates was called (the answer then depends on what it
  // read); may be null.
  bool* asked_candidates = nullptr;
  AssignScratch* scratch = nullptr;  // null: the call allocates its own
};

FlavorAssignment AssignFlavors(const model::Workload& workload, const ClusterQueueSpec& cq,
                               const QuotaTree& tree, const FlavorCatalog& flavors,
                               const AssignOptions& options = {});
// The same into `out`, whose previous contents are replaced (their storage reused).
void AssignFlavorsInto(FlavorAssignment& out, const model::Workload& workload,
                       const ClusterQueueSpec& cq, const QuotaTree& tree,
                       const FlavorCatalog& flavors, const AssignOptions& options = {});
// The same from inputs compiled for this workload and ClusterQueue.
void AssignFlavorsInto(FlavorAssignment& out, const FlavorInputs& inputs,
                       const ClusterQueueSpec& cq, const QuotaTree& tree,
                       const FlavorCatalog& flavors, const AssignOptions& options = {});

// Whether `assignment` (found for this ClusterQueue) is what AssignFlavorsInto would
// answer now: it was a first choice and its charges still fit without borrowing in
// the tree's current usage. A cycle's admissions move their tree's usage, after
// which every other head of the tree would be assigned again; most of them, early in
// a wave, fit where they did. Usage only: the flavors, the ClusterQueue's resource
// groups and the workload's pod sets must be those the assignment was made with.
bool FitsAsFirstChoice(const FlavorAssignment& assignment, const ClusterQueueSpec& cq,
                       const QuotaTree& tree);

// Why `flavor` cannot host `pod_set` (untolerated taint, contradicting node labels);
// "" when it can.
std::string FlavorMismatch(const model::PodSet& pod_set, const model::ResourceFlavor& flavor);

}  // namespace muster::admission
