// A pod planned for the podman runtime (local_pod.h with LocalPodConfig::podman): the
// supervised process is `podman run` of the pod's image, as its owner, with its env in
// a private file (nothing of it on the command line or in podman's own environment),
// its hosts file, volumes at any absolute mountPath, and the GPUs placement gave it.
// Nothing is started and podman need not be installed.
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>

#include "server/local_pod.h"
#include "server/podman_runtime.h"

namespace muster::server {
namespace {

namespace fs = std::filesystem;

class NoVolumeSources : public VolumeSources {
 public:
  const model::StringMap* ConfigMap(const std::string&) const override { return nullptr; }
  const model::StringMap* Secret(const std::string& name) const override {
    return name == "creds" ? &creds_ : nullptr;
  }
  std::optional<ClaimInfo> Claim(const std::string&) const override { return std::nullopt; }
  bool ClaimInUse(const std::string&) const override { return false; }

 private:
  model::StringMap creds_ = {{"token", "s3cret"}};
};

bool HasArg(const std::vector<std::string>& argv, const std::string& arg) {
  return std::find(argv.begin(), argv.end(), arg) != argv.end();
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

class PodmanPodTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "muster-podman-pod-XXXXXX";
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    data_ = pattern;
    workload_.meta.api_version = "batch/v1";
    workload_.meta.kind = "Job";
    workload_.meta.name = "train";
    workload_.meta.namespace_ = "team-a";
    model::PodSet ps;
    ps.name = "main";
    model::Container c;
    c.name = "main";
    c.image = "localhost/trainer:2";
    c.args = {"--epochs", "$(EPOCHS)"};
    c.env.push_back({"EPOCHS", "3", std::nullopt});
    ps.tmpl.spec.containers.push_back(c);
    workload_.pod_sets.push_back(ps);
    server_.name = "muster-server";
    server_.uid = ::geteuid();
    server_.gid = ::getegid();
    server_.home = "/root";
    PodmanSettings settings;
    settings.podman = "/usr/bin/podman";
    settings.nofile = 4096;
    runtime_ = std::make_shared<PodmanRuntime>(settings);
  }
  void TearDown() override { fs::remove_all(data_); }

  model::PodSpec& Spec() { return workload_.pod_sets[0].tmpl.spec; }
  Result<LocalPodPlan> Plan(const std::string& gpus = "") {
    LocalPodConfig config;
    config.data_dir = data_;
    config.server = server_;
    config.isolate = true;
    config.podman = runtime_;
    LocalPodInput input;
    input.workload = &workload_;
    input.name = "train-0";
    input.ip = "127.1.0.2";
    input.node = "workstation";
    input.hosts = "127.1.0.2\ttrain-0\n";
    input.identity_env = {{"RANK", "0"}, {"CUDA_VISIBLE_DEVICES", gpus}};
    return PlanLocalPod(config, input, NoVolumeSources());
  }
  std::string PodDir() const { return data_ + "/pods/team-a_train-0"; }

  std::string data_;
  model::Workload workload_;
  Account server_;
  std::shared_ptr<PodmanRuntime> runtime_;
};

TEST_F(PodmanPodTest, RunsPodmanAsTheServerAndTheImageAsTheOwner) {
  auto plan = Plan();
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const auto& argv = plan->spec.argv;
  ASSERT_FALSE(argv.empty());
  EXPECT_EQ(argv[0], "/usr/bin/podman");
  EXPECT_EQ(plan->spec.id, "team-a_train-0");
  EXPECT_TRUE(
      HasArg(argv, "--user=" + std::to_string(server_.uid) + ":" + std::to_string(server_.gid)));
  EXPECT_TRUE(HasArg(argv, "--hostname=train-0"));
  EXPECT_TRUE(HasArg(argv, "--volume=" + PodDir() + "/hosts:/etc/hosts:ro"));
  EXPECT_EQ(ReadAll(PodDir() + "/hosts"), "127.1.0.2\ttrain-0\n");
  EXPECT_TRUE(HasArg(argv, "--pull=missing"));  // tagged: IfNotPresent
  EXPECT_TRUE(HasArg(argv, "--label=muster.dev/pod=team-a/train-0"));
  // args alone keep the image's entrypoint; $(VAR) is expanded.
  EXPECT_EQ(argv[argv.size() - 3], "localhost/trainer:2");
  EXPECT_EQ(argv.back(), "3");
  // podman itself is not run in the pod's environment, nor as the owner.
  EXPECT_FALSE(plan->spec.credentials.has_value());
  EXPECT_FALSE(plan->spec.private_mounts);
  EXPECT_EQ(plan->spec.env.count("EPOCHS"), 0u);
  EXPECT_EQ(plan->spec.env.count("RANK"), 0u);
}

TEST_F(PodmanPodTest, EnvGoesThroughAPrivateFile) {
  auto plan = Plan();
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const std::string file = PodDir() + "/container.env";
  EXPECT_TRUE(HasArg(plan->spec.argv, "--env-file=" + file));
  std::string env = ReadAll(file);
  EXPECT_NE(env.find("EPOCHS=3\n"), std::string::npos) << env;
  EXPECT_NE(env.find("RANK=0\n"), std::string::npos) << env;
  // No GPUs: CUDA_VISIBLE_DEVICES stays empty, as for a local process.
  EXPECT_NE(env.find("CUDA_VISIBLE_DEVICES=\n"), std::string::npos) << env;
  // The image's PATH/HOME/HOSTNAME apply: the local executor's defaults are not added.
  EXPECT_EQ(env.find("PATH="), std::string::npos) << env;
  struct stat st {};
  ASSERT_EQ(::stat(file.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  for (const auto& a : plan->spec.argv) EXPECT_EQ(a.find("EPOCHS"), std::string::npos) << a;
}

TEST_F(PodmanPodTest, GpusArePassedAndRenumberedInside) {
  auto plan = Plan("2,3");
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_TRUE(HasArg(plan->spec.argv, "--device=/dev/nvidia2"));
  EXPECT_TRUE(HasArg(plan->spec.argv, "--device=/dev/nvidia3"));
  // Inside, the container sees exactly its GPUs, numbered from 0: the host's ids
  // would hide them.
  EXPECT_EQ(ReadAll(PodDir() + "/container.env").find("CUDA_VISIBLE_DEVICES"), std::string::npos);
}

TEST_F(PodmanPodTest, CommandReplacesTheEntrypoint) {
  Spec().containers[0].command = {"python3", "train.py"};
  auto plan = Plan();
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_TRUE(HasArg(plan->spec.argv, "--entrypoint=[\"python3\",\"train.py\"]"));
}

TEST_F(PodmanPodTest, LimitsAndWorkingDir) {
  auto& c = Spec().containers[0];
  c.limits["cpu"] = *Quantity::Parse("2");
  c.limits["memory"] = *Quantity::Parse("1Gi");
  c.working_dir = "/workspace";
  auto plan = Plan();
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_TRUE(HasArg(plan->spec.argv, "--cpus=2"));
  EXPECT_TRUE(HasArg(plan->spec.argv, "--memory=1073741824"));
  EXPECT_TRUE(HasArg(plan->spec.argv, "--workdir=/workspace"));
  EXPECT_TRUE(HasArg(plan->spec.argv, "--ulimit=nofile=4096:4096"));
}

TEST_F(PodmanPodTest, VolumesMountAnywhereInTheContainer) {
  if (::geteuid() != 0) GTEST_SKIP() << "volumes are given to their owner: needs root";
  model::Volume secret;
  secret.name = "creds";
  secret.kind = model::VolumeKind::kSecret;
  secret.source = "creds";
  model::Volume scratch;
  scratch.name = "scratch";
  Spec().volumes = {secret, scratch};
  // Paths that do not exist on this machine: the container has its own filesystem.
  Spec().containers[0].volume_mounts = {{"creds", "/no-such-dir/creds", "", false},
                                        {"scratch", "/no-such-dir/scratch", "", false}};
  auto plan = Plan();
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_TRUE(
      HasArg(plan->spec.argv, "--volume=" + PodDir() + "/volumes/creds:/no-such-dir/creds:ro"));
  EXPECT_TRUE(
      HasArg(plan->spec.argv, "--volume=" + PodDir() + "/volumes/scratch:/no-such-dir/scratch"));
  EXPECT_EQ(ReadAll(PodDir() + "/volumes/creds/token"), "s3cret");
  EXPECT_FALSE(fs::exists("/no-such-dir"));
}

TEST_F(PodmanPodTest, PortsAreNotMappedWithAWarning) {
  Spec().containers[0].ports.push_back({"http", 8080});
  auto plan = Plan();
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  ASSERT_EQ(plan->warnings.size(), 1u);
  EXPECT_NE(plan->warnings[0].find("ports are not mapped"), std::string::npos);
  for (const auto& a : plan->spec.argv) EXPECT_EQ(a.find("--publish"), std::string::npos) << a;
}

TEST_F(PodmanPodTest, AMultiLineEnvValueIsAConfigErrorNamingIt) {
  Spec().containers[0].env.push_back({"PEM", "a\nb", std::nullopt});
  auto plan = Plan();
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("PEM"), std::string::npos);
}

TEST_F(PodmanPodTest, ABadPullPolicyNamesTheField) {
  Spec().containers[0].image_pull_policy = "Sometimes";
  auto plan = Plan();
  ASSERT_FALSE(plan.ok());
  EXPECT_NE(plan.status().message().find("imagePullPolicy"), std::string::npos);
}

TEST(ParseContainerRuntime, TheThreeModes) {
  EXPECT_EQ(*ParseContainerRuntime("none"), ContainerRuntimeMode::kNone);
  EXPECT_EQ(*ParseContainerRuntime("podman"), ContainerRuntimeMode::kPodman);
  EXPECT_EQ(*ParseContainerRuntime("auto"), ContainerRuntimeMode::kAuto);
  auto bad = ParseContainerRuntime("docker");
  ASSERT_FALSE(bad.ok());
  EXPECT_NE(bad.status().message().find("--container-runtime"), std::string::npos);
}

// The runtime's own podman calls, against a fake podman (a script that records its
// arguments and answers from files): nothing real is started.
class FakePodmanTest : public PodmanPodTest {
 protected:
  void SetUp() override {
    PodmanPodTest::SetUp();
    fake_ = data_ + "/podman";
    std::ofstream(fake_) << "#!/bin/sh\n"
                         << "echo \"$@\" >>" << data_ << "/calls\n"
                         << "case \"$1\" in\n"
                         << "  inspect) cat " << data_ << "/oom ;;\n"
                         << "  image) [ \"$2\" = inspect ] && echo 4096 && exit 0; exit 1 ;;\n"
                         << "  pull) case \"$4\" in *missing*) echo 'Trying to pull'; "
                         << "echo 'Error: initializing source: connection refused' >&2; "
                         << "exit 125 ;; esac; echo sha256:abc ;;\n"
                         << "esac\n";
    ::chmod(fake_.c_str(), 0755);
    PodmanSettings settings;
    settings.podman = fake_;
    runtime_ = std::make_shared<PodmanRuntime>(settings);
  }
  void Answer(const std::string& oom) { std::ofstream(data_ + "/oom") << oom << "\n"; }

  std::string fake_;
};

TEST_F(FakePodmanTest, AContainerKilledAtItsLimitIsOomKilledWherePodmanSaysSo) {
  auto plan = Plan();
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  const std::string name = ReadAll(PodDir() + "/container.name");
  Answer("true");
  auto reason = runtime_->ExitReason("team-a_train-0", 137, PodDir() + "/none.log");
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(reason->reason, "OOMKilled");
  EXPECT_EQ(reason->message, "");
  EXPECT_NE(ReadAll(data_ + "/calls")
                .find("inspect --type=container "
                      "--format={{.State.OOMKilled}} -- " +
                      name),
            std::string::npos);
  Answer("false");  // killed by a stop, or podman cannot tell (cgroup v1 + runc here)
  EXPECT_FALSE(runtime_->ExitReason("team-a_train-0", 137, PodDir() + "/none.log").has_value());
  // Other exit codes ask nothing; a pod this server did not start has no container.
  std::filesystem::remove(data_ + "/calls");
  EXPECT_FALSE(runtime_->ExitReason("team-a_train-0", 1, PodDir() + "/none.log").has_value());
  EXPECT_FALSE(runtime_->ExitReason("team-a_other-0", 137, PodDir() + "/none.log").has_value());
  EXPECT_FALSE(fs::exists(data_ + "/calls"));
}

TEST_F(FakePodmanTest, ConmonsOomFileInThePodsDirectoryIsAnOomKill) {
  std::filesystem::create_directories(PodDir());
  std::ofstream(PodDir() + "/oom").flush();  // left by an earlier start: removed
  auto plan = Plan();
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_EQ(plan->spec.working_dir, PodDir());  // podman's, hence conmon's
  EXPECT_FALSE(fs::exists(PodDir() + "/oom"));
  Answer("false");
  std::ofstream(PodDir() + "/oom").flush();  // conmon saw the kernel kill the container
  auto reason = runtime_->ExitReason("team-a_train-0", 137, PodDir() + "/log");
  ASSERT_TRUE(reason.has_value());
  EXPECT_EQ(reason->reason, "OOMKilled");
  EXPECT_FALSE(fs::exists(data_ + "/calls"));  // no need to ask podman
  EXPECT_FALSE(fs::exists(PodDir() + "/oom"));
}

// The pull step before `podman run` (the executor's EnsureImage): in the background.
std::optional<PodmanRuntime::PullResult> AwaitPull(PodmanRuntime& runtime, const std::string& id) {
  for (int i = 0; i < 10'000; ++i) {
    if (auto result = runtime.PollPull(id)) return result;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // the fake podman's exit
  }
  return std::nullopt;
}

TEST_F(FakePodmanTest, ImagesAreCheckedAndPulledApart) {
  EXPECT_EQ(runtime_->ImagePresent("localhost/trainer:2"), std::optional<bool>(false));
  EXPECT_FALSE(runtime_->PollPull("team-a_train-0").has_value());  // none started
  runtime_->StartPull("team-a_train-0", "localhost/trainer:2");
  EXPECT_TRUE(runtime_->Pulling("team-a_train-0"));
  auto pulled = AwaitPull(*runtime_, "team-a_train-0");
  ASSERT_TRUE(pulled.has_value());
  EXPECT_TRUE(pulled->ok);
  EXPECT_EQ(pulled->size, 4096);
  EXPECT_FALSE(runtime_->Pulling("team-a_train-0"));
  EXPECT_NE(ReadAll(data_ + "/calls").find("pull --quiet -- localhost/trainer:2"),
            std::string::npos);

  runtime_->StartPull("team-a_train-1", "registry.invalid/missing:1");
  auto failed = AwaitPull(*runtime_, "team-a_train-1");
  ASSERT_TRUE(failed.has_value());
  EXPECT_FALSE(failed->ok);
  EXPECT_EQ(failed->error, "Error: initializing source: connection refused");

  // A pull cancelled (its pod stopped) is gone.
  runtime_->StartPull("team-a_train-2", "localhost/trainer:2");
  runtime_->CancelPull("team-a_train-2");
  EXPECT_FALSE(runtime_->Pulling("team-a_train-2"));
}

TEST_F(FakePodmanTest, PodmanRunPullsOnlyWhatWentMissingAfterThePullStep) {
  Spec().containers[0].image_pull_policy = "Always";
  auto plan = Plan();
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_TRUE(HasArg(plan->spec.argv, "--pull=missing"));
  Spec().containers[0].image_pull_policy = "Never";
  plan = Plan();
  ASSERT_TRUE(plan.ok()) << plan.status().message();
  EXPECT_TRUE(HasArg(plan->spec.argv, "--pull=never"));
}

}  // namespace
}  // namespace muster::server
