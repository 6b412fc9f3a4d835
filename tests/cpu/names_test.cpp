// Hostile user strings never reach generated code raw: module names are escaped (control
// characters refused), kernel, function and parameter names must be identifiers, and print
// formats are escaped byte for byte.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>
#include <weft/weft.hpp>

#include "support/errors.hpp"
#include "support/test_device.hpp"

namespace {

using weft::Array;
using weft::test::error_from;

weft::Device dev() {
    return weft::test::test_device();
}

void expect_says(const weft::Error& e, int line, std::initializer_list<const char*> says) {
    EXPECT_EQ(e.line(), static_cast<uint32_t>(line)) << e.what();
    EXPECT_NE(e.file().find("names_test.cpp"), std::string::npos) << e.what();
    for (const char* s : says)
        EXPECT_NE(e.message().find(s), std::string::npos) << "missing \"" << s << "\" in: " << e.what();
}

// Every line of generated source is printable ASCII and none ends in a backslash (which would
// splice the next line into it).
void expect_clean_source(const std::string& source) {
    std::istringstream lines(source);
    std::string line;
    while (std::getline(lines, line)) {
        EXPECT_FALSE(!line.empty() && line.back() == '\\') << "line ends in a backslash: " << line;
        for (char c : line)
            EXPECT_TRUE(c >= 0x20 && c < 0x7f) << "byte " << static_cast<int>(static_cast<unsigned char>(c))
                                               << " in generated line: " << line;
    }
}

// A module name that closes the "// module" comment line and defines a constructor: loading
// the module would run it. The name is refused before anything is generated.
TEST(HostileNames, ModuleNameWithANewlineIsRefusedAndInjectsNothing) {
    unsetenv("WEFT_NAMES_TEST_INJECTED");
    const std::string name =
        "names_inject\n"
        "extern \"C\" int setenv(const char*, const char*, int);\n"
        "__attribute__((constructor)) static void weft_injected() {\n"
        "    setenv(\"WEFT_NAMES_TEST_INJECTED\", \"1\", 1);\n"
        "}\n"
        "//";
    int line = 0;
    const weft::Error e = error_from([&] {
        weft::Module m = (line = __LINE__, weft::Module{name});
        auto k = m.kernel("k", {"out"}, [](Array<int> out) { out[weft::tid()] = 1; });
        auto out = weft::zeros<int>(1, dev());
        weft::launch(k, 1, out);
    });
    EXPECT_EQ(std::getenv("WEFT_NAMES_TEST_INJECTED"), nullptr) << "the module name's code ran";
    expect_says(e, line, {"module name \"names_inject\\nextern", "control character", "printable"});
    EXPECT_EQ(e.message().find('\n'), std::string::npos) << "the message quotes the name raw: " << e.what();
}

TEST(HostileNames, ControlCharactersAndEmptyModuleNamesAreRefused) {
    for (const std::string& name :
         std::vector<std::string>{"a\rb", "tab\there", std::string("nul\0x", 5), "bell\a", "del\x7f", ""}) {
        int line = 0;
        const weft::Error e = error_from([&] { line = __LINE__, weft::Module{name}; });
        expect_says(e, line, {"module name", name.empty() ? "is empty" : "control character"});
    }
}

// A name ending in a backslash would continue the comment onto the next generated line; quotes,
// comment markers and non-ASCII text are harmless text once escaped.
TEST(HostileNames, PrintableModuleNamesAreEscapedInTheSource) {
    for (const std::string& name :
         std::vector<std::string>{"names_backslash\\", "names \"quoted\" */ /* ?\?/", "names_caf\xc3\xa9"}) {
        weft::Module m{name};
        auto k = m.kernel("put", {"out"}, [](Array<int> out) { out[weft::tid()] = weft::tid() + 7; });
        const std::string source = m.generated_source(dev());
        expect_clean_source(source);
        auto out = weft::zeros<int>(3, dev());
        weft::launch(k, 3, out);
        EXPECT_EQ(out.to_vector(), (std::vector<int>{7, 8, 9})) << name;
    }
    weft::Module m{"names_backslash\\"};
    m.kernel("put", {"out"}, [](Array<int> out) { out[0] = 1; });
    EXPECT_EQ(m.generated_source(dev()).rfind("// module \"names_backslash\\\\\"\n", 0), 0u)
        << m.generated_source(dev());
}

TEST(HostileNames, KernelAndFunctionNamesMustBeIdentifiers) {
    weft::Module m{"names_identifiers"};
    for (const std::string& name :
         std::vector<std::string>{"k\nint injected;", "two words", "1st", "a-b", "k\\", ""}) {
        int line = 0;
        weft::Error e = error_from([&] { line = __LINE__, m.kernel(name, [] {}); });
        expect_says(e, line, {"kernel name \"", "is not an identifier", "letters, digits and _"});
        EXPECT_EQ(e.message().find('\n'), std::string::npos) << e.what();
        e = error_from([&] { line = __LINE__, m.func(name, [] {}); });
        expect_says(e, line, {"function name \"", "is not an identifier"});
    }
    // The hostile definitions were not added: the module still compiles and runs.
    auto k = m.kernel("_ok_Name9", {"out"}, [](Array<int> out) { out[0] = 5; });
    auto out = weft::zeros<int>(1, dev());
    weft::launch(k, 1, out);
    EXPECT_EQ(out.to_vector(), std::vector<int>{5});
}

TEST(HostileNames, ParameterNamesMustBeIdentifiersUniqueAndNotTooMany) {
    weft::Module m{"names_params"};
    int line = 0;
    weft::Error e = error_from([&] { line = __LINE__, m.kernel("k", {"out\n//"}, [](Array<int>) {}); });
    expect_says(e, line, {"parameter name \"out\\n//\" of kernel 'k' is not an identifier"});
    e = error_from([&] { line = __LINE__, m.kernel("k", {"a", "a"}, [](Array<int>, Array<int>) {}); });
    expect_says(e, line, {"kernel 'k' has two parameters named 'a'"});
    e = error_from([&] { line = __LINE__, m.kernel("k", {"a", "b"}, [](Array<int>) {}); });
    expect_says(e, line, {"kernel 'k' takes 1 parameters but 2 parameter names were given"});
}

// Every byte of a format reaches printf as written: control characters, quotes, backslashes,
// a would-be end of the string literal, UTF-8.
TEST(HostileNames, PrintFormatsAreEscapedByteForByte) {
    WEFT_SKIP_UNLESS_CPU();
    const std::string format =
        "cr\r|soh\x01|del\x7f|quote\"|backslash\\|end\"); weft_injected(); "
        "printf(\"|trigraph?\?/|caf\xc3\xa9 "
        "%d\n";
    weft::Module m{"names_print"};
    auto k = m.kernel("show", [format] { weft::print(format.c_str(), weft::Int(43)); });
    expect_clean_source(m.generated_source(dev()));
    testing::internal::CaptureStdout();
    weft::launch(k, 1);
    std::fflush(stdout);
    const std::string printed = testing::internal::GetCapturedStdout();
    std::string expected = format;
    expected.replace(expected.find("%d"), 2, "43");
    EXPECT_EQ(printed, expected);
}

}  // namespace
