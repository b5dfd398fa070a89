#include "server/process_supervisor.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>
#include <utility>

#include "server/process_launch.h"
#include "server/process_stat.h"

namespace muster::server {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr char kStateFileName[] = "state.json";
constexpr char kStateTmpFileName[] = "state.json.tmp";
constexpr char kDefaultPath[] = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
constexpr int kLostExitCode = 137;  // what the kubelet reports for ContainerStatusUnknown

bool ValidId(const std::string& id) {
  if (id.empty() || id.size() > 200 || id == "." || id == "..") return false;
  return std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

// Nothing of the server's environment: only the process's own, with a PATH.
std::map<std::string, std::string> ChildEnvironment(const std::map<std::string, std::string>& pod) {
  std::map<std::string, std::string> env = pod;
  env.emplace("PATH", kDefaultPath);  // only when the pod sets none
  return env;
}

nlohmann::json CgroupJson(const CgroupPaths& paths) {
  return {{"dirs", paths.dirs},
          {"kill", paths.kill_file},
          {"memory", paths.memory_dir},
          {"v2_memory", paths.v2_memory}};
}

CgroupPaths CgroupFromJson(const nlohmann::json& state) {
  CgroupPaths paths;
  auto it = state.find("cgroup");
  if (it == state.end() || !it->is_object()) return paths;
  const nlohmann::json& c = *it;
  if (c.contains("dirs") && c["dirs"].is_array()) {
    for (const auto& d : c["dirs"]) {
      // Only what an earlier server wrote: absolute cgroupfs paths.
      if (d.is_string() && d.get<std::string>().starts_with("/sys/fs/cgroup/")) {
        paths.dirs.push_back(d.get<std::string>());
      }
    }
  }
  auto str = [&](const char* key) {
    return c.contains(key) && c[key].is_string() ? c[key].get<std::string>() : std::string();
  };
  paths.kill_file = str("kill");
  paths.memory_dir = str("memory");
  paths.v2_memory = c.value("v2_memory", false);
  return paths;
}

std::string ErrnoText() { return std::strerror(errno); }

Status FsyncDir(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return Internal("cannot open " + dir + ": " + ErrnoText());
  int rc = ::fsync(fd);
  ::close(fd);
  if (rc != 0) return Internal("cannot fsync " + dir + ": " + ErrnoText());
  return Status::Ok();
}

// tmp + fsync + rename + fsync(dir): the file is either the old or the new content
// after a crash, never half-written.
Status WriteFileDurably(const std::string& dir, const std::string& name,
                        const std::string& tmp_name, const std::string& content) {
  std::string tmp = dir + "/" + tmp_name;
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) return Internal("cannot create " + tmp + ": " + ErrnoText());
  size_t written = 0;
  while (written < content.size()) {
    ssize_t n = ::write(fd, content.data() + written, content.size() - written);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    written += static_cast<size_t>(n);
  }
  bool ok = written == content.size() && ::fsync(fd) == 0;
  std::string error = ErrnoText();
  ::close(fd);
  if (!ok) return Internal("cannot write " + tmp + ": " + error);
  if (::rename(tmp.c_str(), (dir + "/" + name).c_str()) != 0) {
    return Internal("cannot rename " + tmp + ": " + ErrnoText());
  }
  return FsyncDir(dir);
}

std::optional<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Fields of a state file written by an earlier server; a missing or mistyped field
// reads as 0 / "" (never throws), which no live process matches.
int64_t IntField(const nlohmann::json& state, const char* key) {
  auto it = state.find(key);
  return it != state.end() && it->is_number_integer() ? it->get<int64_t>() : 0;
}

std::string StringField(const nlohmann::json& state, const char* key) {
  auto it = state.find(key);
  return it != state.end() && it->is_string() ? it->get<std::string>() : "";
}

ProcessExit LostExit(const std::string& id) {
  ProcessExit exit;
  exit.id = id;
  exit.exit_code = kLostExitCode;
  exit.lost = true;
  return exit;
}

// kill(-pgid): guarded, because kill(0) and kill(-1) would hit the server's own group
// or every process.
void SignalGroup(int pgid, int signal_number) {
  if (pgid > 1) ::kill(-pgid, signal_number);
}

// For a Start that cannot complete: the command never runs, the shim ends.
void AbandonShim(StartedShim& shim) {
  SignalGroup(shim.child_pid, SIGKILL);
  CancelShim(shim);
  while (::waitpid(shim.shim_pid, nullptr, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

ProcessSupervisor::ProcessSupervisor(std::string root, SupervisorOptions options)
    : root_(std::move(root)), options_(std::move(options)) {
  std::error_code ignored;  // Start reports a root that cannot be created
  // Absolute, because the shim keeps the server's cwd while the paths outlive it.
  root_ = fs::absolute(root_, ignored).lexically_normal().string();
  if (root_.size() > 1 && root_.back() == '/') root_.pop_back();
  fs::create_directories(root_, ignored);
  ::chmod(root_.c_str(), 0711);
}

ProcessSupervisor::~ProcessSupervisor() = default;

std::string ProcessSupervisor::Dir(const std::string& id) const { return root_ + "/" + id; }

std::string ProcessSupervisor::LogPath(const std::string& id) const { return Dir(id) + "/log"; }

std::string ProcessSupervisor::PreviousLogPath(const std::string& id) const {
  return Dir(id) + "/log.previous";
}

// The finished run's files become the previous run's: log -> log.previous,
// log.N -> log.previous.N (older previous files are dropped).
void ProcessSupervisor::RotateLogs(const std::string& id) const {
  std::error_code ec;
  const std::string current = LogPath(id);
  const std::string previous = PreviousLogPath(id);
  auto segment = [](const std::string& base, int k) {
    return k == 0 ? base : base + "." + std::to_string(k);
  };
  for (int k = 0; k < 1000 && fs::exists(segment(previous, k), ec); ++k) {
    fs::remove(segment(previous, k), ec);
  }
  for (int k = 0; k < 1000 && fs::exists(segment(current, k), ec); ++k) {
    fs::rename(segment(current, k), segment(previous, k), ec);
  }
}

Status ProcessSupervisor::Start(const ProcessSpec& spec) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!ValidId(spec.id)) {
    return InvalidArgument("process id \"" + spec.id + "\" must be 1-200 of [A-Za-z0-9._-]");
  }
  if (spec.argv.empty()) return InvalidArgument(spec.id + ": empty command");
  if (running_.count(spec.id) != 0) {
    return AlreadyExists(spec.id + ": already running (or its exit is not polled yet)");
  }
  const std::string dir = Dir(spec.id);
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec) return Internal("cannot create " + dir + ": " + ec.message());
  ::chmod(dir.c_str(), 0711);  // enter (the work dir), never list
  const bool default_dir = spec.working_dir.empty();
  const std::string work_dir = dir + "/work";
  std::string working_dir = default_dir ? work_dir : spec.working_dir;
  if (!working_dir.starts_with("/")) {
    return InvalidArgument(spec.id + ": working directory \"" + working_dir + "\" is not absolute");
  }
  // The pod's own directory exists whatever its workingDir: it is its default HOME,
  // where a relative workingDir lives, and what the pod's private view of the data
  // directory puts back (a pod with a workingDir failed to mount it).
  fs::create_directories(work_dir, ec);
  if (ec) return Internal("cannot create working directory " + work_dir + ": " + ec.message());
  // Private to the process's user.
  if (spec.credentials &&
      ::chown(work_dir.c_str(), spec.credentials->uid, spec.credentials->gid) != 0) {
    return Internal("cannot give " + work_dir + " to uid " + std::to_string(spec.credentials->uid) +
                    ": " + ErrnoText());
  }
  ::chmod(work_dir.c_str(), 0700);

  std::map<std::string, std::string> env = ChildEnvironment(spec.env);
  // A command relative to a working directory the server cannot see yet (created by
  // the pod's user, or a mount) is looked up at exec time instead.
  Result<std::string> executable = FindExecutable(spec.argv[0], env["PATH"], working_dir);
  if (!executable.ok() && (spec.argv[0].find('/') == std::string::npos || default_dir)) {
    return Status(executable.status().code(), spec.id + ": " + executable.status().message());
  }
  std::string resolved = executable.ok()                 ? *executable
                         : spec.argv[0].starts_with("/") ? spec.argv[0]
                                                         : working_dir + "/" + spec.argv[0];

  // A process of an earlier server that Recover did not adopt must not be doubled.
  if (auto state = ReadWholeFile(dir + "/" + kStateFileName)) {
    auto json = nlohmann::json::parse(*state, nullptr, /*allow_exceptions=*/false);
    if (json.is_object() && StringField(json, "boot_id") == CurrentBootId() &&
        ProcessAlive(static_cast<int>(IntField(json, "pid")),
                     static_cast<uint64_t>(IntField(json, "start_ticks")))) {
      return AlreadyExists(spec.id + ": still running from an earlier server (call Recover)");
    }
  }
  for (const char* stale : {kStateFileName, kExitFileName, kExitTmpFileName, kExecedFileName}) {
    fs::remove(dir + "/" + stale, ec);
  }
  ec.clear();
  RotateLogs(spec.id);

  CgroupPaths cgroup;
  if (options_.cgroups.available()) {
    auto created = options_.cgroups.Create(spec.id, spec.limits);
    if (!created.ok())
      return Status(created.status().code(), spec.id + ": " + created.status().message());
    cgroup = std::move(created).value();
  }

  ShimLaunch launch;
  launch.executable = resolved;
  launch.argv = spec.argv;
  for (const auto& [name, value] : env) launch.env.push_back(name + "=" + value);
  launch.working_dir = working_dir;
  launch.create_working_dir = !default_dir;
  launch.log_path = LogPath(spec.id);
  launch.log_max_bytes = options_.log_max_bytes;
  launch.log_max_files = options_.log_max_files;
  launch.dir = dir;
  launch.cgroup_procs = cgroup.ProcsFiles();
  launch.cgroup_kill = cgroup.kill_file;
  launch.private_mounts = spec.private_mounts;
  launch.mounts = spec.mounts;
  launch.hostname = spec.hostname;
  launch.credentials = spec.credentials;
  launch.no_new_privs = spec.no_new_privs;
  Result<StartedShim> started = StartShim(launch);
  if (!started.ok()) {
    CgroupDriver::Remove(cgroup).ok();
    return Status(started.status().code(), spec.id + ": " + started.status().message());
  }
  StartedShim& shim = *started;

  // Both are readable: the shim waits on the release pipe and has not reaped the child.
  auto shim_stat = ReadProcessStat(shim.shim_pid);
  auto child_stat = ReadProcessStat(shim.child_pid);
  if (!shim_stat || !child_stat) {
    AbandonShim(shim);
    CgroupDriver::Remove(cgroup).ok();
    return Internal(spec.id + ": cannot read /proc for the started process");
  }
  nlohmann::json state = {{"version", 1},
                          {"id", spec.id},
                          {"boot_id", CurrentBootId()},
                          {"shim_pid", shim.shim_pid},
                          {"shim_start_ticks", shim_stat->start_ticks},
                          {"pid", shim.child_pid},
                          {"start_ticks", child_stat->start_ticks},
                          {"argv", spec.argv},
                          {"cgroup", CgroupJson(cgroup)}};
  Status written = WriteFileDurably(dir, kStateFileName, kStateTmpFileName, state.dump() + "\n");
  if (!written.ok()) {
    AbandonShim(shim);
    CgroupDriver::Remove(cgroup).ok();
    fs::remove(dir + "/" + kExitFileName, ec);
    return written;
  }
  ReleaseShim(shim);

  Tracked tracked;
  tracked.shim_pid = shim.shim_pid;
  tracked.shim_start_ticks = shim_stat->start_ticks;
  tracked.pid = shim.child_pid;
  tracked.start_ticks = child_stat->start_ticks;
  tracked.shim_is_child = true;
  tracked.cgroup = std::move(cgroup);
  running_[spec.id] = tracked;
  return Status::Ok();
}

void ProcessSupervisor::Terminate(const std::string& id, double grace_seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  TerminateLocked(id, grace_seconds);
}

void ProcessSupervisor::TerminateAll(double grace_seconds) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& [id, process] : running_) TerminateLocked(id, grace_seconds);
}

void ProcessSupervisor::TerminateLocked(const std::string& id, double grace_seconds) {
  auto it = running_.find(id);
  if (it == running_.end()) return;
  Tracked& process = it->second;
  // Finished but not polled yet: its group id may already be free for reuse.
  if (fs::exists(Dir(id) + "/" + kExitFileName)) return;
  if (grace_seconds <= 0) {
    SignalGroup(process.pid, SIGKILL);
    CgroupDriver::Kill(process.cgroup);
    process.kill_sent = true;
    return;
  }
  SignalGroup(process.pid, SIGTERM);
  auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                     std::chrono::duration<double>(grace_seconds));
  if (!process.kill_deadline || deadline < *process.kill_deadline) {
    process.kill_deadline = deadline;
  }
}

bool ProcessSupervisor::ShimAlive(Tracked& process) {
  if (process.shim_is_child) {
    if (!process.shim_reaped) {
      if (::waitpid(process.shim_pid, nullptr, WNOHANG) == 0) return true;
      process.shim_reaped = true;  // reaped now, or ECHILD: SIGCHLD ignored, auto-reaped
    }
    return false;
  }
  auto stat = ReadProcessStat(process.shim_pid);
  if (!stat || stat->start_ticks != process.shim_start_ticks) return false;
  if (stat->state == 'Z') {
    // Adopted from an earlier supervisor object in this same process: still our child.
    ::waitpid(process.shim_pid, nullptr, WNOHANG);
    return false;
  }
  return true;
}

std::optional<ProcessExit> ProcessSupervisor::ReadExitFile(const std::string& id) const {
  auto content = ReadWholeFile(Dir(id) + "/" + kExitFileName);
  if (!content) return std::nullopt;
  ProcessExit exit;
  exit.id = id;
  std::istringstream in(*content);
  std::string key;
  int value = 0;
  bool has_code = false;
  while (in >> key >> value) {
    if (key == "exit_code") {
      exit.exit_code = value;
      has_code = true;
    } else if (key == "signal") {
      exit.signal = value;
    }
  }
  return has_code ? exit : LostExit(id);
}

std::optional<ProcessExit> ProcessSupervisor::CheckFinished(const std::string& id,
                                                            Tracked& process) {
  // The shim writes the exit file before it exits, so once it is gone the file is
  // the truth.
  if (ShimAlive(process)) return std::nullopt;
  if (auto exit = ReadExitFile(id)) return exit;
  // The shim was killed: the process may outlive it, unwatched; it is lost once gone.
  if (ProcessAlive(process.pid, process.start_ticks)) return std::nullopt;
  return LostExit(id);
}

// CheckFinished, then the cgroup's part: OOM kills, and its removal.
std::optional<ProcessExit> ProcessSupervisor::Finish(const std::string& id, Tracked& process) {
  std::optional<ProcessExit> exit = CheckFinished(id, process);
  if (!exit) return exit;
  exit->oom_killed = CgroupDriver::OomKills(process.cgroup) > 0;
  CgroupDriver::Remove(process.cgroup).ok();  // kills what escaped the group first
  return exit;
}

void ProcessSupervisor::EnforceDeadline(Tracked& process, Clock::time_point now) {
  if (process.kill_sent || !process.kill_deadline || now < *process.kill_deadline) return;
  SignalGroup(process.pid, SIGKILL);
  CgroupDriver::Kill(process.cgroup);  // what left the group (setsid) too
  process.kill_sent = true;
}

std::vector<ProcessExit> ProcessSupervisor::Poll() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ProcessExit> exits;
  const Clock::time_point now = Clock::now();
  for (auto it = running_.begin(); it != running_.end();) {
    if (auto exit = Finish(it->first, it->second)) {
      exits.push_back(*exit);
      it = running_.erase(it);
    } else {
      EnforceDeadline(it->second, now);
      ++it;
    }
  }
  return exits;
}

std::vector<ProcessExit> ProcessSupervisor::WaitAll(double timeout_seconds) {
  const Clock::time_point deadline =
      Clock::now() +
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_seconds));
  std::vector<ProcessExit> exits;
  while (true) {
    for (ProcessExit& exit : Poll()) exits.push_back(std::move(exit));
    if (RunningIds().empty() || Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return exits;
}

bool ProcessSupervisor::Running(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  return running_.count(id) != 0;
}

std::vector<std::string> ProcessSupervisor::RunningIds() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> ids;
  for (const auto& [id, process] : running_) ids.push_back(id);
  return ids;
}

int ProcessSupervisor::Pid(const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = running_.find(id);
  return it == running_.end() ? 0 : it->second.pid;
}

std::optional<ProcessSupervisor::Target> ProcessSupervisor::ExecTarget(
    const std::string& id) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = running_.find(id);
  if (it == running_.end() || it->second.pid <= 0) return std::nullopt;
  // Not before the exec: until then the pid is the server's copy (root, its
  // environment, its namespaces), not the pod.
  std::error_code ec;
  if (!fs::exists(Dir(id) + "/" + kExecedFileName, ec)) return std::nullopt;
  return Target{it->second.pid, it->second.start_ticks, it->second.cgroup.ProcsFiles()};
}

std::vector<RecoveredProcess> ProcessSupervisor::Recover() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> ids;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root_, ec)) {
    std::string id = entry.path().filename().string();
    if (entry.is_directory(ec) && ValidId(id) && running_.count(id) == 0 &&
        fs::exists(entry.path() / kStateFileName, ec)) {
      ids.push_back(id);
    }
  }
  std::sort(ids.begin(), ids.end());

  const std::string boot_id = CurrentBootId();
  std::vector<RecoveredProcess> recovered;
  for (const std::string& id : ids) {
    RecoveredProcess result{id, false, std::nullopt};
    auto content = ReadWholeFile(Dir(id) + "/" + kStateFileName);
    auto state = nlohmann::json::parse(content.value_or(""), nullptr, false);
    if (auto exit = ReadExitFile(id)) {
      result.exit = *exit;
    } else if (!state.is_object() || StringField(state, "boot_id") != boot_id) {
      result.exit = LostExit(id);  // unreadable, or the machine rebooted since
    } else {
      Tracked process;
      process.shim_pid = static_cast<int>(IntField(state, "shim_pid"));
      process.shim_start_ticks = static_cast<uint64_t>(IntField(state, "shim_start_ticks"));
      process.pid = static_cast<int>(IntField(state, "pid"));
      process.start_ticks = static_cast<uint64_t>(IntField(state, "start_ticks"));
      process.cgroup = CgroupFromJson(state);
      if (auto exit = Finish(id, process)) {
        result.exit = *exit;
      } else {
        result.running = true;
        running_[id] = process;
      }
    }
    recovered.push_back(std::move(result));
  }
  return recovered;
}

Status ProcessSupervisor::Remove(const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!ValidId(id)) return InvalidArgument("process id \"" + id + "\" is not valid");
  if (running_.count(id) != 0) return FailedPrecondition(id + ": still running");
  if (auto state = ReadWholeFile(Dir(id) + "/" + kStateFileName)) {
    auto json = nlohmann::json::parse(*state, nullptr, /*allow_exceptions=*/false);
    if (json.is_object()) CgroupDriver::Remove(CgroupFromJson(json)).ok();
  }
  std::error_code ec;
  fs::remove_all(Dir(id), ec);
  if (ec) return Internal("cannot remove " + Dir(id) + ": " + ec.message());
  return Status::Ok();
}

std::vector<std::string> ProcessSupervisor::KnownIds() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::string> ids;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(root_, ec)) {
    std::string id = entry.path().filename().string();
    if (entry.is_directory(ec) && ValidId(id)) ids.push_back(id);
  }
  std::sort(ids.begin(), ids.end());
  return ids;
}

}  // namespace muster::server
