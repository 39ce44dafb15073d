// TextDocument: headings, lines, tables and lists, rendered as plain text for
// a terminal or as GitHub-flavoured markdown for an issue or a PR. Lets one
// builder feed both formats so they never say different things.
#pragma once

#include <string>
#include <vector>

#include "analysis/text_table.h"

namespace pebench {

class TextDocument {
 public:
  void heading(std::string text) { blocks_.push_back({Kind::kHeading, {std::move(text)}, {}}); }
  // Lines of prose (one paragraph).
  void paragraph(std::vector<std::string> lines) { blocks_.push_back({Kind::kParagraph, std::move(lines), {}}); }
  void list(std::vector<std::string> items) { blocks_.push_back({Kind::kList, std::move(items), {}}); }
  void table(TextTable table) { blocks_.push_back({Kind::kTable, {}, {std::move(table)}}); }

  std::string text() const;
  std::string markdown() const;

 private:
  enum class Kind { kHeading, kParagraph, kList, kTable };
  struct Block {
    Kind kind;
    std::vector<std::string> lines;
    std::vector<TextTable> table;  // zero or one
  };
  std::vector<Block> blocks_;
};

}  // namespace pebench
