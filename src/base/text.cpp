// Text helpers.
#include "base/text.hpp"

namespace weft::base {

std::string c_string_literal(std::string_view text) {
    std::string out = "\"";
    for (char c : text) {
        switch (c) {
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            default:
                // Every other byte outside printable ASCII as a three-digit octal escape: the
                // literal holds no raw control character, and the digits that follow cannot
                // extend the escape.
                if (c >= 0x20 && c < 0x7f) {
                    out += c;
                } else {
                    const auto b = static_cast<unsigned char>(c);
                    out += {'\\', static_cast<char>('0' + (b >> 6)), static_cast<char>('0' + ((b >> 3) & 7)),
                            static_cast<char>('0' + (b & 7))};
                }
        }
    }
    return out + "\"";
}

std::string with_article(std::string_view noun) {
    const bool vowel = !noun.empty() && std::string_view("aeioAEIO").find(noun[0]) != std::string_view::npos;
    return (vowel ? "an " : "a ") + std::string(noun);
}

}  // namespace weft::base
