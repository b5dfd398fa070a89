#include "admission/flavor_assigner.h"

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "core/resource_list.h"

namespace muster::admission {
namespace {

bool Tolerates(const model::Toleration& t, const model::Taint& taint) {
  if (t.effect && *t.effect != taint.effect) return false;
  if (t.key.empty()) return t.op == model::TolerationOperator::kExists;
  if (t.key != taint.key) return false;
  return t.op == model::TolerationOperator::kExists || t.value == taint.value;
}

// A requirement on a key the flavor does not label says nothing about the flavor
// (nodes of the flavor may carry it), so only flavor keys are checked, as Kueue does.
bool RequirementAllows(const model::NodeSelectorRequirement& r, const model::StringMap& labels) {
  auto it = labels.find(r.key);
  if (it == labels.end()) return true;
  const auto& vals = r.values;
  bool in = std::find(vals.begin(), vals.end(), it->second) != vals.end();
  switch (r.op) {
    case model::SelectorOperator::kIn:
      return in;
    case model::SelectorOperator::kNotIn:
      return !in;
    case model::SelectorOperator::kExists:
      return true;
    case model::SelectorOperator::kDoesNotExist:
      return false;
    case model::SelectorOperator::kGt:
    case model::SelectorOperator::kLt: {
      if (vals.size() != 1) return false;
      try {
        long long have = std::stoll(it->second), want = std::stoll(vals[0]);
        return r.op == model::SelectorOperator::kGt ? have > want : have < want;
      } catch (...) {
        return false;
      }
    }
  }
  return true;
}

struct FlavorOutcome {
  int32_t flavor = -1;
  FitMode mode = FitMode::kNoFit;
  bool borrow = false;
  bool no_candidates = false;                     // preempt mode, but nobody may be preempted
  std::vector<std::pair<FrId, int64_t>> charges;  // fr -> this pod set's amount
  // The frs of `charges` over what is available, in their order: the ones asked of
  // has_candidates, and the preemption's frs if this flavor is chosen.
  std::vector<FrId> short_frs;
};

// How good a flavor outcome is; higher wins, ties keep the earlier flavor.
int Score(const FlavorOutcome& o, model::FlavorPreference pref) {
  if (o.mode == FitMode::kNoFit) return 0;
  if (o.no_candidates) return 1;  // Kueue's isPreferred: below every viable mode
  if (o.mode == FitMode::kFit && !o.borrow) return 10;
  bool preemption_first = pref == model::FlavorPreference::kPreemptionOverBorrowing;
  if (o.mode == FitMode::kFit) return preemption_first ? 7 : 8;  // borrow
  if (!o.borrow) return preemption_first ? 8 : 7;                // preempt
  return 5;                                                      // both
}

// Kueue's shouldTryNextFlavor.
bool ShouldTryNext(const FlavorOutcome& o, const model::FlavorFungibility& f) {
  using model::FungibilityPolicy;
  if (o.no_candidates) return true;
  if (o.mode == FitMode::kPreempt && f.when_can_preempt == FungibilityPolicy::kMayStopSearch) {
    if (!o.borrow || f.when_can_borrow == FungibilityPolicy::kMayStopSearch) return false;
  }
  if (o.mode == FitMode::kFit && o.borrow &&
      f.when_can_borrow == FungibilityPolicy::kMayStopSearch) {
    return false;
  }
  if (o.mode == FitMode::kFit && !o.borrow) return false;
  return true;
}

std::string Fmt(ResourceId r, int64_t v) { return ResourceList::FormatAmount(r, v); }

void AppendRefusal(std::string& out, const FlavorRefusal& f, const ClusterQueueSpec& cq,
                   const FlavorCatalog& flavors) {
  using Kind = FlavorRefusal::Kind;
  if (f.kind == Kind::kMismatch) {
    out += f.words;
    return;
  }
  const ResourceId r = f.resource;
  out +=
      f.kind == Kind::kOverAvailable ? "insufficient unused quota for " : "insufficient quota for ";
  out += ResourceNames::Name(r);
  out += " in flavor ";
  out += flavors.flavors[f.flavor].meta.name;
  out += ", request ";
  out += Fmt(r, f.request);
  out += " > available ";
  out += f.kind == Kind::kNoQuota ? "0" : Fmt(r, f.limit);
  out += " in ClusterQueue ";
  out += cq.name;
}

}  // namespace

const std::string& FlavorAssignment::Message(const model::Workload& workload,
                                             const ClusterQueueSpec& cq,
                                             const FlavorCatalog& flavors) const {
  if (message_written_ || !failure.set) return message_;
  message_written_ = true;
  const FlavorFailure& f = failure;
  message_pod_set_ = workload.pod_sets[f.pod_set].name;
  message_cluster_queue_ = cq.name;
  message_ = "couldn't assign flavors to pod set ";
  message_ += workload.pod_sets[f.pod_set].name;
  message_ += ": ";
  if (f.uncovered) {
    message_ +=
        "resource " + ResourceNames::Name(f.resource) + " unavailable in ClusterQueue " + cq.name;
  } else if (f.refusals.empty()) {
    message_ += "no flavors in resource group";
  } else {
    for (size_t i = 0; i < f.refusals.size(); ++i) {
      if (i > 0) message_ += "; ";
      AppendRefusal(message_, f.refusals[i], cq, flavors);
    }
  }
  return message_;
}

bool FlavorFailure::SameAs(const FlavorFailure& other) const {
  if (set != other.set) return false;
  if (!set) return true;
  if (uncovered != other.uncovered || pod_set != other.pod_set) return false;
  return uncovered ? resource == other.resource : refusals == other.refusals;
}

void FlavorAssignment::KeepMessageIfSame(const FlavorFailure& before, const std::string& pod_set,
                                         const std::string& cluster_queue) {
  if (message_written_ && failure.SameAs(before) && message_pod_set_ == pod_set &&
      message_cluster_queue_ == cluster_queue) {
    return;
  }
  ForgetMessage();
}

std::string FlavorMismatch(const model::PodSet& ps, const model::ResourceFlavor& flavor) {
  for (const auto& taint : flavor.node_taints) {
    if (taint.effect == model::TaintEffect::kPreferNoSchedule) continue;
    auto tolerated = [&](const std::vector<model::Toleration>& ts) {
      return std::any_of(ts.begin(), ts.end(), [&](const auto& t) { return Tolerates(t, taint); });
    };
    if (!tolerated(ps.tolerations) && !tolerated(flavor.tolerations)) {
      return "untolerated taint {" + taint.key + (taint.value.empty() ? "" : "=" + taint.value) +
             ":" + model::TaintEffectName(taint.effect) + "} in flavor " + flavor.meta.name;
    }
  }
  for (const auto& [k, v] : ps.node_selector) {
    auto it = flavor.node_labels.find(k);
    if (it != flavor.node_labels.end() && it->second != v) {
      return "flavor " + flavor.meta.name + " doesn't match node affinity";
    }
  }
  const auto& terms = ps.node_affinity.required;
  if (!terms.empty()) {
    bool any = std::any_of(terms.begin(), terms.end(), [&](const model::NodeSelectorTerm& t) {
      return std::all_of(t.match_expressions.begin(), t.match_expressions.end(),
                         [&](const auto& r) { return RequirementAllows(r, flavor.node_labels); });
    });
    if (!any) return "flavor " + flavor.meta.name + " doesn't match node affinity";
  }
  return "";
}

FlavorAssignment AssignFlavors(const model::Workload& wl, const ClusterQueueSpec& cq,
                               const QuotaTree& tree, const FlavorCatalog& flavors,
                               const AssignOptions& options) {
  FlavorAssignment out;
  AssignFlavorsInto(out, wl, cq, tree, flavors, options);
  return out;
}

void CompileFlavorInputs(FlavorInputs& out, const model::Workload& wl, const ClusterQueueSpec& cq,
                         const QuotaTree& tree, const FlavorCatalog& flavors) {
  // Entries are overwritten in place, so a scratch compile per call reuses storage.
  out.pod_sets.resize(wl.pod_sets.size());
  std::vector<ResourceId> ids;
  for (size_t p = 0; p < wl.pod_sets.size(); ++p) {
    const model::PodSet& ps = wl.pod_sets[p];
    FlavorInputs::PodSet& in = out.pod_sets[p];
    in.name = ps.name;
    in.count = ps.count;
    in.uncovered.clear();
    // The pod set's total request is requests x count: its non-zero resources are
    // the per-pod ones (none for a count of 0); zero requests need no flavor.
    ids.clear();
    if (ps.count != 0) ps.requests.SortedIdsInto(ids);
    for (ResourceId r : ids) {
      bool covered = std::any_of(cq.groups.begin(), cq.groups.end(), [&](const auto& g) {
        return std::find(g.covered.begin(), g.covered.end(), r) != g.covered.end();
      });
      if (!covered) in.uncovered.push_back(r);
    }
    size_t used = 0;
    for (const CompiledResourceGroup& g : cq.groups) {
      if (used == in.groups.size()) in.groups.emplace_back();
      FlavorInputs::Group& group = in.groups[used];
      group.wants.clear();
      group.names.clear();
      for (ResourceId r : ids) {
        if (std::find(g.covered.begin(), g.covered.end(), r) == g.covered.end()) continue;
        group.wants.push_back({r, ps.requests.Get(r) * ps.count});
        group.names.push_back(ResourceNames::Name(r));
      }
      if (group.wants.empty()) continue;
      ++used;
      group.options.resize(g.flavors.size());
      for (size_t i = 0; i < g.flavors.size(); ++i) {
        const int32_t f = g.flavors[i];
        FlavorInputs::Option& option = group.options[i];
        option.flavor = f;
        option.mismatch = FlavorMismatch(ps, flavors.flavors[f]);
        option.frs.clear();
        for (const auto& want : group.wants) {
          option.frs.push_back(tree.FindFr(f, want.resource).value_or(FrId{-1}));
        }
      }
    }
    in.groups.resize(used);
  }
}

void AssignFlavorsInto(FlavorAssignment& out, const model::Workload& wl, const ClusterQueueSpec& cq,
                       const QuotaTree& tree, const FlavorCatalog& flavors,
                       const AssignOptions& options) {
  std::optional<AssignScratch> own;  // built only for a caller that keeps none
  AssignScratch& scratch = options.scratch != nullptr ? *options.scratch : own.emplace();
  CompileFlavorInputs(scratch.inputs, wl, cq, tree, flavors);
  AssignFlavorsInto(out, scratch.inputs, cq, tree, flavors, options);
}

void AssignFlavorsInto(FlavorAssignment& out, const FlavorInputs& inputs,
                       const ClusterQueueSpec& cq, const QuotaTree& tree,
                       const FlavorCatalog& flavors, const AssignOptions& options) {
  std::optional<AssignScratch> own;  // built only for a caller that keeps none
  AssignScratch& scratch = options.scratch != nullptr ? *options.scratch : own.emplace();
  out.mode = FitMode::kFit;
  out.first_choice = true;
  out.assignment.borrows = false;
  out.reason.clear();
  // The failure is written afresh; the previous one is kept aside so its message
  // can be kept when the new one is the same (KeepMessageIfSame, at the end).
  std::swap(out.failure, scratch.failure_before);
  out.failure.set = false;
  // Earlier pod sets' charges by FrId, and the frs short of quota: a workload
  // touches a handful, so flat vectors (sorted at the end) beat a map and a set. A
  // cycle assigns flavors to every head after each admission in its tree.
  FrAmounts& charged = out.usage;
  charged.clear();
  auto charged_of = [&charged](FrId fr) -> int64_t* {
    for (auto& [id, v] : charged) {
      if (id == fr) return &v;
    }
    return nullptr;
  };
  auto charged_amount = [&charged_of](FrId fr) -> int64_t {
    const int64_t* c = charged_of(fr);
    return c == nullptr ? 0 : *c;
  };
  std::vector<FrId>& preempt = out.preempt_frs;
  preempt.clear();
  bool can_preempt_while_borrowing =
      cq.preemption.borrow_within_cohort.policy != model::PreemptionPolicy::kNever ||
      options.fair_sharing;
  const bool has_parent = tree.HasParent(cq.node);
  // Keeps the first failure of the worst mode (its refusals, or the uncovered
  // resource): the message tells it.
  std::vector<FlavorRefusal>& refusals = scratch.refusals;
  auto fail = [&](FitMode mode, const char* reason, size_t pod_set, bool uncovered,
                  ResourceId resource) {
    if (mode < out.mode || !out.failure.set) {
      out.reason = reason;
      FlavorFailure& f = out.failure;
      f.set = true;
      f.uncovered = uncovered;
      f.pod_set = pod_set;
      f.resource = resource;
      if (uncovered) {
        f.refusals.clear();
      } else {
        f.refusals.assign(refusals.begin(), refusals.end());
      }
    }
    out.mode = std::min(out.mode, mode);
  };

  // Every pod set gets its entry, in order; the previous entries' storage is reused.
  out.assignment.pod_sets.resize(inputs.pod_sets.size());
  // The two outcomes' vectors are the scratch's, lent for the call and handed back at
  // its end (the same swaps), so their storage outlives it.
  FlavorOutcome o, best;
  auto swap_storage = [&] {
    o.charges.swap(scratch.charges);
    best.charges.swap(scratch.best_charges);
    o.short_frs.swap(scratch.short_frs);
    best.short_frs.swap(scratch.best_short_frs);
  };
  swap_storage();
  bool have_best = false;
  for (size_t p = 0; p < inputs.pod_sets.size(); ++p) {
    const FlavorInputs::PodSet& in = inputs.pod_sets[p];
    PodSetAssignment& psa = out.assignment.pod_sets[p];
    if (psa.pod_set != in.name) psa.pod_set = in.name;
    psa.count = in.count;
    // (resource, flavor) names chosen, written into psa.flavors at the end only
    // where they differ from what it holds (mostly the same flavors as last time).
    auto& chosen = scratch.chosen;
    chosen.clear();
    for (ResourceId r : in.uncovered) fail(FitMode::kNoFit, "NoFit", p, /*uncovered=*/true, r);
    if (!in.uncovered.empty()) {
      psa.flavors.clear();
      continue;
    }
    for (const FlavorInputs::Group& g : in.groups) {
      const size_t wants = g.wants.size();
      refusals.clear();
      const char* worst_reason = "NoFit";
      have_best = false;
      int32_t evaluated = 0;  // flavors the pod set could use whose quota was looked at
      for (const FlavorInputs::Option& option : g.options) {
        const int32_t f = option.flavor;
        if (!option.mismatch.empty()) {
          FlavorRefusal& refusal = refusals.emplace_back();
          refusal.kind = FlavorRefusal::Kind::kMismatch;
          refusal.words = option.mismatch;
          continue;
        }
        ++evaluated;
        o.flavor = f;
        o.mode = FitMode::kFit;
        o.borrow = false;
        o.no_candidates = false;
        o.charges.clear();
        o.short_frs.clear();
        for (size_t w = 0; w < wants; ++w) {
          const ResourceId r = g.wants[w].resource;
          const int64_t req = g.wants[w].total;
          const FrId fr = option.frs[w];
          auto refuse = [&](FlavorRefusal::Kind kind, int64_t request, int64_t limit) {
            refusals.push_back(FlavorRefusal{kind, f, r, request, limit, {}});
            worst_reason = "QuotaExceeded";
          };
          if (fr < 0) {
            o.mode = FitMode::kNoFit;
            refuse(FlavorRefusal::Kind::kNoQuota, req, 0);
            continue;
          }
          int64_t val = req + charged_amount(fr);
          o.charges.emplace_back(fr, req);
          bool borrow = has_parent && tree.BorrowingWith(cq.node, fr, val);
          int64_t potential = tree.PotentialAvailable(cq.node, fr);
          int64_t available = tree.Available(cq.node, fr);
          if (val > available) o.short_frs.push_back(fr);
          if (val > potential) {
            o.mode = FitMode::kNoFit;
            refuse(FlavorRefusal::Kind::kOverPotential, val, potential);
          } else if (val > available) {
            refuse(FlavorRefusal::Kind::kOverAvailable, val, std::max<int64_t>(0, available));
            bool preemptible =
                val <= tree.QuotaOf(cq.node, fr).nominal || can_preempt_while_borrowing;
            o.mode = std::min(o.mode, preemptible ? FitMode::kPreempt : FitMode::kNoFit);
            o.borrow |= borrow;
          } else {
            o.borrow |= borrow;
          }
        }
        if (o.mode == FitMode::kNoFit) continue;
        // Whether anyone could be preempted is part of the flavor's mode before it is
        // ranked (Kueue's noPreemptionCandidates): a flavor with nobody to preempt
        // ranks below every viable one, including a later one of equal score.
        if (o.mode == FitMode::kPreempt && options.has_candidates) {
          if (options.asked_candidates != nullptr) *options.asked_candidates = true;
          o.no_candidates = !options.has_candidates(o.short_frs);
        }
        if (!have_best ||
            Score(o, cq.fungibility.preference) > Score(best, cq.fungibility.preference)) {
          best = o;  // copy-assigned: best's charges keep their storage
          have_best = true;
        }
        if (!ShouldTryNext(o, cq.fungibility)) break;
      }
      if (!have_best) {
        fail(FitMode::kNoFit, worst_reason, p, /*uncovered=*/false, 0);
        continue;
      }
      out.first_choice &= evaluated == 1 && best.mode == FitMode::kFit && !best.borrow;
      const std::string& fname = flavors.flavors[best.flavor].meta.name;
      for (const std::string& name : g.names) chosen.emplace_back(&name, &fname);
      for (const auto& [fr, v] : best.charges) {
        if (int64_t* c = charged_of(fr)) {
          *c += v;
        } else {
          charged.emplace_back(fr, v);
        }
      }
      out.assignment.borrows |= best.borrow;
      if (best.mode == FitMode::kPreempt) {
        // Remember which frs are short so preemption only looks at workloads using them:
        // each is charged (earlier pod sets' and this group's) beyond what is available.
        preempt.insert(preempt.end(), best.short_frs.begin(), best.short_frs.end());
        fail(FitMode::kPreempt, "QuotaExceeded", p, /*uncovered=*/false, 0);
      }
    }
    // Names chosen twice (a resource in two groups, which decoding refuses) make the
    // sizes differ: rebuilt then, the last choice kept, as operator[] keeps it.
    bool same = psa.flavors.size() == chosen.size();
    for (size_t i = 0; same && i < chosen.size(); ++i) {
      auto it = psa.flavors.find(*chosen[i].first);
      same = it != psa.flavors.end() && it->second == *chosen[i].second;
    }
    if (!same) {
      psa.flavors.clear();
      for (const auto& [name, flavor] : chosen) psa.flavors[*name] = *flavor;
    }
  }
  swap_storage();
  static const std::string kNoPodSet;
  out.KeepMessageIfSame(scratch.failure_before,
                        out.failure.set && out.failure.pod_set < inputs.pod_sets.size()
                            ? inputs.pod_sets[out.failure.pod_set].name
                            : kNoPodSet,
                        cq.name);
  std::sort(charged.begin(), charged.end());
  std::sort(preempt.begin(), preempt.end());
  preempt.erase(std::unique(preempt.begin(), preempt.end()), preempt.end());
  out.first_choice &= out.mode == FitMode::kFit;
}

bool FitsAsFirstChoice(const FlavorAssignment& assignment, const ClusterQueueSpec& cq,
                       const QuotaTree& tree) {
  if (!assignment.first_choice) return false;
  // A pod set's charge is checked in AssignFlavorsInto with the earlier pod sets'
  // charges of the same (flavor, resource) added: at most the total checked here, and
  // borrowing and fitting are monotone in the amount.
  const bool has_parent = tree.HasParent(cq.node);
  return std::all_of(assignment.usage.begin(), assignment.usage.end(), [&](const auto& charge) {
    const auto& [fr, total] = charge;
    return !(has_parent && tree.BorrowingWith(cq.node, fr, total)) &&
           total <= tree.PotentialAvailable(cq.node, fr) && total <= tree.Available(cq.node, fr);
  });
}

}  // namespace muster::admission
