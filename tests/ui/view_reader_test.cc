// What a reader who may read some namespaces only gets from the view API: lists cut
// to those namespaces, counts of what they see, and other namespaces' workload names
// withheld wherever a view mentions them (ui/view_reader.h).
#include "ui/view_reader.h"

#include <gtest/gtest.h>

#include "ui/view_api.h"

namespace muster::ui {
namespace {

using nlohmann::json;

control::WorkloadView Workload(const std::string& ns, const std::string& job,
                               const std::string& state) {
  control::WorkloadView w;
  w.namespace_ = ns;
  w.name = "job-" + job;
  w.key = ns + "/" + job;
  w.job_name = job;
  w.state = state;
  w.cluster_queue = "shared";
  return w;
}

// team-a's and team-b's workloads on one node: b/train holds GPU 0, a/eval GPU 1;
// a/wait is pending and could preempt b/train; a/eval was once evicted by b/train.
control::SchedulerView MakeReaderView() {
  control::SchedulerView v;
  v.generation = 3;
  auto eval = Workload("team-a", "eval", "Running");
  eval.evictions.push_back({50, "Preempted", "preempted by team-b/train", "team-b/train"});
  eval.decisions.push_back({50, "Preempt", "InCohortReclamation", "evicted for team-b/train"});
  auto wait = Workload("team-a", "wait", "Pending");
  wait.message = "waits for team-b/train to finish; needs nvidia.com/gpu";
  wait.candidates.push_back({"team-b/train", "shared", 0, "InClusterQueue", false});
  wait.candidates.push_back({"team-a/eval", "shared", 0, "InClusterQueue", false});
  auto train = Workload("team-b", "train", "Running");
  train.preempted_for = "team-a/wait";
  v.workloads = {eval, wait, train, Workload("team-b", "other", "Pending")};
  control::NodeView n;
  n.name = "node-1";
  n.gpus.push_back({0, 0, -1, 1000, "team-b/train", "worker-0"});
  n.gpus.push_back({1, 0, -1, 1000, "team-a/eval", "main-0"});
  n.gpus.push_back({2, 1, -1, 1000, "team-b/other", "main-0"});
  control::ZoneView z;
  z.name = "0";
  z.holders = {"team-a/eval", "team-b/other", "team-b/train"};
  n.zones.push_back(z);
  n.workloads = {"team-a/eval", "team-b/other", "team-b/train"};
  v.nodes.push_back(n);
  v.cluster.timeline.push_back({10, "Admit", "team-b/train", "shared", "", ""});
  v.cluster.timeline.push_back({20, "Admit", "team-a/eval", "shared", "", ""});
  v.cluster.timeline.push_back({30, "NodeLost", "node-2", "", "", "node-2 is gone"});
  v.cluster.timeline.push_back({40, "Preempt", "team-a/eval", "shared", "", "by team-b/train"});
  for (const auto& w : v.workloads) ++v.cluster.workloads[w.state];
  return v;
}

ViewReader TeamA(int* asked = nullptr) {
  return ViewReader([asked](const std::string& ns) {
    if (asked != nullptr) ++*asked;
    return ns == "team-a";
  });
}

json Read(const control::SchedulerView& v, const ViewReader& reader, const std::string& plural,
          const std::string& ns = "", const std::string& name = "", const std::string& sub = "") {
  ViewRequest r;
  r.plural = plural;
  r.namespace_ = ns;
  r.name = name;
  r.subresource = sub;
  ViewResponse resp = HandleViewRead(&v, r, reader);
  EXPECT_EQ(resp.code, 200) << resp.body.dump();
  return resp.body;
}

TEST(ViewReaderTest, ListAcrossNamespacesHoldsOnlyReadableOnes) {
  const auto v = MakeReaderView();
  int asked = 0;
  const ViewReader reader = TeamA(&asked);
  json list = Read(v, reader, "workloadviews");
  ASSERT_EQ(list["items"].size(), 2u);
  for (const auto& item : list["items"]) EXPECT_EQ(item["metadata"]["namespace"], "team-a");
  EXPECT_FALSE(list["metadata"].contains("remainingItemCount"));
  // The authorizer is asked once per namespace, not once per workload.
  EXPECT_EQ(asked, 2);

  // An unrestricted reader sees all four.
  EXPECT_EQ(Read(v, ViewReader(), "workloadviews")["items"].size(), 4u);
  // Another namespace's list is empty for this reader (RBAC refuses it before here;
  // the view never shows more than the reader may read).
  EXPECT_TRUE(Read(v, reader, "workloadviews", "team-b")["items"].empty());
}

TEST(ViewReaderTest, PagesCountWhatTheReaderSees) {
  auto v = MakeReaderView();
  for (int i = 0; i < 5; ++i)
    v.workloads.push_back(Workload("team-c", std::to_string(i), "Pending"));
  ViewRequest r;
  r.plural = "workloadviews";
  r.query = {{"limit", "1"}};
  ViewResponse first = HandleViewRead(&v, r, TeamA());
  ASSERT_EQ(first.code, 200);
  ASSERT_EQ(first.body["items"].size(), 1u);
  EXPECT_EQ(first.body["metadata"]["remainingItemCount"], 1);
  r.query["continue"] = first.body["metadata"]["continue"].get<std::string>();
  ViewResponse second = HandleViewRead(&v, r, TeamA());
  ASSERT_EQ(second.body["items"].size(), 1u);
  EXPECT_FALSE(second.body["metadata"].contains("continue"));
}

TEST(ViewReaderTest, OtherNamespacesAreWithheldInAWorkloadView) {
  const auto v = MakeReaderView();
  const ViewReader reader = TeamA();
  json wait = Read(v, reader, "workloadviews", "team-a", "job-wait");
  EXPECT_EQ(wait["message"], "waits for (another namespace) to finish; needs nvidia.com/gpu");
  EXPECT_EQ(wait["preemptionCandidates"][0]["workload"], kWithheldWorkload);
  EXPECT_EQ(wait["preemptionCandidates"][1]["workload"], "team-a/eval");
  json eval = Read(v, reader, "workloadviews", "team-a", "job-eval");
  EXPECT_EQ(eval["evictions"][0]["by"], kWithheldWorkload);
  EXPECT_EQ(eval["evictions"][0]["detail"], "preempted by (another namespace)");
  EXPECT_EQ(eval["decisions"][0]["message"], "evicted for (another namespace)");
  // Nothing of team-b survives anywhere in team-a's objects.
  EXPECT_EQ(wait.dump().find("team-b"), std::string::npos);
  EXPECT_EQ(eval.dump().find("team-b"), std::string::npos);

  // Unrestricted: the names are there.
  json full = Read(v, ViewReader(), "workloadviews", "team-a", "job-wait");
  EXPECT_EQ(full["preemptionCandidates"][0]["workload"], "team-b/train");
}

TEST(ViewReaderTest, NodesShowBusyGpusWithoutOtherNamespacesHolders) {
  const auto v = MakeReaderView();
  json node = Read(v, TeamA(), "nodeviews", "", "node-1");
  EXPECT_EQ(node["gpus"][0]["workload"], kWithheldWorkload);
  EXPECT_FALSE(node["gpus"][0].contains("pod"));
  EXPECT_EQ(node["gpus"][0]["milliUsed"], 1000);
  EXPECT_EQ(node["gpus"][1]["workload"], "team-a/eval");
  EXPECT_EQ(node["gpus"][1]["pod"], "main-0");
  // Withheld holders appear once.
  EXPECT_EQ(node["workloads"], json({"team-a/eval", kWithheldWorkload}));
  EXPECT_EQ(node["numaZones"][0]["workloads"], json({"team-a/eval", kWithheldWorkload}));
  EXPECT_EQ(node.dump().find("team-b"), std::string::npos);
}

TEST(ViewReaderTest, TimelineAndCountsFollowTheReader) {
  const auto v = MakeReaderView();
  const ViewReader reader = TeamA();
  json timeline = Read(v, reader, "clusterviews", "", "cluster", "timeline");
  ASSERT_EQ(timeline["entries"].size(), 4u);
  EXPECT_EQ(timeline["entries"][0]["workload"], kWithheldWorkload);
  EXPECT_EQ(timeline["entries"][1]["workload"], "team-a/eval");
  EXPECT_EQ(timeline["entries"][2]["workload"], "node-2");  // node events stay
  EXPECT_EQ(timeline["entries"][2]["message"], "node-2 is gone");
  EXPECT_EQ(timeline["entries"][3]["message"], "by (another namespace)");

  json cluster = Read(v, reader, "clusterviews", "", "cluster");
  EXPECT_EQ(cluster["workloads"], json({{"Pending", 1}, {"Running", 1}}));
  EXPECT_EQ(Read(v, ViewReader(), "clusterviews", "", "cluster")["workloads"],
            json({{"Pending", 2}, {"Running", 2}}));
}

TEST(ViewReaderTest, TextLeavesWhatIsNotAWorkloadAlone) {
  const ViewReader reader = TeamA();
  const std::set<std::string> namespaces = {"team-a", "team-b", "com"};
  EXPECT_EQ(reader.Text("nvidia.com/gpu short", namespaces), "nvidia.com/gpu short");
  EXPECT_EQ(reader.Text("team-b/x and team-a/y, (team-b/z)", namespaces),
            "(another namespace) and team-a/y, ((another namespace))");
  EXPECT_EQ(reader.Text("unknown-ns/x", namespaces), "unknown-ns/x");
  EXPECT_EQ(reader.Text("team-b/", namespaces), "(another namespace)");
  EXPECT_EQ(reader.Key("node-7"), "node-7");
  EXPECT_EQ(ViewReader().Text("team-b/x", namespaces), "team-b/x");
}

}  // namespace
}  // namespace muster::ui
