// The JSON Lines reader and what reads its records: a rootfs record (dsec-run create),
// layer metadata (the store's NAME.json, dsec-mount's input), an error record handed
// between processes, copy statistics, and a sandbox state file.
#include <cstdio>

#include "dsec/copy/sink.h"
#include "dsec/json/jsonl.h"
#include "dsec/layer/store.h"
#include "dsec/mount/rootfs.h"
#include "dsec/sandbox/state.h"
#include "fuzz_util.h"

using namespace dsec;

namespace {
void read_one(const nlohmann::json& rec) {
    // Every record reader, whatever the type says: a hostile pipe can send anything anywhere.
    (void)jsonl::type_of(rec);
    (void)jsonl::get_string(rec, "id");
    if (auto r = mount::Rootfs::from_record(rec)) (void)r->to_record();
    if (auto l = layer::Layer::from_json(rec)) (void)l->to_record();
    Error e = Error::from_fields(rec);
    (void)e.describe();
    (void)e.to_record().dump();
    copy::Stats s = copy::Stats::from_record(rec);
    nlohmann::json out;
    s.annotate(out);
    if (auto st = sandbox::State::from_record(rec)) (void)sandbox::public_record(*st);
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    Fd in = fuzz::memfd_of(data, size);
    std::FILE* f = ::fdopen(in.release(), "r");
    if (!f) std::abort();
    static std::FILE* sink = std::fopen("/dev/null", "w");
    jsonl::Reader reader(f, ::fileno(sink));
    for (;;) {
        auto rec = reader.next();
        if (!rec || !*rec) break;
        read_one(**rec);
    }
    std::fclose(f);
    return 0;
}
