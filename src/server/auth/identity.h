// Who is asking: the user a request authenticated as (kube-apiserver's user.Info)
// and what the connection itself established (peer address, verified client
// certificate) that authenticators read.
#pragma once

#include <string>
#include <vector>

namespace muster::server::auth {

inline constexpr char kAnonymousUser[] = "system:anonymous";
inline constexpr char kUnauthenticatedGroup[] = "system:unauthenticated";
inline constexpr char kAuthenticatedGroup[] = "system:authenticated";
inline constexpr char kMastersGroup[] = "system:masters";

struct UserInfo {
  std::string name;  // "" only before authentication ran
  std::string uid;
  std::vector<std::string> groups;

  bool InGroup(const std::string& group) const;
};

// The user muster serve itself acts as (manifest seeding, the local node), and
// every request's user when serve runs without authentication (loopback only): the
// Unix account that runs the server, in system:masters. Objects it creates are
// owned by that account, so their pods run as it.
const UserInfo& ServerUser();

struct PeerIdentity {
  std::string address;  // "127.0.0.1", "::1", "10.0.0.7"
  bool loopback = false;
  // TLS only: the client presented a certificate that chains to the client CA.
  bool client_cert_verified = false;
  std::string cert_common_name;                 // the user (CN)
  std::vector<std::string> cert_organizations;  // the groups (O)
};

}  // namespace muster::server::auth
