// The parsers of option values: sizes, CPU counts, durations, counts, users, K=V
// environment entries and k=v labels. The first byte picks the parser; the rest is the
// text. What parses must also read back the same after formatting (durations).
#include <cstdlib>

#include "dsec/sys/parse.h"

using namespace dsec;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size == 0) return 0;
    std::string text(reinterpret_cast<const char*>(data) + 1, size - 1);
    switch (data[0] % 7) {
    case 0: (void)parse::parse_size(text); break;
    case 1:
        if (auto c = parse::parse_cpus(text); c && !(*c > 0 && *c <= 4096)) std::abort();
        break;
    case 2:
        if (auto ms = parse::parse_duration_ms(text)) {
            auto again = parse::parse_duration_ms(parse::format_duration_ms(*ms));
            if (!again || *again != *ms) std::abort();
        }
        break;
    case 3:
        if (auto n = parse::parse_count(text, "--count"); n && *n == 0) std::abort();
        break;
    case 4: (void)parse::parse_user(text); break;
    default: {
        // Entries separated by NUL, as they arrive from argv.
        std::vector<std::string> items;
        size_t start = 0;
        for (size_t i = 0; i <= text.size(); i++)
            if (i == text.size() || text[i] == '\0') {
                items.push_back(text.substr(start, i - start));
                start = i + 1;
            }
        if (data[0] % 7 == 5) (void)parse::check_env(items, "--env");
        else (void)parse::parse_labels(items);
    }
    }
    return 0;
}
