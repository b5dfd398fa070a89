#include "cli/table_output.h"

#include <algorithm>
#include <cctype>

namespace muster::cli {
namespace {

using nlohmann::json;

constexpr size_t kPadding = 3;

std::string CellText(const json& cell) {
  if (cell.is_string()) return cell.get<std::string>();
  if (cell.is_null()) return "<none>";
  return cell.dump();
}

std::string Upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

}  // namespace

void TableOutput::TakeColumns(const json& table) {
  if (has_columns() || !table.contains("columnDefinitions") ||
      !table["columnDefinitions"].is_array() || table["columnDefinitions"].empty()) {
    return;
  }
  if (with_namespace_) headers_.push_back("NAMESPACE");
  const json& defs = table["columnDefinitions"];
  for (size_t i = 0; i < defs.size(); ++i) {
    if (!wide_ && defs[i].value("priority", 0) > 0) continue;
    shown_.push_back(i);
    headers_.push_back(Upper(defs[i].value("name", "")));
  }
}

std::vector<std::string> TableOutput::Cells(const json& row) const {
  std::vector<std::string> cells;
  if (with_namespace_) {
    std::string ns;
    if (row.contains("object") && row["object"].is_object() && row["object"].contains("metadata") &&
        row["object"]["metadata"].is_object()) {
      ns = row["object"]["metadata"].value("namespace", "");
    }
    cells.push_back(ns);
  }
  const json empty = json::array();
  const json& values = row.contains("cells") && row["cells"].is_array() ? row["cells"] : empty;
  for (size_t i : shown_) cells.push_back(i < values.size() ? CellText(values[i]) : "");
  return cells;
}

std::string TableOutput::Line(const std::vector<std::string>& cells) {
  if (widths_.size() < cells.size()) widths_.resize(cells.size(), 0);
  std::string line;
  for (size_t i = 0; i < cells.size(); ++i) {
    line += cells[i];
    if (i + 1 < cells.size()) line += std::string(widths_[i] + kPadding - cells[i].size(), ' ');
  }
  return line + "\n";
}

std::string TableOutput::Format(const json& table, bool header) {
  TakeColumns(table);
  std::vector<std::vector<std::string>> lines;
  if (header && has_columns()) lines.push_back(headers_);
  if (table.contains("rows") && table["rows"].is_array()) {
    for (const auto& row : table["rows"]) lines.push_back(Cells(row));
  }
  for (const auto& cells : lines) {
    if (widths_.size() < cells.size()) widths_.resize(cells.size(), 0);
    for (size_t i = 0; i < cells.size(); ++i) widths_[i] = std::max(widths_[i], cells[i].size());
  }
  std::string out;
  for (const auto& cells : lines) out += Line(cells);
  return out;
}

}  // namespace muster::cli
