// Prints the meta.k8s.io Tables the server renders the way kubectl does: upper-case
// headers, columns padded to their widest cell plus 3 spaces, priority>0 columns
// only with -o wide, a NAMESPACE column first with --all-namespaces.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace muster::cli {

class TableOutput {
 public:
  TableOutput(bool wide, bool with_namespace) : wide_(wide), with_namespace_(with_namespace) {}

  // Takes the columns of `table` if none were taken yet and it defines some (a
  // watch sends them with its first event only).
  void TakeColumns(const nlohmann::json& table);
  bool has_columns() const { return !headers_.empty(); }

  // The header and/or rows of `table` as aligned lines. Column widths only grow,
  // so rows printed later (a watch) line up with the ones printed before.
  std::string Format(const nlohmann::json& table, bool header);

 private:
  std::vector<std::string> Cells(const nlohmann::json& row) const;
  std::string Line(const std::vector<std::string>& cells);

  bool wide_;
  bool with_namespace_;
  std::vector<std::string> headers_;
  std::vector<size_t> shown_;  // indices of the columns shown
  std::vector<size_t> widths_;
};

}  // namespace muster::cli
