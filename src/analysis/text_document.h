// TextDocument: headings, lines, tables and lists, rendered as plain text for
// a terminal or as GitHub-flavoured markdown for an issue or a PR. Lets one
// builder feed both formats so they never say different things.
#pragma once

#include <string>
#include <vector>

#include "analysis/printable.h"
#include "analysis/text_table.h"

namespace pebench {

class TextDocument {
 public:
  // Every line is kept printable (analysis/printable.h), as TextTable's cells are.
  void heading(std::string text) { blocks_.push_back({Kind::kHeading, {printable(text)}, {}}); }
  // Lines of prose (one paragraph).
  void paragraph(std::vector<std::string> lines) { blocks_.push_back({Kind::kParagraph, printable_lines(lines), {}}); }
  void list(std::vector<std::string> items) { blocks_.push_back({Kind::kList, printable_lines(items), {}}); }
  void table(TextTable table) { blocks_.push_back({Kind::kTable, {}, {std::move(table)}}); }

  std::string text() const;
  std::string markdown() const;

 private:
  static std::vector<std::string> printable_lines(std::vector<std::string> lines) {
    for (auto& l : lines) l = printable(l);
    return lines;
  }
  enum class Kind { kHeading, kParagraph, kList, kTable };
  struct Block {
    Kind kind;
    std::vector<std::string> lines;
    std::vector<TextTable> table;  // zero or one
  };
  std::vector<Block> blocks_;
};

}  // namespace pebench
