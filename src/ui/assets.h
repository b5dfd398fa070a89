// The dashboard's static files (src/ui/assets/*), compiled into the binary by
// cmake/embed_assets.cmake: the page needs nothing from disk or the network.
#pragma once

#include <string_view>
#include <vector>

namespace muster::ui {

struct EmbeddedAsset {
  std::string_view name;  // file name under src/ui/assets ("app.js")
  std::string_view data;
};

// Sorted by name.
const std::vector<EmbeddedAsset>& EmbeddedAssets();

// The asset of that name, or null.
const EmbeddedAsset* FindAsset(std::string_view name);

}  // namespace muster::ui
