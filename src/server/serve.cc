#include "server/serve.h"

#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <thread>

#include "server/api_handler.h"
#include "server/auth/bootstrap_policy.h"
#include "server/auth/rbac_authorizer.h"
#include "server/http_server.h"
#include "server/local_node.h"
#include "server/manifest_seed.h"
#include "server/metrics.h"
#include "server/namespace_lifecycle.h"
#include "server/priority_classes.h"
#include "ui/dashboard.h"
#include "ui/view_publisher.h"

namespace muster::server {

int RunServe(const ServeOptions& options, std::vector<std::unique_ptr<Controller>> controllers,
             std::ostream& out, std::ostream& err) {
  // Everything the server creates (the store, pod directories, logs) is private; what
  // a pod must read is given its mode explicitly, and pods start with umask 022.
  ::umask(077);
  std::string host;
  int port = 0;
  if (Status s = ParseListenAddress(options.listen, host, port); !s.ok()) {
    err << "muster serve: " << s.message() << "\n";
    return 1;
  }
  auto authn = auth::SetUpAuthentication(options.auth, host, options.data_dir);
  if (!authn.ok()) {
    err << "muster serve: " << authn.status().message() << "\n";
    return 1;
  }
  auto store = ObjectStore::Open(options.data_dir);
  if (!store.ok()) {
    err << "muster serve: " << store.status().message() << "\n";
    return 1;
  }
  ObjectStore& db = **store;
  for (const std::string& line : db.quarantined()) {
    err << "muster serve: a stored object could not be read and was set aside (table "
           "quarantine of the store): "
        << line << "\n";
  }
  const bool fresh = db.resource_version() == 0;
  // Before the handler, which asks it until the server is gone (auth/rbac_authorizer.h).
  std::unique_ptr<auth::RbacAuthorizer> authorizer;
  if (authn->rbac) authorizer = std::make_unique<auth::RbacAuthorizer>(db);

  // Signals are taken by one thread with sigwait, so the handler can call into the
  // server safely; they are blocked before any other thread exists to inherit that.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  // Clients that vanish mid-response must not kill the server.
  signal(SIGPIPE, SIG_IGN);

  // Before the handler, which renders and counts into it until it is gone.
  MetricsRegistry metrics;
  DeclareApiMetrics(metrics);
  DeclareSchedulerMetrics(metrics);
  ui::ViewPublisher views;
  ApiHandler handler(db, host + ":" + std::to_string(port));
  handler.set_metrics(&metrics);
  handler.set_views(&views);
  handler.set_authorizer(authorizer.get());
  // The dashboard's page and scripts under /ui/ (static: it reads the API like any
  // client, with the user's credentials); everything else is the API.
  HttpServerOptions http_options;
  http_options.tls = authn->tls;
  http_options.public_path = [](std::string_view path) { return ui::IsDashboardPath(path); };
  HttpServer http(
      [&handler](const ApiRequest& r) -> ApiResult {
        if (auto page = ui::ServeDashboard(r.method, r.path)) {
          return ApiResponse{page->code, page->content_type, std::string(page->body)};
        }
        return handler.Handle(r);
      },
      http_options);
  http.set_authenticate([&authenticator = authn->authenticator](const HttpRequest& request,
                                                                const auth::PeerIdentity& peer) {
    return authenticator.Authenticate(request, peer);
  });
  if (Status s = http.Bind(host, port); !s.ok()) {
    err << "muster serve: " << s.message() << "\n";
    return 1;
  }
  handler.set_server_address(host + ":" + std::to_string(http.port()));
  if (authn->pki) {
    // The first credential of a secured server; rewritten each start (the port may
    // have been chosen at bind).
    const std::string url =
        "https://" +
        (auth::IsLoopbackHost(host) || host.empty() || host == "0.0.0.0" || host == "::"
             ? std::string("127.0.0.1")
             : (host.find(':') != std::string::npos ? "[" + host + "]" : host)) +
        ":" + std::to_string(http.port());
    auto kubeconfig = auth::WriteAdminKubeconfig(options.data_dir, *authn->pki, url);
    if (!kubeconfig.ok()) {
      err << "muster serve: " << kubeconfig.status().message() << "\n";
      return 1;
    }
    out << "muster serve: admin credentials (system:masters) in " << *kubeconfig
        << ": kubectl --kubeconfig " << *kubeconfig << " get nodes\n";
  }
  // Watches are pulled by the server's stream pump: every committed change wakes it.
  struct Unsubscribe {
    WatchHub& hub;
    WatchHub::SubscriptionId id;
    ~Unsubscribe() { hub.Unsubscribe(id); }
  } wake{db.hub(), db.hub().Subscribe([&http](const WatchHub::ChangePtr&) { http.WakeStreams(); })};
  handler.set_data_dir(options.data_dir);

  // Namespaces every cluster has.
  for (const char* ns : {"default", "kube-system"}) {
    if (!db.Get({"namespaces", "", ns}).ok()) {
      db.Create({"namespaces", "", ns}, NewNamespace(ns));
    }
  }
  // The PriorityClasses every cluster has (system-node-critical, system-cluster-critical).
  for (const nlohmann::json& pc : SystemPriorityClasses()) {
    const std::string name = pc["metadata"]["name"];
    if (!db.Get({"priorityclasses.scheduling.k8s.io", "", name}).ok()) {
      db.Create({"priorityclasses.scheduling.k8s.io", "", name}, pc);
    }
  }
  // The default roles and bindings, kept whether or not RBAC is enforced, so turning
  // authentication on later finds them (auth/bootstrap_policy.h).
  if (auto policy = auth::ReconcileBootstrapPolicy(db); !policy.ok()) {
    err << "muster serve: the default RBAC roles: " << policy.status().message() << "\n";
    return 1;
  }
  if (!options.manifests.empty()) {
    auto seeded = SeedManifests(handler, options.manifests, fresh, err);
    if (!seeded.ok()) {
      err << "muster serve: " << seeded.status().message() << "\n";
      return 1;
    }
    out << "muster serve: loaded manifests: " << seeded->created << " created, " << seeded->present
        << " already present, " << seeded->skipped << " skipped\n";
  }
  if (options.manifests.empty() && options.local_node) {
    auto nodes = db.List("nodes", "");
    if (nodes.ok() && nodes->items.empty()) {
      const LocalMachine machine = DiscoverLocalMachine();
      // Not fatal: the API is still useful, and nodes can be created by hand.
      if (Status s = CreateLocalNode(handler, LocalNodeManifests(machine)); !s.ok()) {
        err << "muster serve: " << s.message() << "\n";
      } else {
        out << "muster serve: local node " << DescribeLocalMachine(machine) << "\n";
      }
    }
  }
  ServeContext context{db, options.data_dir, &metrics, &views, &handler};
  for (auto& c : controllers) {
    if (Status s = c->Start(context); !s.ok()) {
      err << "muster serve: " << c->name() << ": " << s.message() << "\n";
      return 1;
    }
  }

  std::atomic<bool> stopping{false};
  std::thread signal_thread([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    stopping = true;
    // A kill -9 at any moment loses nothing (every write is one transaction,
    // acknowledged only after its fsync; pods are adopted or stopped at the next
    // start), so a long cycle, trim or request need not hold the exit up: what still
    // runs 0.8 s after the signal is cut short, and the process ends within a second
    // (issue 13), however many jobs it holds.
    std::thread([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(800));
      static const char kCut[] = "muster serve: stopped (shutdown cut short after 0.8 s)\n";
      (void)!::write(STDERR_FILENO, kCut, sizeof(kCut) - 1);
      std::_Exit(0);
    }).detach();
    handler.set_ready(false);
    db.hub().Close();  // ends open watches
    http.Stop();
  });
  handler.set_ready(true);
  out << "muster serve: listening on " << (authn->tls ? "https://" : "http://") << host << ":"
      << http.port() << " (data " << options.data_dir << ", resourceVersion "
      << db.resource_version() << "; dashboard /ui/)" << std::endl;
  http.Serve();
  // Serve() also returns if listening failed: wake the signal thread then.
  // The signal thread waits in sigwait() for SIGTERM: sending it one is how it wakes.
  if (!stopping) {
    pthread_kill(signal_thread.native_handle(),  // NOLINT(bugprone-bad-signal-to-kill-thread)
                 SIGTERM);
  }
  signal_thread.join();
  for (auto it = controllers.rbegin(); it != controllers.rend(); ++it) (*it)->Stop();
  // Every acknowledged write is on disk already (a commit answers after its fsync)
  // and every thread of the server has ended: close the store and leave without
  // destroying the rest of what the process holds in memory. With 10,000 jobs,
  // freeing the reconciler's and executors' objects one by one took seconds after
  // the server had stopped (issue 13: exit within 1 s of SIGTERM); the kernel takes
  // that memory back at once.
  store->reset();
  out << "muster serve: stopped" << std::endl;
  err.flush();
  std::fflush(nullptr);
  std::_Exit(0);
}

}  // namespace muster::server
