#include "server/user_map.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

namespace muster::server {
namespace {

Result<Account> FromPasswd(const struct passwd& pw) {
  Account a;
  a.name = pw.pw_name;
  a.uid = pw.pw_uid;
  a.gid = pw.pw_gid;
  a.home = pw.pw_dir != nullptr ? pw.pw_dir : "";
  int count = 32;
  std::vector<gid_t> groups(static_cast<size_t>(count));
  if (::getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &count) < 0) {
    groups.resize(static_cast<size_t>(count));
    if (::getgrouplist(pw.pw_name, pw.pw_gid, groups.data(), &count) < 0) count = 0;
  }
  groups.resize(static_cast<size_t>(count));
  a.groups = std::move(groups);
  return a;
}

}  // namespace

Result<UserMap> UserMap::Parse(const std::string& text, const std::string& file_name) {
  UserMap map;
  std::istringstream in(text);
  int line_number = 0;
  for (std::string line; std::getline(in, line);) {
    ++line_number;
    if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::string owner, account, extra;
    if (!(fields >> owner)) continue;
    if (!(fields >> account) || (fields >> extra)) {
      return InvalidArgument(file_name + ":" + std::to_string(line_number) +
                             ": want \"OWNER ACCOUNT\" (two fields), got \"" + line + "\"");
    }
    if (map.entries_.count(owner) != 0) {
      return InvalidArgument(file_name + ":" + std::to_string(line_number) + ": owner \"" + owner +
                             "\" is mapped twice");
    }
    map.entries_[owner] = account;
  }
  return map;
}

Result<UserMap> UserMap::Load(const std::string& path) {
  std::ifstream in(path);
  if (!in) return InvalidArgument("--user-map " + path + ": cannot read the file");
  std::ostringstream text;
  text << in.rdbuf();
  return Parse(text.str(), path);
}

std::string UserMap::AccountName(const std::string& owner) const {
  if (auto it = entries_.find(owner); it != entries_.end()) return it->second;
  if (auto it = entries_.find("*"); it != entries_.end()) return it->second;
  return owner;
}

Result<Account> UserMap::Lookup(const std::string& account) {
  if (account.empty()) return FailedPrecondition("no account name");
  long size = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(static_cast<size_t>(size > 0 ? size : 16384));
  struct passwd pw;
  struct passwd* found = nullptr;
  while (true) {
    int rc = ::getpwnam_r(account.c_str(), &pw, buf.data(), buf.size(), &found);
    if (rc == ERANGE && buf.size() < (1u << 20)) {
      buf.resize(buf.size() * 2);
      continue;
    }
    break;
  }
  if (found == nullptr) {
    return FailedPrecondition("there is no local account \"" + account + "\" on this machine");
  }
  return FromPasswd(pw);
}

Result<Account> UserMap::Resolve(const std::string& owner) const {
  const std::string account = AccountName(owner);
  auto resolved = Lookup(account);
  if (!resolved.ok()) {
    std::string how = account == owner ? "(an owner runs as the account of the same name)"
                                       : "(mapped by --user-map)";
    return FailedPrecondition("owner \"" + owner +
                              "\" has no local account: " + resolved.status().message() + " " +
                              how + "; map it with muster serve --user-map");
  }
  return resolved;
}

Result<Account> UserMap::Current() {
  long size = ::sysconf(_SC_GETPW_R_SIZE_MAX);
  std::vector<char> buf(static_cast<size_t>(size > 0 ? size : 16384));
  struct passwd pw;
  struct passwd* found = nullptr;
  ::getpwuid_r(::geteuid(), &pw, buf.data(), buf.size(), &found);
  if (found == nullptr) {
    Account a;
    a.name = std::to_string(::geteuid());
    a.uid = ::geteuid();
    a.gid = ::getegid();
    return a;
  }
  return FromPasswd(pw);
}

}  // namespace muster::server
