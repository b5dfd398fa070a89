// ExpectSameIndexes: a cluster changed in place against one built as it is now.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "placement/cluster_state.h"

namespace muster::placement {

// Every index a plan reads, compared between a cluster changed in place (a node
// added or edited) and one built as it is now; `level_keys` are the topology levels
// whose domains are compared.
inline void ExpectSameIndexes(const ClusterState& added, const ClusterState& built,
                              const std::vector<std::string>& level_keys,
                              const std::string& where) {
  SCOPED_TRACE(where);
  const auto& a = dynamic_cast<const IndexedClusterState&>(added);
  const auto& b = dynamic_cast<const IndexedClusterState&>(built);
  ASSERT_EQ(a.NodeCount(), b.NodeCount());
  EXPECT_EQ(a.MaxGpusPerNode(), b.MaxGpusPerNode());
  EXPECT_EQ(a.MaybeFilteredRanks(), b.MaybeFilteredRanks());
  for (int32_t r = 0; r < a.NodeCount(); ++r) {
    EXPECT_EQ(a.NodeAtRank(r), b.NodeAtRank(r)) << "rank " << r;
    EXPECT_EQ(a.FreeIndex().BucketOf(r), b.FreeIndex().BucketOf(r)) << "rank " << r;
  }
  for (int32_t k = 0; k <= a.MaxGpusPerNode(); ++k) {
    EXPECT_EQ(a.FreeIndex().BucketSize(k), b.FreeIndex().BucketSize(k)) << "bucket " << k;
  }
  for (NodeIndex i = 0; i < a.NodeCount(); ++i) {
    EXPECT_EQ(a.GetNode(i).meta.name, b.GetNode(i).meta.name);
    EXPECT_EQ(a.Free(i), b.Free(i)) << a.GetNode(i).meta.name;
    EXPECT_EQ(a.WorkloadsOnNode(i), b.WorkloadsOnNode(i));
    EXPECT_TRUE(SameResources(a.Info(i), b.Info(i))) << a.GetNode(i).meta.name;
    for (size_t t = 0; t < a.Topologies().size(); ++t) {
      EXPECT_EQ(a.TopologyPath(i, static_cast<int32_t>(t)),
                b.TopologyPath(i, static_cast<int32_t>(t)));
    }
  }
  for (const std::string& key : level_keys) {
    const std::vector<int32_t>& da = a.LevelDomains(key);
    ASSERT_EQ(da, b.LevelDomains(key)) << key;
    for (int32_t d : da) {
      EXPECT_EQ(a.Domains().Get(d).key, b.Domains().Get(d).key);
      EXPECT_EQ(a.Domains().Get(d).ranks, b.Domains().Get(d).ranks);
      EXPECT_EQ(a.DomainFreeGpus(d), b.DomainFreeGpus(d));
      EXPECT_EQ(a.DomainFreeCpu(d), b.DomainFreeCpu(d));
      EXPECT_EQ(a.DomainFreeMemory(d), b.DomainFreeMemory(d));
      for (int32_t k = 0; k <= a.MaxGpusPerNode(); ++k) {
        EXPECT_EQ(a.DomainNodesWithFreeGpus(d, k), b.DomainNodesWithFreeGpus(d, k));
      }
    }
  }
  EXPECT_TRUE(a.CheckInvariants().empty());
}

}  // namespace muster::placement
