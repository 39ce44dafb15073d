// TextTable: rows of cells rendered as an aligned plain-text table or as a
// GitHub-flavoured markdown table. Numbers-like columns are right-aligned.
#pragma once

#include <string>
#include <vector>

namespace pebench {

class TextTable {
 public:
  // Cells are kept printable (analysis/printable.h): no control character
  // from a report's strings reaches a terminal.
  explicit TextTable(std::vector<std::string> header);
  void add_row(std::vector<std::string> row);
  // Column `c` right-aligned (default: left).
  void align_right(size_t c) {
    if (right_.size() <= c) right_.resize(c + 1, false);
    right_[c] = true;
  }
  size_t rows() const { return rows_.size(); }
  std::string text() const;
  std::string markdown() const;

 private:
  bool right(size_t c) const { return c < right_.size() && right_[c]; }
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<bool> right_;
};

}  // namespace pebench
