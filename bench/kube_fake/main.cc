// kube_fake_bench: issue 13's kube-mode figures against the in-process fake API
// server (tests/kube/kube_load.h), so that CI can measure them without a control
// plane. muster kube runs as a child process (`--muster`, default: the muster binary
// next to this one) and its CPU and memory are read from /proc/<pid>; the fake API
// server, Job controller and kubelet run here. docs/kube.md "Against the fake API
// server" has the figures and what each counts.
//
//   kube_fake_bench [--nodes N] [--gpus G] [--jobs J] [--pods P] [--delay-ms D]
//                   [--idle-seconds S] [--settle-seconds S] [--stall-seconds S]
//                   [--muster PATH | --in-process] [--log FILE] [--perf FILE]
//                   [-o json] [-- muster kube flags...]
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "kube/kube_load.h"
#include "muster_process.h"

namespace {

using muster::kube::testing::LoadOptions;

int Usage(const char* argv0) {
  std::cerr << "usage: " << argv0
            << " [--nodes N] [--gpus G] [--jobs J] [--pods P] [--delay-ms D]"
               " [--idle-seconds S] [--settle-seconds S] [--stall-seconds S]"
               " [--muster PATH | --in-process] [--log FILE] [--perf FILE] [-o json]"
               " [-- muster kube flags...]\n";
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  LoadOptions o;
  o.delay = std::chrono::milliseconds(3);
  o.idle_seconds = 10;
  o.settle_seconds = 3;
  std::string muster = (std::filesystem::path(argv[0]).parent_path() / "muster").string();
  std::string log_path = "kube_fake_bench.muster.log";
  std::string perf_out;
  bool in_process = false;
  bool json = false;
  std::vector<std::string> extra;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::exit(Usage(argv[0]));
      }
      return argv[++i];
    };
    if (a == "--nodes") {
      o.nodes = std::stoi(next());
    } else if (a == "--gpus") {
      o.gpus_per_node = std::stoi(next());
    } else if (a == "--jobs") {
      o.jobs = std::stoi(next());
    } else if (a == "--pods") {
      o.pods_per_job = std::stoi(next());
    } else if (a == "--delay-ms") {
      o.delay = std::chrono::milliseconds(std::stoi(next()));
    } else if (a == "--idle-seconds") {
      o.idle_seconds = std::stod(next());
    } else if (a == "--settle-seconds") {
      o.settle_seconds = std::stod(next());
    } else if (a == "--stall-seconds") {
      o.stall_seconds = std::stod(next());
    } else if (a == "--muster") {
      muster = next();
    } else if (a == "--in-process") {
      in_process = true;
    } else if (a == "--log") {
      log_path = next();
    } else if (a == "--perf") {
      perf_out = next();
    } else if (a == "-o") {
      json = next() == "json";
    } else if (a == "--") {
      extra.assign(argv + i + 1, argv + argc);
      break;
    } else {
      return Usage(argv[0]);
    }
  }
  o.log = [](const std::string& line) { std::cerr << "kube_fake_bench: " << line << std::endl; };

  std::unique_ptr<muster::kube::testing::SchedulerUnderTest> scheduler;
  muster::kube::testing::MusterProcess* process = nullptr;
  if (in_process) {
    scheduler = muster::kube::testing::InProcessScheduler();
  } else {
    auto p = std::make_unique<muster::kube::testing::MusterProcess>(muster, extra, log_path);
    process = p.get();
    scheduler = std::move(p);
  }
  // --perf: `perf record -g` of muster kube over the binding window only.
  pid_t perf = -1;
  if (!perf_out.empty() && process != nullptr) {
    o.on_binding_start = [&] {
      const std::string pid = std::to_string(process->pid());
      std::vector<std::string> args = {"perf", "record", "-g", "-o", perf_out, "-p", pid};
      std::vector<char*> av;
      for (auto& s : args) av.push_back(s.data());
      av.push_back(nullptr);
      perf = ::fork();
      if (perf == 0) {
        ::execvp("perf", av.data());
        ::_exit(127);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));  // attached
    };
    o.on_binding_end = [&] {
      if (perf <= 0) return;
      ::kill(perf, SIGINT);
      int status = 0;
      ::waitpid(perf, &status, 0);
    };
  }
  muster::kube::testing::LoadResult r = RunLoad(o, *scheduler);
  scheduler.reset();
  if (json) {
    nlohmann::json j = nlohmann::json::parse(r.Json());
    j["nodes"] = o.nodes;
    j["gpus"] = o.gpus_per_node;
    j["jobs"] = o.jobs;
    j["pods"] = o.pods_per_job;
    j["delay_ms"] = o.delay.count();
    j["scheduler"] = in_process ? "in-process" : "process";
    std::cout << j.dump() << std::endl;
  } else {
    std::cout << "RESULT nodes=" << o.nodes << " gpus=" << o.gpus_per_node << " jobs=" << o.jobs
              << " pods=" << o.pods_per_job << " delay_ms=" << o.delay.count()
              << " scheduler=" << (in_process ? "in-process" : "process") << " " << r.Line()
              << std::endl;
  }
  return r.stalled.empty() ? 0 : 1;
}
