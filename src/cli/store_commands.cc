// muster backup / muster restore: a consistent snapshot of serve's store and a new
// data directory made from one (etcdctl snapshot save / restore).
#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <string>

#include "cli/api_client.h"
#include "cli/client_options.h"
#include "cli/commands.h"
#include "server/object_store.h"
#include "server/store_routes.h"

namespace muster::cli {
namespace {

struct BackupArgs {
  std::string out;
  std::string data_dir;  // offline: the store of a stopped server
  std::string server;    // online: a running server
};

// Streams GET /muster/v1/snapshot into OUT.partial, then renames it: a failed or
// interrupted backup never leaves a file that looks whole.
Status BackupOnline(const std::string& server, const std::string& out) {
  ClientOptions options;
  options.server = server;
  ApiClient client(options.ServerUrl());
  const std::string partial = out + ".partial";
  std::ofstream file(partial, std::ios::binary | std::ios::trunc);
  if (!file) return InvalidArgument("cannot write " + partial);
  std::error_code ec;
  // A snapshot holds every object, Secrets included: readable by its owner only.
  std::filesystem::permissions(
      partial, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write,
      std::filesystem::perm_options::replace, ec);
  std::string head;  // the start of the body: an error Status instead of a snapshot
  Status s =
      client.Stream(server::kSnapshotPath, "application/octet-stream", [&](std::string_view bytes) {
        if (head.size() < 16) head.append(bytes.substr(0, 16));
        file.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        return static_cast<bool>(file);
      });
  file.close();
  if (s.ok() && head.rfind("SQLite format 3", 0) != 0) {
    s = Status(StatusCode::kUnavailable, "the server did not send a snapshot");
  }
  if (!s.ok() || !file) {
    std::filesystem::remove(partial, ec);
    return s.ok() ? InvalidArgument("cannot write " + partial) : s;
  }
  std::filesystem::rename(partial, out, ec);
  if (ec) return InvalidArgument("cannot rename " + partial + " to " + out + ": " + ec.message());
  return Status::Ok();
}

int RunBackup(const BackupArgs& args) {
  if (std::filesystem::exists(args.out)) {
    std::cerr << "error: " << args.out << " exists: a backup is written to a new file\n";
    return 1;
  }
  if (!args.data_dir.empty()) {
    auto store = server::ObjectStore::Open(args.data_dir);
    if (!store.ok()) {
      std::cerr << "error: " << args.data_dir << ": " << store.status().message()
                << " (while muster serve runs, back it up with --server)\n";
      return 1;
    }
    auto rv = (*store)->SaveSnapshot(args.out);
    if (!rv.ok()) return ReportError(rv.status());
    std::cout << "snapshot of " << args.data_dir << " at resourceVersion " << *rv << " saved to "
              << args.out << "\n";
    return 0;
  }
  if (Status s = BackupOnline(args.server, args.out); !s.ok()) return ReportError(s);
  std::cout << "snapshot saved to " << args.out << "\n";
  return 0;
}

}  // namespace

void RegisterStoreCommands(CLI::App& app, int& exit_code) {
  auto* backup = app.add_subcommand(
      "backup", "Save a consistent snapshot of muster serve's store (like etcdctl snapshot save)");
  auto args = std::make_shared<BackupArgs>();
  backup->add_option("out", args->out, "File to write (must not exist)")->required();
  auto* data = backup->add_option("--data", args->data_dir,
                                  "Data directory of a stopped muster serve (offline backup)");
  backup
      ->add_option("--server", args->server,
                   "URL of a running muster serve (default: $MUSTER_SERVER, else "
                   "http://127.0.0.1:8080); needs system:masters")
      ->excludes(data);
  backup->callback([args, &exit_code] { exit_code = RunBackup(*args); });

  auto* restore = app.add_subcommand(
      "restore", "Make a new data directory from a snapshot (like etcdctl snapshot restore)");
  auto snapshot = std::make_shared<std::string>();
  auto dir = std::make_shared<std::string>();
  restore->add_option("snapshot", *snapshot, "Snapshot file from muster backup")->required();
  restore->add_option("--data", *dir, "New data directory to create from it")->required();
  restore->callback([snapshot, dir, &exit_code] {
    auto rv = server::ObjectStore::RestoreSnapshot(*snapshot, *dir);
    if (!rv.ok()) {
      exit_code = ReportError(rv.status());
      return;
    }
    std::cout << "restored " << *dir << " from " << *snapshot << " (resourceVersion " << *rv
              << "); start it with: muster serve --data " << *dir << "\n";
    exit_code = 0;
  });
}

}  // namespace muster::cli
