// Who created an object: the API server records the authenticated user of every
// create as the annotation muster.dev/owner (the shared contract of HELPERS.md and
// docs/serve.md). It is server-set: a client's value is overwritten on create, and
// updates and patches cannot change or remove it. The executor runs an object's
// pods as its owner, so the annotation must not be forgeable.
#pragma once

#include <nlohmann/json.hpp>

#include "server/auth/identity.h"

namespace muster::server::auth {

inline constexpr char kOwnerAnnotation[] = "muster.dev/owner";

// The owner a create by `user` records: the user's name, or the server's own user
// for requests nothing authenticated (in-process callers, serve without
// authentication).
const std::string& OwnerName(const UserInfo& user);

// Sets metadata.annotations["muster.dev/owner"] of `object` (a JSON object whose
// metadata is an object) to OwnerName(user).
void RecordOwner(nlohmann::json& object, const UserInfo& user);
// The same with the owner's name given (an in-process create on a user's behalf).
void RecordOwner(nlohmann::json& object, const std::string& owner);

// Makes `next`'s owner annotation what `current`'s is (absent when it has none):
// the value an update or patch sent is ignored.
void KeepOwner(const nlohmann::json& current, nlohmann::json& next);

}  // namespace muster::server::auth
