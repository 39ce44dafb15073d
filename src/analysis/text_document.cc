#include "analysis/text_document.h"

namespace pebench {

std::string TextDocument::text() const {
  std::string out;
  for (const auto& b : blocks_) {
    if (!out.empty()) out += "\n";
    switch (b.kind) {
      case Kind::kHeading:
        out += b.lines[0] + "\n";
        break;
      case Kind::kParagraph:
        for (const auto& l : b.lines) out += l + "\n";
        break;
      case Kind::kList:
        for (const auto& l : b.lines) out += "  " + l + "\n";
        break;
      case Kind::kTable:
        out += b.table[0].text();
        break;
    }
  }
  return out;
}

std::string TextDocument::markdown() const {
  std::string out;
  for (const auto& b : blocks_) {
    if (!out.empty()) out += "\n";
    switch (b.kind) {
      case Kind::kHeading:
        out += "#### " + b.lines[0] + "\n";
        break;
      case Kind::kParagraph:
        // Two trailing spaces: a line break inside the paragraph.
        for (size_t i = 0; i < b.lines.size(); ++i) out += b.lines[i] + (i + 1 < b.lines.size() ? "  \n" : "\n");
        break;
      case Kind::kList:
        for (const auto& l : b.lines) out += "- " + l + "\n";
        break;
      case Kind::kTable:
        out += b.table[0].markdown();
        break;
    }
  }
  return out;
}

}  // namespace pebench
