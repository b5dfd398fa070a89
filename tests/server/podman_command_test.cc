// The `podman run` command line for a pod (podman_command.h): pull policy mapping and
// upstream's default, command vs args against the image's entrypoint, env through a
// file, volumes with readOnly, the hosts file, limits, GPUs, the owner's user; and how
// a failed `podman run` is read back as the kubelet's reason. Pure: no podman needed.
#include "server/podman_command.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace muster::server {
namespace {

bool Has(const std::vector<std::string>& argv, const std::string& arg) {
  return std::find(argv.begin(), argv.end(), arg) != argv.end();
}

// The arguments after the image (the container's own).
std::vector<std::string> After(const std::vector<std::string>& argv, const std::string& image) {
  auto it = std::find(argv.begin(), argv.end(), image);
  return it == argv.end() ? std::vector<std::string>{}
                          : std::vector<std::string>(it + 1, argv.end());
}

PodmanRun Basic() {
  PodmanRun run;
  run.podman = "/usr/bin/podman";
  run.name = "muster-team-a_train-0-1";
  run.image = "localhost/muster-test:1";
  run.uid = 1001;
  run.gid = 1002;
  run.hostname = "train-0";
  run.hosts_file = "/data/pods/team-a_train-0/hosts";
  run.env_file = "/data/pods/team-a_train-0/container.env";
  return run;
}

TEST(PodmanPullPolicy, MapsTheKubeletPolicies) {
  EXPECT_EQ(*PodmanPullPolicy("img:1", "Always"), "always");
  EXPECT_EQ(*PodmanPullPolicy("img:1", "IfNotPresent"), "missing");
  EXPECT_EQ(*PodmanPullPolicy("img:latest", "Never"), "never");
}

TEST(PodmanPullPolicy, DefaultsAsUpstream) {
  EXPECT_EQ(*PodmanPullPolicy("busybox", ""), "always");
  EXPECT_EQ(*PodmanPullPolicy("busybox:latest", ""), "always");
  EXPECT_EQ(*PodmanPullPolicy("registry:5000/team/busybox", ""), "always");
  EXPECT_EQ(*PodmanPullPolicy("registry:5000/team/busybox:1.36", ""), "missing");
  EXPECT_EQ(*PodmanPullPolicy("busybox@sha256:abcd", ""), "missing");
}

TEST(PodmanPullPolicy, RefusesOtherValuesNamingTheField) {
  auto r = PodmanPullPolicy("busybox", "Sometimes");
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("imagePullPolicy"), std::string::npos);
}

TEST(PodmanEnvFile, OneLinePerVariable) {
  auto text = PodmanEnvFile({{"A", "hello world"}, {"B", "x=y"}, {"EMPTY", ""}});
  ASSERT_TRUE(text.ok());
  EXPECT_EQ(*text, "A=hello world\nB=x=y\nEMPTY=\n");
}

TEST(PodmanEnvFile, RefusesWhatTheFileCannotHoldNamingTheVariable) {
  auto multi = PodmanEnvFile({{"PEM", "line1\nline2"}});
  ASSERT_FALSE(multi.ok());
  EXPECT_NE(multi.status().message().find("PEM"), std::string::npos);
  EXPECT_FALSE(PodmanEnvFile({{"#X", "1"}}).ok());
  EXPECT_FALSE(PodmanEnvFile({{"A B", "1"}}).ok());
}

TEST(PodmanRunArgv, RunsTheImageAsTheOwnerOnTheHostNetwork) {
  PodmanRun run = Basic();
  run.oci_runtime = "runc";
  run.pull = "never";
  run.labels = {{kPodmanPodLabel, "team-a/train-0"}, {kPodmanProcessLabel, "team-a_train-0"}};
  run.groups = {1002, 27};
  auto argv = PodmanRunArgv(run);
  ASSERT_GE(argv.size(), 3u);
  EXPECT_EQ(argv[0], "/usr/bin/podman");
  EXPECT_EQ(argv[1], "--runtime=runc");
  EXPECT_EQ(argv[2], "run");
  EXPECT_TRUE(Has(argv, "--rm"));
  EXPECT_TRUE(Has(argv, "--name=muster-team-a_train-0-1"));
  EXPECT_TRUE(Has(argv, "--pull=never"));
  EXPECT_TRUE(Has(argv, "--network=host"));
  EXPECT_TRUE(Has(argv, "--hostname=train-0"));
  EXPECT_TRUE(Has(argv, "--user=1001:1002"));
  EXPECT_TRUE(Has(argv, "--group-add=27"));
  EXPECT_FALSE(Has(argv, "--group-add=1002"));  // the primary group already
  EXPECT_TRUE(Has(argv, "--security-opt=no-new-privileges"));
  EXPECT_TRUE(Has(argv, "--label=muster.dev/pod=team-a/train-0"));
  EXPECT_TRUE(Has(argv, "--label=muster.dev/process=team-a_train-0"));
  EXPECT_TRUE(Has(argv, "--env-file=/data/pods/team-a_train-0/container.env"));
  EXPECT_TRUE(Has(argv, "--volume=/data/pods/team-a_train-0/hosts:/etc/hosts:ro"));
  EXPECT_EQ(argv.back(), "localhost/muster-test:1");  // no command: the image's own
  for (const auto& a : argv) EXPECT_EQ(a.find("--entrypoint"), std::string::npos) << a;
}

TEST(PodmanRunArgv, RootOwnerKeepsPrivilegesItAlreadyHas) {
  PodmanRun run = Basic();
  run.uid = 0;
  run.gid = 0;
  auto argv = PodmanRunArgv(run);
  EXPECT_TRUE(Has(argv, "--user=0:0"));
  EXPECT_FALSE(Has(argv, "--security-opt=no-new-privileges"));
}

TEST(PodmanRunArgv, CommandReplacesTheEntrypointAndArgsFollowTheImage) {
  PodmanRun run = Basic();
  run.command = {"sh", "-c"};
  run.args = {"echo \"$X\""};
  auto argv = PodmanRunArgv(run);
  EXPECT_TRUE(Has(argv, "--entrypoint=[\"sh\",\"-c\"]"));
  EXPECT_EQ(After(argv, run.image), std::vector<std::string>{"echo \"$X\""});
}

TEST(PodmanRunArgv, ArgsAloneKeepTheEntrypoint) {
  PodmanRun run = Basic();
  run.args = {"--epochs", "3"};
  auto argv = PodmanRunArgv(run);
  for (const auto& a : argv) EXPECT_EQ(a.find("--entrypoint"), std::string::npos) << a;
  EXPECT_EQ(After(argv, run.image), (std::vector<std::string>{"--epochs", "3"}));
}

TEST(PodmanRunArgv, VolumesWithReadOnlyAndMemoryEmptyDir) {
  PodmanRun run = Basic();
  run.mounts.push_back({MountStep::Kind::kBind, "/d/vol/creds", "/creds", true, false, false, ""});
  run.mounts.push_back(
      {MountStep::Kind::kBind, "/d/vol/scratch", "/scratch", false, false, true, ""});
  run.mounts.push_back({MountStep::Kind::kTmpfs, "", "/dev/shm", false, false, false, "size=1g"});
  auto argv = PodmanRunArgv(run);
  EXPECT_TRUE(Has(argv, "--volume=/d/vol/creds:/creds:ro"));
  EXPECT_TRUE(Has(argv, "--volume=/d/vol/scratch:/scratch"));
  EXPECT_TRUE(Has(argv, "--tmpfs=/dev/shm:size=1g"));
}

TEST(PodmanRunArgv, WorkingDirAndLimits) {
  PodmanRun run = Basic();
  run.working_dir = "/workspace";
  run.cpu_millis = 1500;
  run.cpu_shares_millis = 500;
  run.memory_bytes = int64_t{2} << 30;
  run.nofile = 20000;
  run.nproc = 32768;
  auto argv = PodmanRunArgv(run);
  EXPECT_TRUE(Has(argv, "--workdir=/workspace"));
  EXPECT_TRUE(Has(argv, "--cpus=1.5"));
  EXPECT_TRUE(Has(argv, "--cpu-shares=512"));
  EXPECT_TRUE(Has(argv, "--memory=2147483648"));
  EXPECT_TRUE(Has(argv, "--memory-swap=2147483648"));  // no swap beyond the limit
  EXPECT_TRUE(Has(argv, "--ulimit=nofile=20000:20000"));
  EXPECT_TRUE(Has(argv, "--ulimit=nproc=32768:32768"));
}

TEST(PodmanRunArgv, WholeAndSmallCpuLimits) {
  PodmanRun run = Basic();
  run.cpu_millis = 2000;
  EXPECT_TRUE(Has(PodmanRunArgv(run), "--cpus=2"));
  run.cpu_millis = 250;
  EXPECT_TRUE(Has(PodmanRunArgv(run), "--cpus=0.25"));
  run.cpu_millis = 5;
  EXPECT_TRUE(Has(PodmanRunArgv(run), "--cpus=0.005"));
}

TEST(PodmanRunArgv, GpusAsDeviceNodes) {
  PodmanRun run = Basic();
  run.gpus = {"2", "3"};
  auto argv = PodmanRunArgv(run);
  EXPECT_TRUE(Has(argv, "--device=/dev/nvidia2"));
  EXPECT_TRUE(Has(argv, "--device=/dev/nvidia3"));
  EXPECT_TRUE(Has(argv, "--device=/dev/nvidiactl"));
  EXPECT_TRUE(Has(argv, "--device=/dev/nvidia-uvm"));
  EXPECT_FALSE(Has(argv, "--device=/dev/nvidia0"));
}

TEST(PodmanRunArgv, GpusThroughCdi) {
  PodmanRun run = Basic();
  run.gpus = {"1"};
  run.cdi = true;
  auto argv = PodmanRunArgv(run);
  EXPECT_TRUE(Has(argv, "--device=nvidia.com/gpu=1"));
  EXPECT_FALSE(Has(argv, "--device=/dev/nvidiactl"));
}

TEST(PodmanRunArgv, NoGpusNoDevices) {
  for (const auto& a : PodmanRunArgv(Basic())) {
    EXPECT_EQ(a.find("--device"), std::string::npos) << a;
  }
}

TEST(ValidatePodmanRun, AcceptsAnOrdinaryPod) {
  PodmanRun run = Basic();
  run.mounts.push_back({MountStep::Kind::kBind, "/d/vol/creds", "/creds", true, false, false, ""});
  EXPECT_TRUE(ValidatePodmanRun(run).ok());
  run.image = "registry:5000/team/img@sha256:abcd";
  EXPECT_TRUE(ValidatePodmanRun(run).ok());
}

TEST(ValidatePodmanRun, AnImageCannotBeAFlag) {
  PodmanRun run = Basic();
  for (const char* image : {"--privileged", "-u0", "img name", "", "img\n"}) {
    run.image = image;
    Status s = ValidatePodmanRun(run);
    EXPECT_FALSE(s.ok()) << image;
    EXPECT_NE(s.message().find("image"), std::string::npos) << s.message();
  }
}

TEST(ValidatePodmanRun, AVolumePathCannotCarryMountOptions) {
  PodmanRun run = Basic();
  run.mounts.push_back({MountStep::Kind::kBind, "/d/vol/x", "/data:suid", false, false, false, ""});
  Status s = ValidatePodmanRun(run);
  EXPECT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/data:suid"), std::string::npos) << s.message();
  run.mounts[0].target = "/data";
  run.mounts[0].source = "/host/a,b";
  EXPECT_FALSE(ValidatePodmanRun(run).ok());
}

TEST(ClassifyPodmanExit, PullFailureIsErrImagePull) {
  auto f = ClassifyPodmanExit(
      125,
      "Trying to pull localhost/nope:1...\nError: initializing source docker://localhost/nope:1: "
      "pinging container registry localhost: connection refused\n");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->reason, "ErrImagePull");
  EXPECT_NE(f->message.find("initializing source"), std::string::npos);
}

TEST(ClassifyPodmanExit, OtherPodmanErrorsAreCreateContainerError) {
  auto f = ClassifyPodmanExit(125, "Error: invalid reference format\n");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->reason, "CreateContainerError");
  EXPECT_EQ(f->message, "Error: invalid reference format");
}

TEST(ClassifyPodmanExit, ACommandTheRuntimeCannotExecIsStartError) {
  auto f = ClassifyPodmanExit(
      127,
      "Error: runc: runc create failed: unable to start container process: exec: \"/nope\": "
      "stat /nope: no such file or directory: OCI runtime attempted to invoke a command that "
      "was not found\n");
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->reason, "StartError");
  EXPECT_NE(f->message.find("/nope"), std::string::npos);
  // A shell in the container that exits 127 is the container's own failure.
  EXPECT_FALSE(ClassifyPodmanExit(127, "sh: nope: not found\n").has_value());
}

TEST(ClassifyPodmanExit, TheContainersOwnExitCodesStay) {
  EXPECT_FALSE(ClassifyPodmanExit(0, "").has_value());
  EXPECT_FALSE(ClassifyPodmanExit(1, "pull failed").has_value());
  EXPECT_FALSE(ClassifyPodmanExit(137, "").has_value());
}

TEST(PodmanContainerName, UniquePerStart) {
  EXPECT_EQ(PodmanContainerName("team-a_train-0", 17), "muster-team-a_train-0-17");
  EXPECT_NE(PodmanContainerName("a_b", 1), PodmanContainerName("a_b", 2));
}

TEST(NeverPullMessage, IsTheKubelets) {
  EXPECT_EQ(NeverPullMessage("img:1"),
            "Container image \"img:1\" is not present with pull policy of Never");
}

}  // namespace
}  // namespace muster::server
