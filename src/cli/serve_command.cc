// muster serve: the embedded control plane (kubectl-compatible API over a durable
// SQLite store). The engine and executor plug in as server::Controllers.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/scheduler_config_file.h"
#include "control/process_heap.h"
#include "core/duration.h"
#include "server/cronjob_controller.h"
#include "server/garbage_collector.h"
#include "server/namespace_controller.h"
#include "server/quota_controller.h"
#include "server/scheduler_controller.h"
#include "server/serve.h"
#include "server/store_health_monitor.h"
#include "server/ttl_after_finished.h"

namespace muster::cli {

void RegisterServeCommand(CLI::App& app, int& exit_code) {
  auto* cmd =
      app.add_subcommand("serve", "Run the embedded control plane (kubectl-compatible API)");
  auto opts = std::make_shared<server::ServeOptions>();
  cmd->add_option("--data", opts->data_dir, "Directory of the durable store (created if missing)")
      ->required();
  cmd->add_option("--listen", opts->listen, "HOST:PORT to serve plain HTTP on (port 0: any)")
      ->capture_default_str();
  cmd->add_option("-f,--filename", opts->manifests,
                  "Manifests loaded at start if not already stored; repeatable")
      ->take_all();
  cmd->add_flag("!--no-local-node", opts->local_node,
                "Without -f: do not register this machine (its cpus, memory and GPUs) as a Node");
  cmd->add_option("--tls-cert-file", opts->auth.tls_cert_file,
                  "PEM certificate (chain) to serve HTTPS with (with --tls-private-key-file)");
  cmd->add_option("--tls-private-key-file", opts->auth.tls_private_key_file,
                  "PEM private key of --tls-cert-file");
  cmd->add_option("--client-ca-file", opts->auth.client_ca_file,
                  "PEM CA bundle: a client certificate it signs authenticates as its CN (user) "
                  "and O (groups); needs TLS");
  cmd->add_option("--token-auth-file", opts->auth.token_auth_file,
                  "Static bearer tokens, kube-apiserver's CSV: token,user,uid[,\"group1,group2\"]");
  cmd->add_option("--authorization-mode", opts->auth.authorization_mode,
                  "With authentication: RBAC (Roles, ClusterRoles and their bindings decide; "
                  "system:masters may do everything) or AlwaysAllow")
      ->check(CLI::IsMember({"RBAC", "AlwaysAllow"}))
      ->capture_default_str();
  cmd->add_flag("--auto-tls", opts->auth.auto_tls,
                "Serve HTTPS with a CA and certificates muster makes in DATA/pki (kept across "
                "restarts), authenticate client certificates it signs, and write "
                "DATA/admin.kubeconfig (system:masters)");
  auto executor = std::make_shared<std::string>("local");
  cmd->add_option("--executor", *executor,
                  "local: run pods as local processes; emulated: mark bound pods Running without "
                  "processes and finish them after their sim.muster.dev/duration (like kwok)")
      ->check(CLI::IsMember({"local", "emulated"}))
      ->capture_default_str();
  auto kubelet = std::make_shared<server::KubeletOptions>();
  cmd->add_option("--user-map", kubelet->user_map_file,
                  "File of \"OWNER ACCOUNT\" lines: the local account a job's owner "
                  "(muster.dev/owner) runs its pods as; default: the account of the same name");
  cmd->add_option("--host-path-prefix", kubelet->host_path_prefixes,
                  "Allow hostPath volumes under this directory for every owner (repeatable; "
                  "default: only pods of root may mount hostPath volumes)")
      ->take_all();
  cmd->add_option("--container-log-max-size", kubelet->container_log_max_size,
                  "Rotate a container's log at this size (kubelet's containerLogMaxSize)")
      ->capture_default_str();
  cmd->add_option("--container-log-max-files", kubelet->container_log_max_files,
                  "Log files kept per container, the live one included (containerLogMaxFiles)")
      ->capture_default_str();
  cmd->add_option("--container-runtime", kubelet->container_runtime,
                  "none: run each pod's command as a local process (the image is ignored); "
                  "podman: run pods as podman containers of their images (needs root); auto: "
                  "podman when it is installed and works, else none")
      ->check(CLI::IsMember({"none", "podman", "auto"}))
      ->capture_default_str();
  cmd->add_option("--image-pull-backoff", kubelet->image_pull_backoff,
                  "INITIAL,MAX: a pod whose image cannot be pulled waits INITIAL, then twice "
                  "as long after each failure up to MAX (the kubelet's 10s,300s)")
      ->capture_default_str();
  auto event_ttl = std::make_shared<std::string>("1h");
  cmd->add_option("--event-ttl", *event_ttl,
                  "Delete an Event this long after it was last recorded (kube-apiserver's "
                  "--event-ttl)")
      ->capture_default_str();
  auto events = std::make_shared<server::EventRetention>();
  cmd->add_option("--max-events", events->max_events,
                  "Keep at most about this many Events (the oldest go first; a tenth more may "
                  "exist for a moment); 0: no limit")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  auto config_path = std::make_shared<std::string>();
  cmd->add_option("--config", *config_path,
                  "Scheduler configuration file: a SchedulerConfiguration (muster.dev/v1alpha1), "
                  "Volcano's volcano-scheduler.conf or its ConfigMap, or a Kueue Configuration; "
                  "takes the place of such objects in the store");
  cmd->callback([opts, executor, kubelet, event_ttl, events, config_path, &exit_code] {
    auto ttl = ParseDurationSeconds(*event_ttl);
    if (!ttl.ok() || *ttl <= 0) {
      std::cerr << "muster serve: --event-ttl: \"" << *event_ttl
                << "\" is not a positive duration (e.g. 1h, 30m, 90s)\n";
      exit_code = 1;
      return;
    }
    events->ttl_seconds = *ttl;
    auto scheduler = std::make_unique<server::SchedulerController>(
        *executor == "emulated" ? server::ExecutorKind::kEmulated : server::ExecutorKind::kLocal,
        *kubelet);
    if (!config_path->empty()) {
      auto config = LoadSchedulerConfigFile(*config_path, "muster serve", std::cerr);
      if (!config) {
        exit_code = 1;
        return;
      }
      scheduler->SetConfiguration(std::move(config->scheduler_config),
                                  std::move(config->kueue_config));
    }
    std::vector<std::unique_ptr<server::Controller>> controllers;
    controllers.push_back(std::move(scheduler));
    controllers.push_back(std::make_unique<server::GarbageCollector>(*events));
    controllers.push_back(std::make_unique<server::NamespaceController>());
    controllers.push_back(std::make_unique<server::QuotaController>());
    controllers.push_back(std::make_unique<server::TtlAfterFinishedController>());
    controllers.push_back(std::make_unique<server::CronJobController>());
    controllers.push_back(std::make_unique<server::StoreHealthMonitor>());
    control::TuneHeapForServer();
    exit_code = server::RunServe(*opts, std::move(controllers), std::cout, std::cerr);
  });
}

}  // namespace muster::cli
