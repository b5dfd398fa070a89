// serve_load: the submission half of bench/serve_emulated.sh in C++, so that on a
// small machine the figure is the server's and not a Python client's.
//
//   serve_load --port P --jobs JOBS.jsonl [--concurrency 32] [--host 127.0.0.1]
//              [--body yaml|json]
//
// JOBS.jsonl is serve_emulated.py split's output (one JSON object a line: "path",
// "body" as YAML). Each of --concurrency threads holds one keep-alive connection and
// POSTs the next unsent job (Content-Type application/yaml, no authentication: the
// same requests as serve_emulated.py's client) until none is left. --body json sends
// each job's "json" (split's JSON form, as kubectl sends) as application/json. Prints one line
// for people (submissions/s, errors, latency percentiles, this process's CPU) and one
// for serve_emulated.py: "times: BEGIN END" on CLOCK_MONOTONIC (Python's
// time.monotonic), so its sampler's timestamps compare with them.
#include <httplib.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace {

struct Job {
  std::string path;
  std::string body;
};

double MonotonicSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  auto sec = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
  };
  return sec(ru.ru_utime) + sec(ru.ru_stime);
}

// The q-quantile of sorted values (nearest rank), in milliseconds.
double Percentile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return 0;
  auto rank = static_cast<size_t>(q * static_cast<double>(sorted.size()));
  return sorted[std::min(rank, sorted.size() - 1)] * 1e3;
}

int Usage() {
  std::fprintf(stderr,
               "usage: serve_load --port P --jobs JOBS.jsonl [--concurrency N] [--host H] "
               "[--body yaml|json]\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string host = "127.0.0.1";
  std::string jobs_path;
  int port = 0;
  int concurrency = 32;
  bool json_body = false;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    std::string value = argv[i + 1];
    if (flag == "--port") {
      port = std::atoi(value.c_str());
    } else if (flag == "--jobs") {
      jobs_path = value;
    } else if (flag == "--concurrency") {
      concurrency = std::atoi(value.c_str());
    } else if (flag == "--host") {
      host = value;
    } else if (flag == "--body" && (value == "yaml" || value == "json")) {
      json_body = value == "json";
    } else {
      return Usage();
    }
  }
  if (port <= 0 || jobs_path.empty() || concurrency <= 0 || argc % 2 == 0) return Usage();

  std::vector<Job> jobs;
  std::ifstream in(jobs_path);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    auto j = nlohmann::json::parse(line);
    jobs.push_back(
        {j.at("path").get<std::string>(), j.at(json_body ? "json" : "body").get<std::string>()});
  }
  if (jobs.empty()) {
    std::fprintf(stderr, "no jobs in %s\n", jobs_path.c_str());
    return 1;
  }

  std::atomic<size_t> next{0};
  std::vector<std::vector<double>> latencies(static_cast<size_t>(concurrency));
  std::mutex errors_mu;
  std::vector<std::string> errors;
  auto worker = [&](size_t t) {
    httplib::Client client(host, port);
    client.set_keep_alive(true);
    // httplib writes the head and the body in separate sends: without TCP_NODELAY the
    // body waits for the server's delayed ACK (~40 ms a request; Python's http.client
    // sends both at once).
    client.set_tcp_nodelay(true);
    client.set_read_timeout(120, 0);
    client.set_write_timeout(120, 0);
    latencies[t].reserve(jobs.size() / static_cast<size_t>(concurrency) + 1);
    for (size_t i; (i = next.fetch_add(1)) < jobs.size();) {
      double start = MonotonicSeconds();
      auto res = client.Post(jobs[i].path, jobs[i].body,
                             json_body ? "application/json" : "application/yaml");
      latencies[t].push_back(MonotonicSeconds() - start);
      if (!res || res->status != 201) {
        std::string why = res ? std::to_string(res->status) + " " + res->body.substr(0, 200)
                              : httplib::to_string(res.error());
        std::lock_guard lock(errors_mu);
        errors.push_back(jobs[i].path + ": " + why);
      }
    }
  };

  double cpu_before = CpuSeconds();
  double begin = MonotonicSeconds();
  std::vector<std::thread> threads;
  for (size_t t = 0; t < static_cast<size_t>(concurrency); ++t) threads.emplace_back(worker, t);
  for (auto& th : threads) th.join();
  double end = MonotonicSeconds();
  double cpu = CpuSeconds() - cpu_before;

  std::vector<double> all;
  for (const auto& l : latencies) all.insert(all.end(), l.begin(), l.end());
  std::sort(all.begin(), all.end());
  size_t submitted = jobs.size() - errors.size();
  std::printf(
      "submitted: %zu jobs in %.2f s over %d connections: %.0f submissions/s (%zu errors); "
      "create latency ms p50 %.1f p99 %.1f max %.1f; client CPU %.2f s\n",
      submitted, end - begin, concurrency, static_cast<double>(submitted) / (end - begin),
      errors.size(), Percentile(all, 0.50), Percentile(all, 0.99), Percentile(all, 1.0), cpu);
  for (size_t i = 0; i < errors.size() && i < 5; ++i) {
    std::printf("  error: %s\n", errors[i].c_str());
  }
  std::printf("times: %.6f %.6f %zu\n", begin, end, errors.size());
  return errors.empty() ? 0 : 1;
}
