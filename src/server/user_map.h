// Which local Unix account a pod runs as. The API records who created a job as the
// annotation `muster.dev/owner` (the authenticated user; without authentication, the
// user the server runs as), and the pods of the job carry it. The owner maps to an
// account of the same name, unless `muster serve --user-map FILE` says otherwise:
//
//   # owner            account
//   alice@example.com  alice
//   system:admin       root
//   *                  nobody       (optional: every other owner)
//
// An owner with no account is refused (the pod fails with a clear reason): a pod
// never falls back to root, and runs as root only when its owner maps to root.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <vector>

#include "core/status.h"

namespace muster::server {

inline constexpr char kOwnerAnnotation[] = "muster.dev/owner";

struct Account {
  std::string name;
  uid_t uid = 0;
  gid_t gid = 0;
  std::vector<gid_t> groups;  // supplementary groups (from the group database)
  std::string home;           // "" when the account has none
};

class UserMap {
 public:
  UserMap() = default;
  // Parses the file's text: one "owner account" pair per line, '#' comments, '*' as a
  // catch-all owner. InvalidArgument names the line.
  static Result<UserMap> Parse(const std::string& text, const std::string& file_name);
  static Result<UserMap> Load(const std::string& path);

  // The account name `owner` maps to (the same name unless mapped).
  std::string AccountName(const std::string& owner) const;
  // Looks the account up in the password and group databases. FailedPrecondition
  // naming the owner and account when it does not exist.
  Result<Account> Resolve(const std::string& owner) const;

  // The account this server runs as (the owner of jobs created without one).
  static Result<Account> Current();
  static Result<Account> Lookup(const std::string& account);

 private:
  std::map<std::string, std::string> entries_;
};

}  // namespace muster::server
