// The documents of a YAML stream, split at their "---" markers before any parser
// sees them. yaml-cpp 0.7's LoadAll loops for ever, allocating, on a document that
// starts with a token no node can start with (a stray top-level ",", "}" or "]":
// one 1-byte request body took a server's memory); each split document is parsed
// on its own with YAML::Load instead, which stops. Splitting also keeps a syntax
// error in one document from hiding the others.
#pragma once

#include <string_view>
#include <vector>

namespace muster {

struct YamlDocumentText {
  std::string_view text;
  int first_line = 1;  // 1-based line of the document's first line in the stream
};

// A line "---" (alone or followed by whitespace) at column 0 starts a document, as
// the YAML spec defines it (it also ends block and multi-line scalars). Directive
// lines ("%YAML 1.2") and comments before the first marker stay with the document
// that it starts. At least one document (maybe empty) is returned.
std::vector<YamlDocumentText> SplitYamlDocuments(std::string_view text);

}  // namespace muster
