// Batches: a small pool of threads over the items, each result emitted when it is ready;
// the ids a batch works on.
#include <atomic>
#include <thread>

#include "commands.h"

namespace dsec::run_tool {

size_t for_each_parallel(size_t count, size_t parallel, const std::function<Status(size_t)>& work) {
    std::atomic<size_t> next{0}, failed{0};
    auto worker = [&] {
        for (size_t i; !cli::interrupted() && (i = next++) < count;) {
            if (auto r = work(i); !r) {
                cli::report(r.error());
                failed++;
            }
        }
    };
    size_t n = std::min(parallel, count);
    if (n <= 1) {
        worker();
        return failed;
    }
    std::vector<std::thread> threads;
    for (size_t t = 0; t < n; t++) threads.emplace_back(worker);
    for (auto& t : threads) t.join();
    return failed;
}

}  // namespace dsec::run_tool

namespace dsec::run_tool {

Result<std::vector<std::string>> ids_or_records(const std::vector<std::string>& ids) {
    if (!ids.empty()) return ids;
    auto records = read_records();
    if (!records) return fail(records.error());
    std::vector<std::string> out;
    for (auto& r : *records) {
        auto id = jsonl::get_string(r, "id");
        if (!id) return fail(id.error());
        out.push_back(*id);
    }
    return out;
}

}  // namespace dsec::run_tool
