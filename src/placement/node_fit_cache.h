// NodeFitCache: what a node search found for one pod on one node (whether the pod
// fits there, the devices and zone it would get, the scorer's score), kept until the
// node changes or another pod shape asks. An admission cycle places thousands of
// pods, mostly of a few shapes, and each pod's search scores the same first feasible
// nodes again: only the node the previous pod went to has changed since.
//
// Keyed by the node's version (IndexedClusterState::NodeVersion: drawn anew from one
// process-wide counter whenever anything the filters, fit or score read of the node
// changes) and by the pod's inputs to them (shape, tolerations, node selector,
// required node affinity, interned here): an entry answers the node filters too, so
// a search skips them for the nodes it finds here. One entry per node: another
// shape replaces it. Valid for one scorer only: a caller that changes
// planners clears it (PlacementBridge::SetPlanner; Bind also clears it for another
// scorer's address, but an address may be reused once freed). Used only for nodes a
// plan has not touched yet (their overlay usage is the state's).
#pragma once

#include <cstdint>
#include <vector>

#include "model/pod.h"
#include "placement/free_capacity_index.h"
#include "placement/node_filter.h"
#include "placement/node_info.h"
#include "placement/placement.h"

namespace muster::placement {

class Scorer;

class NodeFitCache {
 public:
  struct Entry {
    uint64_t version = 0;  // 0: empty (versions start at 1)
    int64_t key = -1;
    bool fits = false;  // passes the node filters and has room
    int64_t score = 0;  // the scorer's, before any per-pod bonus
    PodAlloc alloc;
  };

  // Ties the cache to `scorer`: every entry goes when it is another than before.
  void Bind(const Scorer* scorer, int32_t node_count);
  // The key of a pod's inputs to the filters, fit and score: equal shapes and
  // constraints get equal keys. `check_selector` as FilterNode's (a search whose
  // nodes came from the label index does not look the selector up).
  int64_t KeyOf(const PodShape& shape, const PodConstraints& constraints,
                const std::vector<model::NodeSelectorTerm>& required_affinity, bool check_selector);
  // Node i's entry when it was filled at this version for this key, else null.
  const Entry* Find(NodeIndex i, uint64_t version, int64_t key) {
    const Entry& e = entries_[static_cast<size_t>(i)];
    if (e.version != version || e.key != key) return nullptr;
    ++hits_;
    return &e;
  }
  // Node i's entry, emptied for this version and key (fits false) to be filled.
  Entry& Fill(NodeIndex i, uint64_t version, int64_t key) {
    Entry& e = entries_[static_cast<size_t>(i)];
    e.version = version;
    e.key = key;
    e.fits = false;
    return e;
  }
  // Finds that answered from the cache, since it was made.
  int64_t hits() const { return hits_; }

  // A narrowed search's walk over one of the label index's lists: the positions in
  // it that passed the free index's MayFit(min_bucket, need) when walked, ascending,
  // and how far the list was walked. Kept while the state's MayFitEpoch holds: a
  // position left out failed MayFit and still does, so a search visits the kept
  // positions and walks on from `walked`, considering the nodes it would have
  // considered walking the whole list (an admission cycle's searches walked past the
  // same full nodes pod after pod).
  struct Walk {
    const std::vector<int32_t>* list = nullptr;
    int32_t min_bucket = 0;
    FreeCapacityIndex::Amounts need{};
    uint64_t epoch = 0;
    std::vector<int32_t> may_fit;
    size_t walked = 0;
  };
  // The walk kept for this list, bucket and need at `epoch`, or an empty one.
  Walk& WalkFor(const std::vector<int32_t>* list, int32_t min_bucket,
                const FreeCapacityIndex::Amounts& need, uint64_t epoch);
  // WalkFor calls that found a walk kept, since the cache was made.
  int64_t walks_kept() const { return walks_kept_; }

 private:
  struct Shape {
    PodShape shape;
    std::vector<model::Toleration> tolerations;
    model::StringMap node_selector;
    std::vector<model::NodeSelectorTerm> required_affinity;
    bool check_selector = true;
    int64_t key = 0;
  };
  const Scorer* scorer_ = nullptr;
  std::vector<Entry> entries_;
  std::vector<Shape> shapes_;  // the shapes asked lately, a few at most
  int64_t next_key_ = 0;       // keys are never reused: a dropped shape's entries stay stale
  int64_t hits_ = 0;
  std::vector<Walk> walks_;  // a few, replaced in turn
  size_t next_walk_ = 0;
  int64_t walks_kept_ = 0;
};

}  // namespace muster::placement
