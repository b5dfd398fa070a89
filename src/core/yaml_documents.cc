#include "core/yaml_documents.h"

namespace muster {
namespace {

bool IsDocumentStart(std::string_view line) {
  return line.substr(0, 3) == "---" && (line.size() == 3 || line[3] == ' ' || line[3] == '\t' ||
                                        line[3] == '\r' || line[3] == '\n');
}

}  // namespace

std::vector<YamlDocumentText> SplitYamlDocuments(std::string_view text) {
  std::vector<YamlDocumentText> docs;
  size_t start = 0, pos = 0;
  int line = 1, start_line = 1;
  // True while the first chunk holds only directives, comments and blank lines:
  // those belong to the document that the first marker starts.
  bool only_directives = true;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    size_t next = eol == std::string_view::npos ? text.size() : eol + 1;
    std::string_view l = text.substr(pos, next - pos);
    if (IsDocumentStart(l)) {
      if (!only_directives) {
        docs.push_back({text.substr(start, pos - start), start_line});
        start = pos;
        start_line = line;
      }
      // From its marker on, the chunk is a document, even an empty one.
      only_directives = false;
    } else {
      size_t first = l.find_first_not_of(" \t\r\n");
      if (first != std::string_view::npos && l[first] != '#' && l[first] != '%') {
        only_directives = false;
      }
    }
    pos = next;
    ++line;
  }
  docs.push_back({text.substr(start), start_line});
  return docs;
}

}  // namespace muster
