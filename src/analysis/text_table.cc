#include "analysis/text_table.h"

#include <algorithm>

#include "analysis/printable.h"

namespace pebench {
namespace {

// Display width of UTF-8 text: counts code points, not bytes.
size_t width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::string pad(const std::string& s, size_t w, bool right) {
  const size_t fill = w > width(s) ? w - width(s) : 0;
  return right ? std::string(fill, ' ') + s : s + std::string(fill, ' ');
}

}  // namespace

TextTable::TextTable(std::vector<std::string> header) : header_(std::move(header)) {
  for (auto& h : header_) h = printable(h);
}

void TextTable::add_row(std::vector<std::string> row) {
  for (auto& cell : row) cell = printable(cell);
  rows_.push_back(std::move(row));
}

std::string TextTable::text() const {
  std::vector<size_t> w(header_.size(), 0);
  for (size_t c = 0; c < header_.size(); ++c) w[c] = width(header_[c]);
  for (const auto& r : rows_) {
    for (size_t c = 0; c < r.size() && c < w.size(); ++c) w[c] = std::max(w[c], width(r[c]));
  }
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t c = 0; c < w.size(); ++c) {
      const std::string cell = c < cells.size() ? cells[c] : "";
      out += pad(cell, c + 1 == w.size() && !right(c) ? 0 : w[c], right(c));
      if (c + 1 < w.size()) out += "  ";
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(header_);
  std::string rule;
  for (size_t c = 0; c < w.size(); ++c) rule += std::string(w[c], '-') + (c + 1 < w.size() ? "  " : "");
  out += rule + "\n";
  for (const auto& r : rows_) out += line(r);
  return out;
}

std::string TextTable::markdown() const {
  auto escape = [](const std::string& s) {
    std::string out;
    for (char ch : s) {
      if (ch == '|') out += '\\';
      out += ch;
    }
    return out;
  };
  std::string out = "|";
  for (const auto& h : header_) out += " " + escape(h) + " |";
  out += "\n|";
  for (size_t c = 0; c < header_.size(); ++c) out += right(c) ? " ---: |" : " --- |";
  out += "\n";
  for (const auto& r : rows_) {
    out += "|";
    for (size_t c = 0; c < header_.size(); ++c) out += " " + escape(c < r.size() ? r[c] : "") + " |";
    out += "\n";
  }
  return out;
}

}  // namespace pebench
