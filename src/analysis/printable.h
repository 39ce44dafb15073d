// Text from outside pebench (a report's strings, a command-line value in an
// error line) printed as it is could carry terminal escape sequences, or a
// newline that forges a line. printable() writes every control character
// (C0, DEL and the C1 controls U+0080-U+009F) as \xHH; the rest, UTF-8
// included, is kept. TextTable and TextDocument apply it to every line and
// cell they render, and pebench's error lines to their message, so every
// text output is escaped in these three places.
#pragma once

#include <string>

namespace pebench {

std::string printable(const std::string& text);

}  // namespace pebench
