// Loading `muster serve -f` manifests into the store at start: every object not
// already stored is created through the API's own create path (same defaults and
// validation as `kubectl create`); objects already there are left alone, so a
// restart never duplicates or reverts anything.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

#include "server/api_handler.h"

namespace muster::server {

struct SeedStats {
  int created = 0;
  int present = 0;
  int skipped = 0;  // unknown kinds
};

// Validates all manifests first (as `muster validate` does); on errors prints them
// to `err` and stores nothing.
Result<SeedStats> SeedManifests(ApiHandler& handler, const std::vector<std::string>& paths,
                                bool fresh_store, std::ostream& err);

}  // namespace muster::server
