#include "server/auth/identity.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <string>

namespace muster::server::auth {

bool UserInfo::InGroup(const std::string& group) const {
  return std::find(groups.begin(), groups.end(), group) != groups.end();
}

const UserInfo& ServerUser() {
  static const UserInfo kUser = [] {
    UserInfo u;
    passwd pw{};
    passwd* found = nullptr;
    char buf[4096];
    const uid_t uid = geteuid();
    if (getpwuid_r(uid, &pw, buf, sizeof buf, &found) == 0 && found != nullptr) {
      u.name = found->pw_name;
    } else {
      u.name = "uid-" + std::to_string(uid);  // no passwd entry (a bare container)
    }
    u.uid = std::to_string(uid);
    u.groups = {kMastersGroup, kAuthenticatedGroup};
    return u;
  }();
  return kUser;
}

}  // namespace muster::server::auth
