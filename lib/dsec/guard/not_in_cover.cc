// A not_in condition as masked_eq rules. libseccomp compares each argument at most once
// per rule and rules are or'ed, so "(arg & mask) is none of these values" has to become
// a union of cubes (some bits fixed, the rest free) that avoids every listed value.
#include <algorithm>

#include "dsec/guard/seccomp.h"

namespace dsec::guard {

namespace {

using Cube = std::pair<uint64_t, uint64_t>;  // (fixed bits, their values)

bool touches(const Cube& cube, const std::vector<uint64_t>& points) {
    return std::any_of(points.begin(), points.end(),
                       [&](uint64_t p) { return (p & cube.first) == cube.second; });
}

// The complement of `points` within the cube (fixed, value), splitting on the bits of
// `mask` from `bit` down: a binary trie of the points, whose empty branches are the cubes.
void complement(uint64_t mask, Cube region, const std::vector<uint64_t>& points, int bit, std::vector<Cube>& out) {
    if (points.empty()) {
        out.push_back(region);
        return;
    }
    while (bit >= 0 && !((mask >> bit) & 1)) bit--;
    if (bit < 0) return;  // the region is one of the points
    uint64_t b = uint64_t(1) << bit;
    std::vector<uint64_t> zeros, ones;
    for (uint64_t p : points) (p & b ? ones : zeros).push_back(p);
    complement(mask, {region.first | b, region.second}, zeros, bit - 1, out);
    complement(mask, {region.first | b, region.second | b}, ones, bit - 1, out);
}

// Frees each fixed bit (lowest first) that can go without touching a point: the trie's
// long prefixes shrink to the one or two bits that really separate a cube from the points.
Cube expand(Cube cube, const std::vector<uint64_t>& points) {
    for (int bit = 0; bit < 64; bit++) {
        uint64_t b = uint64_t(1) << bit;
        if (!(cube.first & b)) continue;
        Cube wider{cube.first & ~b, cube.second & ~b};
        if (!touches(wider, points)) cube = wider;
    }
    return cube;
}

bool contains(const Cube& outer, const Cube& inner) {
    return (outer.first & ~inner.first) == 0 && (inner.second & outer.first) == outer.second;
}

}  // namespace

std::vector<std::pair<uint64_t, uint64_t>> not_in_cover(uint64_t mask, std::span<const uint64_t> values) {
    std::vector<uint64_t> points;
    for (uint64_t v : values) points.push_back(v & mask);
    std::sort(points.begin(), points.end());
    points.erase(std::unique(points.begin(), points.end()), points.end());
    std::vector<Cube> cubes;
    complement(mask, {0, 0}, points, 63, cubes);
    for (auto& c : cubes) c = expand(c, points);
    std::sort(cubes.begin(), cubes.end());
    cubes.erase(std::unique(cubes.begin(), cubes.end()), cubes.end());
    std::vector<Cube> kept;
    for (size_t i = 0; i < cubes.size(); i++) {
        bool inside = false;
        for (size_t j = 0; j < cubes.size() && !inside; j++)
            inside = j != i && contains(cubes[j], cubes[i]);
        if (!inside) kept.push_back(cubes[i]);
    }
    return kept;
}

}  // namespace dsec::guard
