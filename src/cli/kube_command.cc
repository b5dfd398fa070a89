// muster kube: the scheduler and admission controller of a real Kubernetes cluster.
#include <CLI/CLI.hpp>
#include <iostream>
#include <memory>

#include "cli/commands.h"
#include "cli/scheduler_config_file.h"
#include "control/process_heap.h"
#include "kube/kube_mode.h"

namespace muster::cli {

void RegisterKubeCommand(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand(
      "kube", "Schedule and admit the jobs of a Kubernetes cluster (Kueue + Volcano replacement)");
  auto opts = std::make_shared<kube::KubeModeOptions>();
  cmd->add_option("--kubeconfig", opts->kubeconfig,
                  "Kubeconfig file (default: $KUBECONFIG, in-cluster, ~/.kube/config)");
  cmd->add_option("--context", opts->context, "Kubeconfig context (default: current-context)");
  cmd->add_option("--scheduler-name", opts->controller.scheduler_names,
                  "Pods with this spec.schedulerName are bound by muster; repeatable")
      ->capture_default_str();
  cmd->add_flag("--manage-jobs-without-queue-name", opts->controller.manage_jobs_without_queue_name,
                "Also admit jobs without a kueue.x-k8s.io/queue-name label");
  cmd->add_option("--qps", opts->client.qps, "Client-side request rate limit (<= 0: none)")
      ->capture_default_str();
  cmd->add_option("--burst", opts->client.burst, "Client-side burst")->capture_default_str();
  cmd->add_flag("--leader-elect", opts->leader_elect,
                "Run the scheduler only while holding a coordination.k8s.io Lease");
  cmd->add_option("--lease-namespace", opts->lease_namespace,
                  "Namespace of the Lease (default: the kubeconfig/service-account namespace)");
  cmd->add_option("--lease-name", opts->lease_name, "Name of the Lease")->capture_default_str();
  cmd->add_option("--webhook-port", opts->webhook_port,
                  "Serve the mutating admission webhook over HTTPS on this port (0: off)")
      ->capture_default_str();
  cmd->add_option("--webhook-cert-dir", opts->webhook_cert_dir,
                  "Directory with the webhook's tls.crt and tls.key")
      ->capture_default_str();
  cmd->add_option("--dashboard-port", opts->dashboard_port,
                  "Serve the dashboard on this port, forwarding API reads with the user's own "
                  "credentials (0: off)")
      ->capture_default_str();
  cmd->add_option("--dashboard-host", opts->dashboard_host, "Address the dashboard listens on")
      ->capture_default_str();
  auto config_path = std::make_shared<std::string>();
  cmd->add_option("--config", *config_path,
                  "Scheduler configuration file: a SchedulerConfiguration (muster.dev/v1alpha1), "
                  "Volcano's volcano-scheduler.conf or its ConfigMap, or a Kueue Configuration; "
                  "replaces such objects in the cluster");
  cmd->callback([opts, config_path, &exit_code] {
    if (!config_path->empty()) {
      auto config = LoadSchedulerConfigFile(*config_path, "muster kube", std::cerr);
      if (!config) {
        exit_code = 1;
        return;
      }
      opts->controller.scheduler_config = std::move(config->scheduler_config);
      opts->controller.kueue_config = std::move(config->kueue_config);
    }
    control::TuneHeapForServer();
    control::TurnOffFastbins();  // libcurl's per-request buffer (process_heap.h)
    exit_code = kube::RunKube(*opts, std::cout, std::cerr);
  });
}

}  // namespace muster::cli
