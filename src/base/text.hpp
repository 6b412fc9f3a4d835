// Small text helpers shared by the IR printer and the code generator.
#pragma once

#include <string>
#include <string_view>

namespace weft::base {

// `text` as a double-quoted C string literal: newlines, tabs, quotes and backslashes escaped, and
// every other byte outside printable ASCII as an octal escape, so the literal is one line of
// printable ASCII whatever `text` holds.
std::string c_string_literal(std::string_view text);

// `noun` after its indefinite article, for messages: "an int32", "a float32", "a uint32" (said
// "you-int"), "a 1-D array".
std::string with_article(std::string_view noun);

}  // namespace weft::base
