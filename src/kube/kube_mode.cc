#include "kube/kube_mode.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <ostream>
#include <thread>

#include "kube/cluster_connection.h"
#include "kube/dashboard_server.h"
#include "kube/leader_election.h"
#include "kube/object_cache.h"
#include "kube/reflector.h"
#include "kube/webhook_server.h"

namespace muster::kube {

int RunKube(const KubeModeOptions& options, std::ostream& out, std::ostream& err) {
  auto connection = ResolveConnection(options.kubeconfig, options.context);
  if (!connection.ok()) {
    err << "muster kube: " << connection.status().message() << "\n";
    return 1;
  }
  // Signals go to one sigwait thread; blocked before any other thread exists.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  signal(SIGPIPE, SIG_IGN);

  KubeClient client(*connection, options.client);
  out << "muster kube: API server " << connection->server << " (" << connection->source << ")"
      << std::endl;

  std::unique_ptr<WebhookServer> webhook;
  if (options.webhook_port > 0) {
    WebhookServerOptions wo;
    wo.port = options.webhook_port;
    wo.cert_dir = options.webhook_cert_dir;
    wo.webhook.manage_jobs_without_queue_name = options.controller.manage_jobs_without_queue_name;
    if (!options.controller.scheduler_names.empty())
      wo.webhook.scheduler_name = options.controller.scheduler_names.front();
    webhook = std::make_unique<WebhookServer>(wo);
    if (Status s = webhook->Start(); !s.ok()) {
      err << "muster kube: webhook: " << s.message() << "\n";
      return 1;
    }
    out << "muster kube: admission webhook on :" << webhook->port() << std::endl;
  }

  // The scheduler's view, published by the controller after each step, read by the
  // dashboard's listener.
  ui::ViewPublisher views;
  std::unique_ptr<DashboardServer> dashboard;
  if (options.dashboard_port > 0) {
    DashboardServerOptions d;
    d.host = options.dashboard_host;
    d.port = options.dashboard_port;
    d.upstream = *connection;
    d.views = &views;
    dashboard = std::make_unique<DashboardServer>(d);
    if (Status s = dashboard->Start(); !s.ok()) {
      err << "muster kube: dashboard: " << s.message() << "\n";
      return 1;
    }
    out << "muster kube: dashboard on http://" << d.host << ":" << dashboard->port() << "/ui/"
        << std::endl;
  }

  ObjectCache cache;
  KubeOptions controller_options = options.controller;
  // The view is built after every scheduling cycle (O(nodes + workloads)): only for a
  // dashboard that reads it. Without one it was a fifth of muster kube's CPU while
  // binding (bench/kube_fake, 1,000 nodes).
  controller_options.views = dashboard ? &views : nullptr;
  std::vector<std::unique_ptr<Reflector>> reflectors;
  for (const control::ResourceType* type : WatchedResources()) {
    controller_options.watched.push_back(type->StoreKey());
    reflectors.push_back(std::make_unique<Reflector>(client, *type, cache, ReflectorOptions{}));
  }
  KubeController controller(client, cache, controller_options);
  // The controller subscribes before the reflectors deliver, so nothing is missed; it
  // schedules only once every resource has listed.
  std::atomic<int> exit_code{0};
  std::atomic<bool> shutting_down{false};
  std::unique_ptr<LeaderElector> elector;
  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&signals, &sig);
  });
  if (options.leader_elect) {
    LeaderElectionConfig lc;
    lc.lease_namespace =
        options.lease_namespace.empty() ? connection->namespace_ : options.lease_namespace;
    lc.lease_name = options.lease_name;
    lc.on_started_leading = [&] {
      out << "muster kube: leading (lease " << lc.lease_namespace << "/" << lc.lease_name << ")"
          << std::endl;
      controller.Start();
    };
    lc.on_stopped_leading = [&] {
      if (shutting_down.load()) return;  // our own release at shutdown
      // Another replica may lead now: stop writing at once and exit.
      // A process-directed signal: the sigwait thread takes it, or it stays pending
      // harmlessly (blocked everywhere) if shutdown already began.
      exit_code = 2;
      kill(getpid(), SIGTERM);
    };
    elector = std::make_unique<LeaderElector>(client, lc);
  } else {
    controller.Start();
  }
  for (auto& r : reflectors) r->Start();
  if (elector) elector->Start();
  out << "muster kube: watching " << reflectors.size() << " resources" << std::endl;

  signal_thread.join();
  shutting_down = true;
  out << "muster kube: stopping" << std::endl;
  // Every watch is asked to end first: they end together within one poll interval.
  for (auto& r : reflectors) r->RequestStop();
  controller.Stop();
  if (elector) elector->Stop();  // releases the lease for a standby
  for (auto& r : reflectors) r->Stop();
  if (webhook) webhook->Stop();
  if (dashboard) dashboard->Stop();
  out << "muster kube: stopped" << std::endl;
  // Every thread has ended and what muster writes lives in the API server: leave
  // without destroying the object cache and the reconciler's state one object at a
  // time (seconds at scale; issue 13: exit within 1 s of SIGTERM).
  err.flush();
  std::fflush(nullptr);
  std::_Exit(exit_code.load());
}

}  // namespace muster::kube
